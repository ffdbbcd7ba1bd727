/** The frontier as the archive holds it: one read, shared by the compaction, re-summarization and `compactor.frontier`. */
import type { Archive } from '../../archive/archive.js';

/** The summary batches no higher-depth batch covers, in time order (`list` is time-ordered by the port's contract). */
export function listFrontier(deps: { archive: Archive }, conversationId: string) {
  return deps.archive.list({ conversationId, kind: 'summary', unmarkedOnly: true });
}
