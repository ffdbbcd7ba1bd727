/**
 * `memfold inspect <conversation>`: the archived batches as a tree by depth, each with the sessions it covers, and
 * the sessions of the live history (derived with `sessionGapMinutes`, `--session-gap`). Reads only.
 */
import { displayLabel } from '../../compaction/view/clip-archive.js';
import { isClipArchive } from '../../compaction/plan/plan.js';
import { conversationCost, type ConversationCost } from '../../cost/conversation-cost.js';
import type { ModelPrice } from '../../cost/model-price.js';
import { priceOf } from '../../cost/price-of.js';
import { liveSessions, type LiveSession } from '../../conversation/sessions.js';
import { turnMap, type TurnSpan } from '../../conversation/turn-map.js';
import type { ArchiveEntry, ConversationMessage } from '../../conversation/types.js';
import type { Memfold } from '../../memfold.js';
import { buildBatchTree, formatBatchTree, shortTime } from '../batch-tree.js';
import { printJson, printStored, type Output } from '../output.js';
import { runInspectHtml } from './inspect-html.js';

/** What `inspect --json` prints. */
export interface InspectReport {
  conversationId: string;
  /** Every summary batch, in time order, without its text (`chars` gives its length); `sessions` when recorded. */
  batches: Array<Omit<ArchiveEntry, 'content'> & { chars: number }>;
  /** The live history's sessions, oldest first. */
  liveSessions: LiveSession[];
  /** The live conversation's turns (system prompt and clip-archive left out), oldest first; indices into that list. */
  liveTurns: TurnSpan[];
  /**
   * What the conversation's summaries cost so far, from what each committed compaction recorded on its operation row
   * (`conversationCost`), beside the summary model configured now and its price.
   */
  summarizerCost: ConversationCost & {
    /** The summary model configured now: `extractive` offline, the adapter's id for a `summarizer` passed in. */
    model: string;
    /** Its price, USD per million tokens; null when the price table has none. */
    price: ModelPrice | null;
  };
}

export async function inspectConversation(
  memfold: Pick<Memfold, 'archive' | 'history' | 'compactor' | 'summaryModel' | 'summarizer' | 'prices' | 'persistence'>,
  conversationId: string,
): Promise<InspectReport> {
  const batches = await memfold.archive.list({ conversationId, kind: 'summary' });
  const history = await memfold.history(conversationId);
  return {
    conversationId,
    batches: batches.map(({ content, ...rest }) => ({ ...rest, chars: content.length })),
    liveSessions: liveSessions(history, memfold.compactor.settings.sessionGapMinutes),
    liveTurns: turnMap(conversationBody(history)),
    summarizerCost: { ...conversationCost(await memfold.persistence.listOperations(conversationId)), ...configuredModel(memfold) },
  };
}

/** The summary model configured now, and its price. */
function configuredModel(memfold: Pick<Memfold, 'summaryModel' | 'summarizer' | 'prices'>): { model: string; price: ModelPrice | null } {
  const { summaryModel } = memfold;
  const model = summaryModel.model ?? (summaryModel.source === 'offline' ? 'extractive' : memfold.summarizer.id);
  return { model, price: priceOf(model, memfold.prices) ?? null };
}

/** The history without the rows memfold and the caller put before the conversation: the system prompt and the clip-archive. */
function conversationBody<T extends Pick<ConversationMessage, 'role' | 'kind'>>(history: readonly T[]): T[] {
  const rest = history.filter((message) => !isClipArchive(message));
  const first = rest.findIndex((message) => message.role !== 'system');
  return first < 0 ? [] : rest.slice(first);
}

/** One line: how many live turns, and the seq range of the newest (the whole list is in `--json`). */
export function formatLiveTurns(turns: readonly TurnSpan[]): string {
  const newest = turns.at(-1);
  return newest === undefined ? 'live turns: 0' : `live turns: ${turns.length} (the newest: seq ${newest.firstSeq}..${newest.lastSeq})`;
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

export async function runInspect(memfold: Memfold, conversationId: string, options: { json: boolean; html?: string }, output: Output): Promise<number> {
  if (options.html !== undefined) return runInspectHtml(memfold, conversationId, options.html, options, output);
  const report = await inspectConversation(memfold, conversationId);
  if (options.json) {
    printJson(output, report);
    return 0;
  }
  const tree = report.batches.length > 0 ? formatBatchTree(buildBatchTree(report.batches)) : `conversation ${conversationId} has no archived batches`;
  const live =
    report.liveSessions.length > 0
      ? `${formatLiveSessions(report.liveSessions, memfold.compactor.settings.sessionGapMinutes)}\n${formatLiveTurns(report.liveTurns)}`
      : 'no live messages';
  printStored(output, `${tree}\n${live}`);
  return 0;
}
