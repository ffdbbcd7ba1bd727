/**
 * Step 5 (and the writes of step 6): write entries, read them back, and remember every write and
 * mark so that a failure before the commit can undo them. A message leaves the live table only
 * after every entry covering it has been written *and read back* unchanged: its identity, and digests of its
 * content, transcript, source ids and sessions (`archive/entry-digest.ts`).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ArchiveEntry } from '../../conversation/types.js';
import { MemfoldError } from '../../errors.js';
import type { Archive, WriteOptions } from '../../archive/archive.js';
import { digestProblem, entryDigest, type EntryDigest } from '../../archive/entry-digest.js';

export class ReadbackError extends MemfoldError {
  static override readonly kind: string = 'memfold.ReadbackError';
  constructor(label: string, problem: string) {
    super('archive_error', `Archive read-back failed for ${label}: ${problem}`, { details: { label } });
    this.name = 'ReadbackError';
  }
}

/**
 * The stored rows of `entries`, as digests: from the adapter's `readDigests` (LanceDB hashes the columns it needs
 * in its own engine), else from the entries read back whole.
 */
async function storedDigests(archive: Archive, conversationId: string, labels: string[]): Promise<EntryDigest[]> {
  if (archive.readDigests) return archive.readDigests(conversationId, labels);
  return (await archive.read(conversationId, labels)).map(entryDigest);
}

/** Entries digested in one turn of the event loop while their write runs. */
const DIGESTS_PER_TURN = 256;

/**
 * The digests of `entries` as written, a slice per turn of the event loop: they are hashed while the archive's engine
 * stores the rows on its own threads, instead of after the read-back (160 ms for a write of 9,352 segments).
 */
async function digestsBeside(entries: readonly ArchiveEntry[]): Promise<EntryDigest[]> {
  const digests: EntryDigest[] = [];
  for (let i = 0; i < entries.length; i += DIGESTS_PER_TURN) {
    await nextTurn();
    for (const entry of entries.slice(i, i + DIGESTS_PER_TURN)) digests.push(entryDigest(entry));
  }
  return digests;
}

/**
 * How to write labels a lookup under the conversation's lock just chose: when it found none taken, each is free and
 * written once, so the archive need not look it up again (`WriteOptions.labelsFree`); a label made longer because its
 * first form was taken was not looked up itself, so then every write looks its labels up.
 */
export function writeOptionsAfterLookup(taken: ReadonlySet<string>): WriteOptions {
  return taken.size === 0 ? { labelsFree: true } : {};
}

export interface ArchiveWriter {
  /**
   * Write, then read back and compare; throws ReadbackError on any difference. Calls run one at a time, in order.
   * `options.labelsFree`: the labels were found free under the conversation's lock (`WriteOptions`).
   */
  writeVerified(entries: ArchiveEntry[], options?: WriteOptions): Promise<void>;
  /**
   * Journal labels the operation is about to write, all at once: a later write of only such labels needs no journal
   * update of its own (one database write per compaction instead of one per archive write). Recovery already treats
   * a journaled label as one that may or may not have been stored.
   */
  journalAhead(labels: readonly string[]): Promise<void>;
  /**
   * Run `update` (a journal update of the caller's, such as recording the operation `archived` with `written`) in turn
   * with the writes: one made meanwhile can neither land before it (and be dropped by it) nor overtake it.
   */
  inTurn(update: () => Promise<void>): Promise<void>;
  mark(labels: string[], parentLabel: string): Promise<void>;
  /** Each label under its own parent, in one archive call. */
  markEach(marks: ReadonlyArray<{ label: string; parentLabel: string }>): Promise<void>;
  /** Labels written so far, in order. */
  readonly written: readonly string[];
  /** Best-effort undo: clear marks, delete the rows it wrote (never another operation's). Returns the errors it met (it never throws). */
  rollback(): Promise<unknown[]>;
}

/**
 * `journal` is called with every label so far (those journaled ahead included) before a write that names a label not
 * journaled yet, and must persist them: after a crash, the journal is how reconcile finds what this writer may have stored.
 */
