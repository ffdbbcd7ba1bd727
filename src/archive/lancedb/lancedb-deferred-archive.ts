/**
 * The archive of an embedder that learns its vector size from its first answer (a remote one, `dimensions` 0),
 * opened before its table exists. The table is created with the vector size, so it waits for the first write:
 * that write embeds one probe text, creates the table, then writes. Until then nothing is archived, so reads,
 * lists and searches find nothing (each first checks whether another process has created the table meanwhile).
 * Opening thus makes no embedding call: an unreachable endpoint stops archive writes, not appends and reads.
 */
import type { Embedder } from '../../embedding/embedder.js';
import { MemfoldError } from '../../errors.js';
import type { Archive } from '../archive.js';

export interface DeferredArchiveDeps {
  embedder: Embedder;
  /** Whether the table exists now. */
  tableExists: () => Promise<boolean>;
  /** Open the archive on the table (creating it with `embedder.dimensions` when missing). */
  open: (embedder: Embedder) => Promise<Archive>;
  /** Release what the deferred archive holds (its connection). */
  release: () => void;
}

export function deferTableCreation(deps: DeferredArchiveDeps): Archive {
  let opening: Promise<Archive> | undefined;
  let closed = false;

  const openOnce = (embedder: Embedder): Promise<Archive> => {
    opening ??= deps.open(embedder).catch((error: unknown) => {
      opening = undefined; // the next call tries again
      throw error;
    });
    return opening;
  };
  /** The archive when its table exists; with `create`, after creating it. */
  const archive = async (create: boolean): Promise<Archive | undefined> => {
    if (closed) throw new MemfoldError('archive_error', 'LanceDB archive is closed');
    if (opening) return opening;
    if (await deps.tableExists()) return openOnce(deps.embedder);
    if (!create) return undefined;
    const { embedder } = deps;
    const [probe] = await embedder.embed(['memfold']);
    // The OpenAI adapter knows its size once it has answered; for any other embedder the probe's length says it.
    const dimensions = embedder.dimensions || (probe?.length ?? 0);
    return openOnce({
      id: embedder.id,
      dimensions,
      maxEmbeddingsPerCall: embedder.maxEmbeddingsPerCall,
      embed: (texts, options) => embedder.embed(texts, options),
    });
  };

  return {
    async write(entries, options) {
      if (Array.isArray(entries) && entries.length === 0) return;
      return (await archive(true))!.write(entries, options);
    },
    async read(conversationId, labels) {
      return (await archive(false))?.read(conversationId, labels) ?? [];
    },
    async readDigests(conversationId, labels) {
      return (await (await archive(false))?.readDigests?.(conversationId, labels)) ?? [];
    },
    async search(query) {
      return (await archive(false))?.search(query) ?? [];
    },
    async list(options) {
      return (await archive(false))?.list(options) ?? [];
    },
    async count(options) {
      const opened = await archive(false);
      if (!opened) return 0;
      // An archive without a count of its own (no scalar indexes) is counted by listing: never 0 when it holds some.
      return opened.count ? opened.count(options) : (await opened.list(options)).length;
    },
    async mark(conversationId, labels, parentLabel) {
      await (await archive(false))?.mark(conversationId, labels, parentLabel);
    },
    async markEach(conversationId, marks) {
      await (await archive(false))?.markEach(conversationId, marks);
    },
    async delete(conversationId, labels) {
      await (await archive(false))?.delete(conversationId, labels);
    },
    async eraseConversation(conversationId) {
      // No table yet: nothing was ever archived, so nothing is stored.
      return (await (await archive(false))?.eraseConversation?.(conversationId)) ?? { entries: 0, rowsRewritten: 0 };
    },
    async close() {
      if (closed) return;
      closed = true;
      const opened = await opening?.catch(() => undefined);
      try {
        await opened?.close();
      } finally {
        deps.release();
      }
    },
  };
}
