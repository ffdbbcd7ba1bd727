/**
 * Archive labels, pure. What the model reads and passes back to memory_read, so they are short:
 * - summary batch: `d{depth}-{end, to the minute}-{hash}`, e.g. `d0-2023-05-08T13:56-3fa2c1`;
 * - transcript segment: `t-{start, to the minute}-{hash}`, e.g. `t-2023-05-08T13:41-9b0e47`;
 * - cleared tool output: `o-{its time, to the minute}-{hash}`, e.g. `o-2023-05-08T13:42-5c19d0`.
 * The archive scopes every row by namespace and conversation, so a label need not name either.
 * `hash` is the start of sha256(kind, depth, source ids): deterministic (a retried write of the same
 * operation replaces its own row) and distinct for distinct sources. Message ids are never reused in a
 * conversation and each is archived once, so sources never repeat; a label already taken (a hash prefix
 * collision) gets a longer hash, and the archive refuses to replace a row of another operation anyway.
 * Labels written before this scheme (`compaction-batch-{conversationId}-{ISO end}[~suffix]`,
 * `compaction-transcript-{conversationId}-{firstMessageId}`) still parse.
 */
import { createHash } from 'node:crypto';
import type { ArchiveKind } from '../../conversation/types.js';

/** Hex digits of the hash in a new label; a taken label tries the longer ones in turn. */
const HASH_LENGTHS = [6, 12, 24, 64] as const;

const MINUTE = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}';
const NEW_LABEL = new RegExp(`^(?:d(\\d{1,4})|(t|o))-(${MINUTE})-([0-9a-f]{6,64})$`);
const ISO = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d{3})?Z';
const OLD_BATCH_LABEL = new RegExp(`^compaction-batch-(.*)-(${ISO})(?:~([^~]+))?$`, 's');
const OLD_TRANSCRIPT_LABEL = /^compaction-transcript-(.*)$/s;

export interface LabelSource {
  kind: ArchiveKind;
  /** 0 for transcripts and tool outputs. */
  depth: number;
  /** ISO time the label shows: a batch's end, a transcript segment's start, a tool output's own time. */
  time: string;
  /** Message ids (depth 0, transcripts) or child labels (depth > 0). */
  sourceIds: readonly string[];
}

function sourceHash(source: LabelSource): string {
  return createHash('sha256')
    .update(JSON.stringify([source.kind, source.depth, source.sourceIds]))
    .digest('hex');
}

function prefix(source: LabelSource): string {
  const minute = source.time.slice(0, 16);
  if (source.kind === 'summary') return `d${source.depth}-${minute}`;
  return source.kind === 'tool_output' ? `o-${minute}` : `t-${minute}`;
}

/** The label with the shortest hash: what a source gets unless that label is taken. */
export function baseLabel(source: LabelSource): string {
  return `${prefix(source)}-${sourceHash(source).slice(0, HASH_LENGTHS[0])}`;
}

/**
 * The first of the source's labels (hash of 6, 12, 24, then 64 hex digits) not in `taken`. Distinct
 * sources of one conversation collide on all four only if sha256 does.
 */
export function uniqueLabel(source: LabelSource, taken: ReadonlySet<string>): string {
  const hash = sourceHash(source);
  const head = prefix(source);
  for (const length of HASH_LENGTHS) {
    const label = `${head}-${hash.slice(0, length)}`;
    if (!taken.has(label)) return label;
  }
  throw new Error(`every label of ${head} is taken: the same sources were archived twice`);
}

export interface ParsedLabel {
  kind: ArchiveKind;
  /** Summary batches only. */
  depth?: number;
  /** New labels: the minute shown (`2023-05-08T13:56`); old batch labels: the full end time. */
  time?: string;
  hash?: string;
  /** Old labels only: the conversation id they carried. */
  conversationId?: string;
  /** Old batch labels: the uniqueness suffix, when there was one. */
  suffix?: string;
}

/** The fields a label was made from, for both forms, or undefined for anything else. */
export function parseLabel(label: string): ParsedLabel | undefined {
  const fresh = NEW_LABEL.exec(label);
  if (fresh) {
    const [, depth, letter, time, hash] = fresh;
    if (depth !== undefined) return { kind: 'summary', depth: Number(depth), time: time!, hash: hash! };
    return { kind: letter === 'o' ? 'tool_output' : 'transcript', time: time!, hash: hash! };
  }
  const batch = OLD_BATCH_LABEL.exec(label);
  if (batch) return { kind: 'summary', conversationId: batch[1]!, time: batch[2]!, ...(batch[3] !== undefined ? { suffix: batch[3] } : {}) };
  // The old transcript form cannot be split back into conversation and message id (both may hold dashes).
  if (OLD_TRANSCRIPT_LABEL.test(label)) return { kind: 'transcript' };
  return undefined;
}
