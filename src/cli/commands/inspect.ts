/**
 * `memfold inspect <conversation>`: the archived batches as a tree by depth, each with the sessions it covers, and
 * the sessions of the live history (derived with `sessionGapMinutes`, `--session-gap`). Reads only.
 */
import { displayLabel } from '../../compaction/clip-archive.js';
import { liveSessions, type LiveSession } from '../../compaction/sessions.js';
import type { ArchiveEntry } from '../../conversation/types.js';
import type { Memfold } from '../../memfold.js';
import { buildBatchTree, formatBatchTree, shortTime } from '../batch-tree.js';
import { printJson, printStored, type Output } from '../output.js';

/** What `inspect --json` prints. */
export interface InspectReport {
  conversationId: string;
  /** Every summary batch, in time order, without its text (`chars` gives its length); `sessions` when recorded. */
  batches: Array<Omit<ArchiveEntry, 'content'> & { chars: number }>;
  /** The live history's sessions, oldest first. */
  liveSessions: LiveSession[];
}

export async function inspectConversation(memfold: Pick<Memfold, 'archive' | 'history' | 'compactor'>, conversationId: string): Promise<InspectReport> {
  const batches = await memfold.archive.list({ conversationId, kind: 'summary' });
  const history = await memfold.history(conversationId);
  return {
    conversationId,
    batches: batches.map(({ content, ...rest }) => ({ ...rest, chars: content.length })),
    liveSessions: liveSessions(history, memfold.compactor.settings.sessionGapMinutes),
  };
}

/** The live sessions, one a line: id, time span, messages and seqs. */
export function formatLiveSessions(sessions: readonly LiveSession[], gapMinutes: number): string {
  const derived = sessions.some((s) => s.derived)
    ? gapMinutes > 0
      ? ` (auto-: no session id given; a pause over ${gapMinutes} minutes starts one)`
      : ' (auto-: no session id given)'
    : '';
  const lines = sessions.map(
    (s) => `  ${displayLabel(s.id)}  ${shortTime(s.start)} .. ${shortTime(s.end)}  ${s.messages} messages  seq ${s.firstSeq}..${s.lastSeq}`,
  );
  return [`live sessions: ${sessions.length}${derived}`, ...lines].join('\n');
}

export async function runInspect(memfold: Memfold, conversationId: string, options: { json: boolean }, output: Output): Promise<number> {
  const report = await inspectConversation(memfold, conversationId);
  if (options.json) {
    printJson(output, report);
    return 0;
  }
  const tree = report.batches.length > 0 ? formatBatchTree(buildBatchTree(report.batches)) : `conversation ${conversationId} has no archived batches`;
  const live = report.liveSessions.length > 0 ? formatLiveSessions(report.liveSessions, memfold.compactor.settings.sessionGapMinutes) : 'no live messages';
  printStored(output, `${tree}\n${live}`);
  return 0;
}
