/**
 * Replay a conversation into memfold message by message, compacting whenever the trigger fires,
 * the way an agent loop would. Used by the demo, the replay tests and evaluation.
 */
import type { ConversationMessage, NewMessage } from '../conversation/types.js';
import type { CompactionResult } from '../compaction/compaction-result.js';
import type { Memfold } from '../memfold.js';

export interface ReplayOptions {
  /** Called after every compaction that ran (compacted or failed), with every message appended so far. */
  onCompaction?: (result: CompactionResult, appended: readonly ConversationMessage[]) => Promise<void> | void;
  /**
   * Called just before each assistant message is appended (`at`: its index in the messages replayed), with the
   * context the model would be sent to write it: the live context as the replay holds it. The array is the
   * replay's own and changes afterwards: copy what you keep.
   */
  onPrompt?: (prompt: readonly ConversationMessage[], at: number) => void;
  /** Called after each appended message. */
  onProgress?: (done: number, total: number, stats: ReplayStats) => void;
  /** Stop at the first failed compaction (default true). */
  stopOnFailure?: boolean;
}

export interface ReplayStats {
  appended: ConversationMessage[];
  compactions: number;
  failures: CompactionResult[];
  archivedMessages: number;
  /** Tokens of the context after the last message. */
  contextTokens: number;
}

function answered(history: readonly ConversationMessage[]): boolean {
  // Never compact while the newest assistant tool call still waits for results.
  const last = history[history.length - 1];
  return !last || (last.toolCalls?.length ?? 0) === 0;
}

export async function replayConversation(
  memfold: Memfold,
  conversationId: string,
  messages: readonly NewMessage[],
  options: ReplayOptions = {},
): Promise<ReplayStats> {
  const stats: ReplayStats = { appended: [], compactions: 0, failures: [], archivedMessages: 0, contextTokens: 0 };
  const { trigger } = memfold.compactor.settings;
  const count = (m: ConversationMessage) => memfold.tokens.countMessage(m);
  let context = await memfold.context(conversationId);
  stats.contextTokens = context.reduce((sum, m) => sum + count(m), 0);
  for (let i = 0; i < messages.length; i++) {
    if (messages[i]!.role === 'assistant') options.onPrompt?.(context, i);
    const [stored] = await memfold.append(conversationId, [messages[i]!]);
    stats.appended.push(stored!);
    context.push(stored!);
    stats.contextTokens += count(stored!);
    if (stats.contextTokens >= trigger && answered(context)) {
      const result = await memfold.compact(conversationId);
      if (result.status === 'compacted') {
        stats.compactions++;
        stats.archivedMessages += result.archivedMessages;
        context = result.history;
        stats.contextTokens = result.tokensAfter;
      }
      if (result.status === 'failed') stats.failures.push(result);
      if (result.status === 'compacted' || result.status === 'failed') await options.onCompaction?.(result, stats.appended);
      if (result.status === 'failed' && (options.stopOnFailure ?? true)) break;
    }
    options.onProgress?.(i + 1, messages.length, stats);
  }
  return stats;
}
