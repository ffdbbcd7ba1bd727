/**
 * An archive that only reads: `read`, `search`, `list`, `count` and `close` go to the archive given; every call that would
 * change it (`write`, `mark`, `markEach`, `delete`, `eraseConversation`) is refused with an `archive_error`, before
 * anything is embedded or queued. For a process reading an archive another process owns (the CLI beside an app that
 * holds the embedded store).
 */
import { MemfoldError } from '../errors.js';
import type { Archive } from './archive.js';

export function readOnlyArchive(archive: Archive, where: string): Archive {
  const refuse = async (operation: string): Promise<never> => {
    throw new MemfoldError('archive_error', `${where} is open read-only: ${operation} refused`);
  };
  const count = archive.count?.bind(archive);
  return {
    read: (conversationId, labels) => archive.read(conversationId, labels),
    search: (query) => archive.search(query),
    list: (options) => archive.list(options),
    ...(count ? { count } : {}),
    write: () => refuse('write'),
    mark: () => refuse('mark'),
    markEach: () => refuse('mark'),
    delete: () => refuse('delete'),
    eraseConversation: () => refuse('erase'),
    close: () => archive.close(),
  };
}
