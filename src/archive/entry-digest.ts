/**
 * What a write's read-back compares: a row's identity (label, operation, kind, depth, count) and MD5 digests of its
 * texts and lists, so that an adapter can answer from the columns it needs (LanceDB hashes in its own engine)
 * instead of returning every row's transcript to be parsed. Pure but for the memo of
 * transcripts' frames (`transcript-frames.ts`).
 */
import { createHash } from 'node:crypto';
import type { ArchiveEntry } from '../conversation/types.js';
import { writtenFrames } from './transcript-frames.js';

/** Joins list items before hashing (source ids, sessions): ids never hold it in practice, and counts are compared too. */
export const DIGEST_SEPARATOR = '\u001f';

/** One stored entry as the read-back sees it. Digests are lower-case hex MD5 of the UTF-8 bytes. */
export interface EntryDigest {
  label: string;
  operationId: string;
  kind: string;
  depth: number;
  count: number;
  content: string;
  /**
   * Of the transcript as stored: its frames against the content (`transcript-frames.ts`), which with the content
   * rebuild every message; null when the entry has none.
   */
  messages: string | null;
  sourceIdCount: number;
  /** Of the source ids joined by `DIGEST_SEPARATOR` (U+001F). */
  sourceIds: string;
  /** Of the sessions joined by `DIGEST_SEPARATOR` (U+001F); no sessions and an empty list are the same. */
  sessions: string;
}

export function md5Hex(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}

/**
 * The digest a text written as is must read back with. A text holding a lone surrogate cannot be stored as is
 * (UTF-8 turns it into U+FFFD, which MD5 over UTF-8 would not see): no stored row matches it, as a comparison of
 * the texts themselves would not.
 */
function writtenDigest(text: string): string {
  // isWellFormed: false exactly when a surrogate stands unpaired (a regular expression's \p{Cs} scan took longer).
  return text.isWellFormed() ? md5Hex(text) : 'not storable as is: lone surrogate';
}

/** The digest of an entry as written. */
export function entryDigest(entry: ArchiveEntry): EntryDigest {
  return {
    label: entry.label,
    operationId: entry.operationId,
    kind: entry.kind,
    depth: entry.depth,
    count: entry.count,
    content: writtenDigest(entry.content),
    messages: entry.messages === undefined ? null : md5Hex(writtenFrames(entry.content, entry.messages, entry.conversationId)),
    sourceIdCount: entry.sourceIds.length,
    sourceIds: writtenDigest(entry.sourceIds.join(DIGEST_SEPARATOR)),
    sessions: writtenDigest((entry.sessions ?? []).join(DIGEST_SEPARATOR)),
  };
}

/** What differs between the entry written and the row read back, or undefined when they agree. */
export function digestProblem(written: EntryDigest, read: EntryDigest | undefined): string | undefined {
  if (!read) return 'missing after write';
  if (read.operationId !== written.operationId) return `the label belongs to operation ${read.operationId}`;
  if (read.content !== written.content) return 'content differs';
  if (read.depth !== written.depth || read.kind !== written.kind) return 'depth or kind differs';
  if (read.count !== written.count) return 'count differs';
  if (read.sourceIdCount !== written.sourceIdCount || read.sourceIds !== written.sourceIds) return 'source ids differ';
  if (read.messages !== written.messages) return 'transcript messages differ';
  if (read.sessions !== written.sessions) return 'sessions differ';
  return undefined;
}
