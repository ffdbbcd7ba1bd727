/**
 * A deadline on the reads of an archive that lives behind a network (an object store): an endpoint that accepts
 * connections and never answers must not hold memory_read, a compaction's read-back or an operator's listing for
 * as long as the storage client keeps retrying. Each read (`read`, `readDigests`, `search`, `list`) and the opening race one timer;
 * past it the call fails `archive_error` naming the endpoint, what was waited for and the setting. The client's
 * request goes on in the background until its own timeouts end it: a read has nothing to undo.
 *
 * Writes (`write`, `mark`, `markEach`, `delete`, `eraseConversation`) are passed through: a write given up here could
 * still commit later, leaving entries no journal accounts for, so they end by the client's per-request timeout.
 */
import { MemfoldError } from '../errors.js';
import type { Archive } from './archive.js';

export interface ArchiveDeadline {
  /** Milliseconds one read (or the opening) may take, retries included. */
  deadlineMs: number;
  /** The store as an error names it, e.g. `the S3 endpoint http://127.0.0.1:9000 (bucket b)`; never a credential. */
  where: string;
  /** The setting that changes `deadlineMs`, named in the error. */
  setting: string;
}

/** `work`, or an `archive_error` once `deadline.deadlineMs` has passed without an answer; `abandon` gets a late result. */
export async function withinDeadline<T>(work: Promise<T>, waitedFor: string, deadline: ArchiveDeadline, abandon?: (late: T) => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(
        new MemfoldError(
          'archive_error',
          `LanceDB archive: ${deadline.where} did not answer within ${deadline.deadlineMs} ms while memfold waited for ${waitedFor} (${deadline.setting}); check that the endpoint is up and reachable`,
          { retryable: true, details: { reason: 'timeout', waitedFor, deadlineMs: deadline.deadlineMs } },
        ),
      );
    }, deadline.deadlineMs);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
    if (timedOut) work.then((late) => abandon?.(late)).catch(() => undefined);
  }
}

/** `archive` with every read bounded by `deadline`. */
export function withReadDeadline(archive: Archive, deadline: ArchiveDeadline): Archive {
  const bounded: Archive = {
    write: (entries, options) => archive.write(entries, options),
    read: (conversationId, labels) => withinDeadline(archive.read(conversationId, labels), 'a read of archived entries', deadline),
    search: (query) => withinDeadline(archive.search(query), 'a search of the archive', deadline),
    list: (options) => withinDeadline(archive.list(options), 'a listing of archived entries', deadline),
    mark: (conversationId, labels, parentLabel) => archive.mark(conversationId, labels, parentLabel),
    markEach: (conversationId, marks) => archive.markEach(conversationId, marks),
    delete: (conversationId, labels) => archive.delete(conversationId, labels),
    close: () => archive.close(),
  };
  const readDigests = archive.readDigests?.bind(archive);
  if (readDigests) {
    bounded.readDigests = (conversationId, labels) => withinDeadline(readDigests(conversationId, labels), 'a read-back of archived entries', deadline);
  }
  const count = archive.count?.bind(archive);
  if (count) bounded.count = (options) => withinDeadline(count(options), 'a count of archived entries', deadline);
  const erase = archive.eraseConversation?.bind(archive);
  if (erase) bounded.eraseConversation = erase;
  return bounded;
}
