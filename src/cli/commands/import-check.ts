/**
 * The first pass of `memfold import`: reads the whole file and applies every rule `append` would,
 * before anything is written, so a failing file writes nothing. Per line: the per-message rules
 * (`import-jsonl.ts`). Per conversation: ids unique in the file and not the clip-archive's
 * (`checkBatchIds`); every tool result answering a call of the assistant message opening its group
 * (`leadingToolResults`, and for the file's first results of a conversation the last stored message
 * that is not a tool result, read with `history`); and ids the conversation already used
 * (`persistence.findUsedIds`): the same message (same digest) is skipped as already imported, another
 * message under that id refuses the file.
 *
 * Without a store (`memfold import` runs it so before opening one) it checks what the file alone decides: every
 * line, ids within the file and pairing within the file; a new home is then never made for a file that fails.
 *
 * Memory: per conversation the ids seen (for duplicates) and at most CHUNK lines waiting for the
 * store's answer; message texts are not kept (the write pass reads the file again).
 */
import { createHash, type Hash } from 'node:crypto';
import { messageDigest } from '../../conversation/message-digest.js';
import { InvalidArgumentError } from '../../errors.js';
import { streamJsonlObjects } from '../../eval/datasets/jsonl-dataset.js';
import type { Memfold } from '../../memfold.js';
import { checkBatchIds, leadingToolResults } from '../../persistence/append-batch-checks.js';
import { clipArchiveId } from '../../persistence/clip-archive-id.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../persistence/message-size-limit.js';
import { requireConversationId } from '../../conversation/conversation-id.js';
import type { NormalizedMessage } from '../../persistence/normalize-new-messages.js';
import { atLine, conversationOf, importLineReading, parseImportLine, type ImportedLine } from './import-jsonl.js';

/** Lines of one conversation checked against the store at once (one findUsedIds query). */
const CHUNK = 1_000;

/** What the first pass needs of the library. */
export type ImportStore = Pick<Memfold, 'persistence' | 'history'> & { config: Pick<Memfold['config'], 'maxMessageBytes'> };

/** Line numbers, one bit each: the lines the write pass leaves out. */
export class LineSet {
  private bits = new Uint8Array(1024);
  size = 0;
  add(line: number): void {
    if (line >> 3 >= this.bits.length) {
      const grown = new Uint8Array(Math.max(this.bits.length * 2, (line >> 3) + 1));
      grown.set(this.bits);
      this.bits = grown;
    }
    if (!this.has(line)) this.size++;
    this.bits[line >> 3]! |= 1 << (line & 7);
  }
  has(line: number): boolean {
    return ((this.bits[line >> 3] ?? 0) & (1 << (line & 7))) !== 0;
  }
}

export interface ConversationCounts {
  /** Messages the write pass appends. */
  append: number;
  /** Lines already imported (same id, same message), left out. */
  skip: number;
}

export interface ImportPlan {
  /** By conversation, in order of first appearance in the file. */
  conversations: Map<string, ConversationCounts>;
  /** Lines already imported. */
  skipped: LineSet;
  /** Message lines in the file. */
  lines: number;
  /** sha256 of the message lines: the write pass refuses a file that changed since. */
  fingerprint: string;
}

/** A checked line waiting for the store's answer: only what the id and pairing checks read. */
interface Pending {
  lineNumber: number;
  /** The row without its text. */
  row: NormalizedMessage;
  digest: string;
  toolCallIdField: string;
}

interface ConversationState {
  id: string;
  reservedId: string;
  /** Every id of the file's lines of this conversation, with its line. */
  ids: Map<string, number>;
  pending: Pending[];
  /** The last kept line that is not a tool result: it opens the group the next kept lines continue. */
  opener?: NormalizedMessage;
  /** Call ids of the last stored message that is not a tool result, read once when first needed. */
  storedCalls?: Set<string>;
  counts: ConversationCounts;
}

/** The fingerprint both passes compute over the message lines. */
export function lineFingerprint(): { add(lineNumber: number, text: string): void; digest(): string } {
  const hash: Hash = createHash('sha256');
  return {
    add: (lineNumber, text) => void hash.update(`${lineNumber}\n${text}\n`),
    digest: () => hash.digest('hex'),
  };
}

export interface CheckOptions {
  /** `--conversation`: the conversation of lines that name none. */
  fallback?: string;
  onBytes?: (bytes: number) => void;
  /** The per-message size limit when no store is given (a store's own `config.maxMessageBytes` wins); default DEFAULT_MAX_MESSAGE_BYTES. */
  maxMessageBytes?: number;
}

/**
 * The plan of the write pass. `store` undefined: the file's own rules only, as if nothing were stored (the counts
 * then say so); the store-dependent rules are left to the pass with the store.
 */
