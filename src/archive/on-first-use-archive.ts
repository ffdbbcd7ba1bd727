/**
 * An archive opened on its first call rather than when its owner opens: a program that only appends, builds
 * context or reads usage never pays for the backend (LanceDB with Arrow: about half a second of CPU and 55 MiB).
 * `open` runs once, on the first call, and runs whatever must precede every read and write (the live store's
 * archive check); when it fails, that call fails with its error and the next call runs it again.
 * `close()` waits for an opening in progress and closes what it opened; calls after it fail with `archive_error`.
 */
import { MemfoldError } from '../errors.js';
import type { Archive } from './archive.js';
import { eraseArchived } from './erase-archived.js';
import { entryDigest } from './entry-digest.js';

export function openOnFirstUse(open: () => Promise<Archive>): Archive {
  let opening: Promise<Archive> | undefined;
  let closed = false;

  const archive = (): Promise<Archive> => {
    if (closed) return Promise.reject(new MemfoldError('archive_error', 'LanceDB archive is closed'));
    opening ??= open().catch((error: unknown) => {
      opening = undefined; // the next call tries again
      throw error;
    });
    return opening;
  };

  return {
    write: async (entries, options) => (await archive()).write(entries, options),
    read: async (conversationId, labels) => (await archive()).read(conversationId, labels),
    async readDigests(conversationId, labels) {
      const opened = await archive();
      if (opened.readDigests) return opened.readDigests(conversationId, labels);
      return (await opened.read(conversationId, labels)).map(entryDigest);
    },
    search: async (query) => (await archive()).search(query),
    list: async (options) => (await archive()).list(options),
    async count(options) {
      const opened = await archive();
      // An archive without a count of its own (no scalar indexes) is counted by listing.
      return opened.count ? opened.count(options) : (await opened.list(options)).length;
    },
    mark: async (conversationId, labels, parentLabel) => (await archive()).mark(conversationId, labels, parentLabel),
    markEach: async (conversationId, marks) => (await archive()).markEach(conversationId, marks),
    delete: async (conversationId, labels) => (await archive()).delete(conversationId, labels),
    eraseConversation: async (conversationId) => eraseArchived(await archive(), conversationId),
    async close() {
      if (closed) return;
      closed = true;
      // An opening in progress is waited for, and what it opened closed; one that failed left nothing open.
      const opened = await opening?.catch(() => undefined);
      await opened?.close();
    },
  };
}
