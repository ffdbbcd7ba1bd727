/**
 * The timeline's horizontal axis, pure: times in, positions from 0 to 1 out. Busy stretches (times closer than
 * `quietMs` to each other) keep their proportions; every quiet gap between them gets the same short width. A
 * conversation held in sessions days apart would otherwise squeeze each session's minutes into a sliver.
 */

export interface TimeAxisOptions {
  /** Times further apart than this start a new stretch. Default 30 minutes, the default session gap. */
  quietMs?: number;
  /** The width a quiet gap is drawn with, in the axis' milliseconds. Default `quietMs`. */
  gapWidthMs?: number;
  /** The width of a stretch shorter than this (one message, say). Default 5 minutes. */
  minStretchMs?: number;
}

/** A label on the axis, at the start of a stretch. */
export interface AxisTick {
  /** Position, 0 to 1. */
  at: number;
  /** ISO time of the stretch's start. */
  time: string;
}

export interface TimeAxis {
  /** Where an ISO time falls, 0 to 1 (clamped to the first and last time given). */
  position(iso: string): number;
  /** One tick per stretch, in order. */
  ticks: AxisTick[];
  /** Positions of the shortened gaps, each the middle of one. */
  breaks: number[];
}

const MINUTE = 60_000;

interface Piece {
  fromMs: number;
  toMs: number;
  width: number;
}

export function buildTimeAxis(times: readonly string[], options: TimeAxisOptions = {}): TimeAxis {
  const quietMs = options.quietMs ?? 30 * MINUTE;
  const gapWidthMs = options.gapWidthMs ?? quietMs;
  const minStretchMs = options.minStretchMs ?? 5 * MINUTE;
  const sorted = [...new Set(times.map((t) => Date.parse(t)).filter(Number.isFinite))].sort((a, b) => a - b);
  if (sorted.length === 0) return { position: () => 0, ticks: [], breaks: [] };

  // Pieces alternate, stretch then gap (even indices are stretches); each has its drawn width.
  const pieces: Piece[] = [];
  let start = sorted[0]!;
  let previous = start;
  const closeStretch = (end: number) => {
    pieces.push({ fromMs: start, toMs: end, width: Math.max(end - start, minStretchMs) });
  };
  for (const t of sorted.slice(1)) {
    if (t - previous > quietMs) {
      closeStretch(previous);
      pieces.push({ fromMs: previous, toMs: t, width: gapWidthMs });
      start = t;
    }
    previous = t;
  }
  closeStretch(previous);

  const total = pieces.reduce((sum, p) => sum + p.width, 0);
  const offsets: number[] = [];
  pieces.reduce((offset, p) => (offsets.push(offset), offset + p.width), 0);
  const position = (iso: string): number => {
    const ms = Date.parse(iso);
    if (!Number.isFinite(ms) || ms <= sorted[0]!) return 0;
    const k = pieces.findIndex((p) => ms <= p.toMs);
    if (k < 0) return 1;
    const piece = pieces[k]!;
    const within = piece.toMs > piece.fromMs ? (ms - piece.fromMs) / (piece.toMs - piece.fromMs) : 0;
    return (offsets[k]! + within * piece.width) / total;
  };
  return {
    position,
    ticks: pieces.flatMap((p, k) => (k % 2 === 0 ? [{ at: offsets[k]! / total, time: new Date(p.fromMs).toISOString() }] : [])),
    breaks: pieces.flatMap((p, k) => (k % 2 === 1 ? [(offsets[k]! + p.width / 2) / total] : [])),
  };
}
