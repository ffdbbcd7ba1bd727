/**
 * The archive step of a compaction: each chunk becomes a depth-0 batch (its summary) with the verbatim
 * transcript segments under it; all are written and read back before the re-summarizing and the commit.
 */
import type { WriteOptions } from '../../archive/archive.js';
import type { ConversationMessage, SummaryBatch } from '../../conversation/types.js';
import { writeOptionsAfterLookup, type ArchiveWriter } from './archive-writer.js';
import { buildBatches, withSummary } from './batch-builder.js';
import { distinctSessions } from '../../conversation/sessions.js';
import type { CompactionDeps } from '../compaction-deps.js';
import { supersededBy, type ClearedOriginal } from '../clearing/cleared-originals.js';
import { filesFooterOf, withFilesFooter } from '../footer/files-footer.js';
import { buildTranscriptSegments } from './transcript-segments.js';

export interface ArchiveTarget {
  conversationId: string;
  operationId: string;
  writer: ArchiveWriter;
  /** The session of a compacted message (the plan's `sessionOf`): batches and segments record the sessions they cover. */
  sessionOf?: (message: ConversationMessage) => string | undefined;
  /**
   * The originals of cleared tool outputs among the chunks (`cleared-originals.ts`): their segments hold the
   * originals, and their `tool_output` entries are marked as superseded once the segments are read back.
   */
  originals?: ReadonlyMap<string, ClearedOriginal>;
}

export interface ChunkArchive {
  /** Chunk `index` was summarized: its batch is written (read back) after everything queued before it. */
  summarized(index: number, summary: string): void;
  /** Every batch, once every write queued has been read back; rejects with the first archive failure. */
  finish(): Promise<SummaryBatch[]>;
  /** Settles when the writes queued so far have (failed writes included); never rejects. */
  settled(): Promise<void>;
  /** The new batches as they will be (those not yet archived without their text) and which are archived; undefined until labelled. */
  planned(): { batches: SummaryBatch[]; archived: ReadonlySet<string> } | undefined;
}

/**
 * Start archiving `chunks` while they are summarized. Labels depend on the sources alone, so the transcript
 * segments (which hold every message verbatim) are labelled, written and read back at once, and the cleared tool
 * outputs they restore are marked superseded; each chunk's batch follows as its summary arrives (those that arrive while
 * a write is in flight, together after it). Writes run one at
 * a time, in order; the first failure skips the rest and is reported to `onFailure` (to stop the fold) and by
 * `finish`.
 */
export interface ChunkArchiveInput {
  chunks: readonly (readonly ConversationMessage[])[];
  target: ArchiveTarget;
  deps: Pick<CompactionDeps, 'archive' | 'settings' | 'tokens'>;
  countMessage: (m: ConversationMessage) => number;
  onFailure: (error: unknown) => void;
  /** Hears when `planned()` changes: the labels were chosen, or a batch was archived. */
  onPlanned?: () => void;
}

/** The batches and transcript segments of the chunks, labelled around the labels `taken` (each batch's summary empty). */
function labelsFor(input: ChunkArchiveInput, originals: ReadonlyMap<string, ClearedOriginal>) {
  const { chunks, target, deps, countMessage } = input;
  const { conversationId, operationId, sessionOf } = target;
  const verbatim = (chunk: readonly ConversationMessage[]) => chunk.map((m) => originals.get(m.id)?.original ?? m);
  const drafts = chunks.map((chunk) => ({
    depth: 0,
    summary: '',
    sourceTimes: chunk.map((m) => m.createdAt),
    sourceIds: chunk.map((m) => m.id),
    ...(sessionOf ? { sessions: distinctSessions(chunk.map(sessionOf)) } : {}),
  }));
  return (taken: ReadonlySet<string>) => {
    const built = buildBatches(conversationId, operationId, drafts, taken);
    const segments = chunks.flatMap((chunk, i) =>
      buildTranscriptSegments(verbatim(chunk), {
        conversationId,
        parentLabel: built[i]!.label,
        operationId,
        taken,
        segmentTokens: deps.settings.transcriptSegmentTokens,
        countMessage,
        ...(sessionOf ? { sessionOf } : {}),
      }),
    );
    return { built, segments };
  };
}

export function startChunkArchive(input: ChunkArchiveInput): ChunkArchive {
  const { chunks, target, deps, onFailure, onPlanned = () => undefined } = input;
  const { conversationId, writer } = target;
  const originals = target.originals ?? new Map<string, ClearedOriginal>();
  const build = labelsFor(input, originals);

  const batches: SummaryBatch[] = [];
  let failure: { error: unknown } | undefined;
  let tail: Promise<unknown> = Promise.resolve();
  const queue = (task: () => Promise<void>): void => {
    tail = tail.then(async () => {
      if (failure) return;
      try {
        await task();
      } catch (error) {
        failure = { error };
        onFailure(error);
      }
    });
  };

  let labelled = build(new Set());
  let labelsFinal = false;
  // Set once the labels are looked up (`writeOptionsAfterLookup`).
  let writeOptions: WriteOptions = {};
  queue(async () => {
    // Labels are chosen so that no write lands on a label another operation holds.
    const candidates = [...labelled.built, ...labelled.segments].map((e) => e.label);
    const taken = new Set((await deps.archive.read(conversationId, candidates)).map((e) => e.label));
    if (taken.size > 0) labelled = build(taken);
    writeOptions = writeOptionsAfterLookup(taken);
    labelsFinal = true;
    onPlanned();
    // Every label of the chunks in one journal update: the batches' writes that follow need none of their own.
    await writer.journalAhead([...labelled.segments, ...labelled.built].map((e) => e.label));
    await writer.writeVerified(labelled.segments, writeOptions);
    await writer.markEach(supersededBy(labelled.segments, originals));
  });
  // Summaries that arrived while earlier writes were in flight go out together: one write (and read-back) for all,
  // instead of one per batch. With a model each usually arrives alone; with the offline summarizer, all at once.
  const arrived = new Map<number, string>();
  const { settings, tokens } = deps;
  // Whatever the summarizer wrote (or the application supplied), the batch ends with the files its chunk touched.
  const batchText = (index: number, summary: string) =>
    settings.filesFooter
      ? withFilesFooter(summary, filesFooterOf(chunks[index] ?? [], settings.fileToolPatterns), settings.maxSummaryTokens, (t) => tokens.count(t))
      : summary;
  return {
    summarized(index, summary) {
      arrived.set(index, batchText(index, summary));
      queue(async () => {
        if (arrived.size === 0) return;
        const ready = [...arrived].map(([i, text]) => ({ i, batch: withSummary(labelled.built[i]!, text) }));
        arrived.clear();
        await writer.writeVerified(
          ready.map((r) => r.batch),
          writeOptions,
        );
        for (const { i, batch } of ready) batches[i] = batch;
        onPlanned();
      });
    },
    async finish() {
      await tail;
      if (failure) throw failure.error;
      const missing = chunks.findIndex((_, i) => batches[i] === undefined);
      if (missing >= 0) throw new Error(`chunk ${missing} has no summary to archive`);
      return batches;
    },
    settled: () => tail.then(() => undefined),
    planned() {
      if (!labelsFinal) return undefined;
      return {
        batches: labelled.built.map((batch, i) => batches[i] ?? batch),
        archived: new Set(batches.filter(Boolean).map((b) => b.label)),
      };
    },
  };
}
