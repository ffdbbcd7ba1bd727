/** An archive that records every write (with its options) and every mark, in order, before passing it on. */
import type { Archive, WriteOptions } from '../../src/archive/archive.js';
import type { ArchiveEntry } from '../../src/conversation/types.js';

export type ArchiveCall =
  | { call: 'write'; entries: ArchiveEntry[]; options: WriteOptions | undefined }
  | { call: 'mark'; labels: string[] }
  | { call: 'markEach'; labels: string[] };

export function recordingArchive(archive: Archive, calls: ArchiveCall[]): Archive {
  return {
    ...archive,
    write: (entries, options) => {
      calls.push({ call: 'write', entries: [...entries], options });
      return archive.write(entries, options);
    },
    mark: (conversationId, labels, parentLabel) => {
      calls.push({ call: 'mark', labels: [...labels] });
      return archive.mark(conversationId, labels, parentLabel);
    },
    markEach: (conversationId, marks) => {
      calls.push({ call: 'markEach', labels: marks.map((m) => m.label) });
      return archive.markEach(conversationId, marks);
    },
  };
}

/** The writes among `calls`. */
export function writesOf(calls: readonly ArchiveCall[]): Array<Extract<ArchiveCall, { call: 'write' }>> {
  return calls.filter((c): c is Extract<ArchiveCall, { call: 'write' }> => c.call === 'write');
}