export async function checkImportFile(store: ImportStore | undefined, file: string, options: CheckOptions = {}): Promise<ImportPlan> {
  if (options.fallback !== undefined) requireConversationId(options.fallback, '--conversation');
  const maxMessageBytes = store?.config.maxMessageBytes ?? options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const conversations = new Map<string, ConversationState>();
  const skipped = new LineSet();
  const fingerprint = lineFingerprint();
  let lines = 0;
  const reading = importLineReading(maxMessageBytes);
  for await (const object of streamJsonlObjects(file, { ...reading, ...(options.onBytes ? { onBytes: options.onBytes } : {}) })) {
    lines++;
    fingerprint.add(object.lineNumber, object.text);
    const line = parseImportLine(object, maxMessageBytes);
    const conversationId = conversationOf(line, options.fallback);
    let state = conversations.get(conversationId);
    if (!state) {
      state = { id: conversationId, reservedId: clipArchiveId(conversationId), ids: new Map(), pending: [], counts: { append: 0, skip: 0 } };
      conversations.set(conversationId, state);
    }
    checkIdInFile(state, line);
    state.pending.push({ lineNumber: line.lineNumber, row: withoutText(line.row), digest: messageDigest(line.message), toolCallIdField: line.toolCallIdField });
    if (state.pending.length >= CHUNK) await settle(store, state, skipped);
  }
  for (const state of conversations.values()) await settle(store, state, skipped);
  return {
    conversations: new Map([...conversations].map(([id, state]) => [id, state.counts])),
    skipped,
    lines,
    fingerprint: fingerprint.digest(),
  };
}

function withoutText(row: NormalizedMessage): NormalizedMessage {
  return { ...row, content: { ...row.content, text: '' } };
}

/** Ids are unique within a conversation's lines, and never the clip-archive's id. */
function checkIdInFile(state: ConversationState, line: ImportedLine): void {
  const where = `line ${line.lineNumber}`;
  try {
    checkBatchIds([line.row], state.reservedId);
  } catch (error) {
    throw atLine(error, where, {});
  }
  const first = state.ids.get(line.row.id);
  if (first !== undefined) {
    throw new InvalidArgumentError(`${where}.id`, `duplicates line ${first}.id (${JSON.stringify(line.row.id)}) in conversation ${JSON.stringify(state.id)}`);
  }
  state.ids.set(line.row.id, line.lineNumber);
}

/** Asks the store (if any) about the pending lines' ids, then checks the pairing of those that will be appended. */
async function settle(store: ImportStore | undefined, state: ConversationState, skipped: LineSet): Promise<void> {
  const pending = state.pending;
  if (pending.length === 0) return;
  state.pending = [];
  const ids = pending.map((p) => p.row.id);
  const used = new Map((store ? await store.persistence.findUsedIds(state.id, ids) : []).map((u) => [u.id, u]));
  const kept: Pending[] = [];
  for (const line of pending) {
    const stored = used.get(line.row.id);
    if (stored === undefined) kept.push(line);
    else if (stored.digest === line.digest) {
      skipped.add(line.lineNumber);
      state.counts.skip++;
    } else {
      const why = stored.digest === undefined ? 'stored before message digests were kept, so it cannot be told to be this message' : 'by another message';
      throw new InvalidArgumentError(
        `line ${line.lineNumber}.id`,
        `${JSON.stringify(line.row.id)} is already used in conversation ${JSON.stringify(state.id)} ${why} (ids are never reused, also after their message was archived)`,
      );
    }
  }
  await checkPairing(store, state, kept);
  state.counts.append += kept.length;
}

/**
 * The lines to append, in order, continue the group of the last kept line before them, or for the
 * conversation's first kept lines, the group of the last stored message: as `append` will see them.
 */
async function checkPairing(store: ImportStore | undefined, state: ConversationState, kept: readonly Pending[]): Promise<void> {
  if (kept.length === 0) return;
  const rows = state.opener ? [state.opener, ...kept.map((k) => k.row)] : kept.map((k) => k.row);
  const offset = state.opener ? 1 : 0;
  const lineAt = (index: number) => kept[index - offset]!;
  let leading: Array<{ index: number; toolCallId: string }>;
  try {
    leading = leadingToolResults(rows);
  } catch (error) {
    const index = Number(/^messages\[(\d+)\]/.exec((error as InvalidArgumentError).field ?? '')?.[1] ?? NaN);
    if (Number.isNaN(index)) throw error;
    throw atLine(error, `line ${lineAt(index).lineNumber}`, { toolCallId: lineAt(index).toolCallIdField }, index);
  }
  // Results that answer a stored call can only be checked against the store.
  if (leading.length > 0 && store) {
    state.storedCalls ??= await storedOpenerCalls(store, state.id);
    const missing = leading.find((l) => !state.storedCalls!.has(l.toolCallId));
    if (missing !== undefined) {
      const line = lineAt(missing.index);
      throw new InvalidArgumentError(
        `line ${line.lineNumber}.${line.toolCallIdField}`,
        `${JSON.stringify(missing.toolCallId)} answers no tool call of the assistant message it follows in conversation ${JSON.stringify(state.id)} (the last stored one, or an earlier line; only tool results may stand between a call and its result)`,
      );
    }
  }
  const lastOpener = [...kept].reverse().find((k) => k.row.role !== 'tool');
  if (lastOpener) state.opener = lastOpener.row;
}

/** Call ids of the conversation's last stored message that is not a tool result (none when that is not an assistant call). */
async function storedOpenerCalls(store: ImportStore, conversationId: string): Promise<Set<string>> {
  let opener: { role: string; toolCalls?: Array<{ id: string }>; seq: number } | undefined;
  for (const message of await store.history(conversationId)) {
    if ((message.kind ?? 'message') !== 'message' || message.role === 'tool') continue;
    if (opener === undefined || message.seq > opener.seq) opener = message;
  }
  return new Set(opener?.role === 'assistant' ? (opener.toolCalls ?? []).map((c) => c.id) : []);
}
