/**
 * What the HTML timeline shows, pure: the archive's entries and the live history in, a page model out. Every
 * string stays as stored; `timeline-page.ts` escapes it and the page only ever sets it as text.
 */
import { byTime } from '../../compaction/view/clip-archive.js';
import type { ArchiveEntry, ConversationMessage } from '../../conversation/types.js';
import { buildTimeAxis, type AxisTick } from './time-axis.js';

/**
 * A message longer than this is cut in the page (the rest counted in `cut`): one huge tool output must not make
 * the file unusable. `memfold search --kind transcript` or memory_read's `label` read it whole.
 */
export const MAX_MESSAGE_CHARS = 20_000;

export interface TimelineMessage {
  seq: number;
  time: string;
  role: string;
  name?: string;
  text: string;
  /** Characters left out of `text` (over `MAX_MESSAGE_CHARS`). */
  cut?: number;
  /** The calls an assistant message made, as `name(arguments)`. */
  toolCalls?: string[];
}

export interface TimelineBatch {
  label: string;
  depth: number;
  start: string;
  end: string;
  /** Messages under a depth-0 batch, batches under a higher one. */
  count: number;
  /** Where the box starts and ends on the axis, 0 to 1. */
  x0: number;
  x1: number;
  sessions: string[];
  /** The stored summary: its header line, then the text. */
  summary: string;
  /** The batch of the next depth that covers this one. */
  parent?: string;
  /** Labels of the batches this one covers (depth > 0), in time order. */
  children: string[];
  /** Depth 0: the archived messages it summarizes, verbatim, in order. */
  transcript: TimelineMessage[];
}

/**
 * A run of live messages with consecutive seqs. The live history is usually two runs, the opening turns a
 * compaction keeps and the recent tail, with the archived messages between them: one box each, so the lane does
 * not claim the archived stretch.
 */
export interface LiveRun {
  start: string;
  end: string;
  x0: number;
  x1: number;
  firstSeq: number;
  lastSeq: number;
  messages: number;
}

/** The live history (system prompt and clip-archive left out), drawn as a lane of its own. */
export interface TimelineLive {
  messages: number;
  runs: LiveRun[];
  /** Tool outputs cleared from live rows (tier 2), verbatim: no transcript holds them yet. */
  clearedOutputs: TimelineMessage[];
}

export interface TimelineModel {
  conversationId: string;
  generatedAt: string;
  /** The depths that hold batches, deepest first: one lane each, top to bottom. */
  depths: number[];
  /** Every summary batch, in time order. */
  batches: TimelineBatch[];
  live?: TimelineLive;
  ticks: AxisTick[];
  breaks: number[];
}

export interface TimelineInput {
  conversationId: string;
  /** ISO time the page was made. */
  generatedAt: string;
  summaries: readonly ArchiveEntry[];
  transcripts: readonly ArchiveEntry[];
  toolOutputs: readonly ArchiveEntry[];
  /** The live rows, as `memfold.history` returns them. */
  live: readonly ConversationMessage[];
}

export function buildTimelineModel(input: TimelineInput): TimelineModel {
  const summaries = [...input.summaries].sort(byTime);
  const labels = new Set(summaries.map((b) => b.label));
  const liveBody = input.live.filter((m) => m.kind !== 'clip_archive' && m.role !== 'system');
  // A tool output whose parent is a transcript segment is superseded: the segment holds the same message.
  const clearedOutputs = input.toolOutputs.filter((t) => t.parentLabel === undefined).flatMap((t) => t.messages ?? []);
  const segmentsOf = groupBy(input.transcripts, (t) => t.parentLabel);
  const coveredBy = groupBy(summaries, (b) => b.parentLabel);

  const axis = buildTimeAxis([
    ...summaries.flatMap((b) => [b.start, b.end]),
    ...input.transcripts.flatMap((t) => (t.messages ?? []).map((m) => m.createdAt)),
    ...liveBody.map((m) => m.createdAt),
  ]);
  const batches = summaries.map((b): TimelineBatch => {
    // sourceIds name the children; parentLabel marks agree, and either alone is enough to list a child.
    const children = new Set([...(b.depth > 0 ? b.sourceIds.filter((id) => labels.has(id)) : []), ...(coveredBy.get(b.label) ?? []).map((c) => c.label)]);
    const segments = b.depth === 0 ? [...(segmentsOf.get(b.label) ?? [])].sort(byTime) : [];
    return {
      label: b.label,
      depth: b.depth,
      start: b.start,
      end: b.end,
      count: b.count,
      x0: axis.position(b.start),
      x1: axis.position(b.end),
      sessions: b.sessions ?? [],
      summary: b.content,
      ...(b.parentLabel !== undefined && labels.has(b.parentLabel) ? { parent: b.parentLabel } : {}),
      children: summaries.filter((c) => children.has(c.label)).map((c) => c.label),
      transcript: segments.flatMap((s) => s.messages ?? []).map(timelineMessage),
    };
  });
  return {
    conversationId: input.conversationId,
    generatedAt: input.generatedAt,
    depths: [...new Set(summaries.map((b) => b.depth))].sort((a, b) => b - a),
    batches,
    ...(liveBody.length > 0
      ? { live: { messages: liveBody.length, runs: liveRuns(liveBody, axis.position), clearedOutputs: clearedOutputs.map(timelineMessage) } }
      : {}),
    ticks: axis.ticks,
    breaks: axis.breaks,
  };
}

function liveRuns(messages: readonly ConversationMessage[], position: (iso: string) => number): LiveRun[] {
  const runs: ConversationMessage[][] = [];
  for (const m of messages) {
    const run = runs.at(-1);
    if (run && m.seq === run.at(-1)!.seq + 1) run.push(m);
    else runs.push([m]);
  }
  return runs.map((run) => {
    const [first, last] = [run[0]!, run.at(-1)!];
    const [start, end] = [first.createdAt, last.createdAt];
    return { start, end, x0: position(start), x1: position(end), firstSeq: first.seq, lastSeq: last.seq, messages: run.length };
  });
}

function timelineMessage(m: ConversationMessage): TimelineMessage {
  const cut = Math.max(0, m.content.length - MAX_MESSAGE_CHARS);
  return {
    seq: m.seq,
    time: m.createdAt,
    role: m.role,
    ...(m.name !== undefined ? { name: m.name } : {}),
    text: cut > 0 ? m.content.slice(0, MAX_MESSAGE_CHARS) : m.content,
    ...(cut > 0 ? { cut } : {}),
    ...(m.toolCalls && m.toolCalls.length > 0 ? { toolCalls: m.toolCalls.map((c) => `${c.function.name}(${c.function.arguments})`) } : {}),
  };
}

function groupBy<T>(items: readonly T[], key: (item: T) => string | undefined): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    if (k === undefined) continue;
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