export function createArchiveWriter(input: {
  archive: Archive;
  conversationId: string;
  operationId: string;
  journal?: (labels: string[]) => Promise<void>;
}): ArchiveWriter {
  const { archive, conversationId, operationId, journal = async () => undefined } = input;
  const written: string[] = [];
  const marked: string[] = [];
  // Labels journaled ahead of their write: every journal update keeps them until written.
  const ahead: string[] = [];
  const journaled = new Set<string>();
  const journalNow = async () => {
    const writtenSet = new Set(written);
    const labels = [...written, ...ahead.filter((label) => !writtenSet.has(label))];
    await journal(labels);
    for (const label of labels) journaled.add(label);
  };
  // One call at a time, in the order made: archive writes may run beside the fold, and a journal update must never
  // land after a later one (it would drop labels), nor a rollback before a write still in flight.
  let tail: Promise<unknown> = Promise.resolve();
  const inOrder = <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task, task);
    tail = run.catch(() => undefined);
    return run;
  };
  return {
    written,
    writeVerified: (entries, options) =>
      inOrder(async () => {
        // Record before writing: a write that fails halfway (or a crash) may still have stored some rows.
        written.push(...entries.map((e) => e.label));
        if (entries.some((e) => !journaled.has(e.label))) await journalNow();
        const expected = digestsBeside(entries);
        expected.catch(() => undefined); // awaited after the read-back; a write that fails first leaves it unheard
        await archive.write(entries, options);
        const read = await storedDigests(
          archive,
          conversationId,
          entries.map((e) => e.label),
        );
        const byLabel = new Map(read.map((digest) => [digest.label, digest]));
        const writtenDigests = await expected;
        entries.forEach((entry, i) => {
          const problem = digestProblem(writtenDigests[i]!, byLabel.get(entry.label));
          if (problem) throw new ReadbackError(entry.label, problem);
        });
      }),
    journalAhead: (labels) =>
      inOrder(async () => {
        ahead.push(...labels.filter((label) => !journaled.has(label)));
        await journalNow();
      }),
    inTurn: (update) => inOrder(update),
    mark: (labels, parentLabel) =>
      inOrder(async () => {
        marked.push(...labels);
        await archive.mark(conversationId, labels, parentLabel);
      }),
    markEach: (marks) =>
      inOrder(async () => {
        if (marks.length === 0) return;
        marked.push(...marks.map((m) => m.label));
        await archive.markEach(conversationId, marks);
      }),
    rollback: () =>
      inOrder(async () => {
        const errors: unknown[] = [];
        if (marked.length > 0) await archive.mark(conversationId, marked, null).catch((e: unknown) => errors.push(e));
        if (written.length > 0) await removeOwnEntries(archive, conversationId, operationId, written).catch((e: unknown) => errors.push(e));
        return errors;
      }),
  };
}

/**
 * Remove the entries of `operationId` among `labels`: clear the marks that point at them, then delete
 * them. A label held by another operation's row is left alone (a write refused on it, or a journal
 * naming a label it never got). Idempotent: a crash halfway is undone by running it again.
 */
export async function removeOwnEntries(archive: Archive, conversationId: string, operationId: string, labels: readonly string[]): Promise<void> {
  if (labels.length === 0) return;
  const own = new Set((await archive.read(conversationId, [...labels])).filter((e) => e.operationId === operationId).map((e) => e.label));
  if (own.size === 0) return;
  // Marked under them: child batches, and tool outputs their transcript segments superseded.
  const marked = await Promise.all([archive.list({ conversationId, kind: 'summary' }), archive.list({ conversationId, kind: 'tool_output' })]);
  const children = marked.flat().filter((e) => e.parentLabel !== undefined && own.has(e.parentLabel));
  if (children.length > 0)
    await archive.mark(
      conversationId,
      children.map((c) => c.label),
      null,
    );
  await archive.delete(conversationId, [...own]);
}
