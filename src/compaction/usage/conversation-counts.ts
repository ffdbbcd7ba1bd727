/** How one compaction (or usage report) counts a conversation's messages: memfold's own count, and it calibrated. */
import type { ConversationMessage } from '../../conversation/types.js';
import type { PersistenceProvider } from '../../persistence/persistence-provider.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import { calibrated } from '../../tokens/usage-calibration.js';

/** How one compaction (or usage report) counts a conversation's messages, each message counted once. */
export interface ConversationCounts {
  /** The conversation's calibration factor by the assistant's usage (1 when none was observed). */
  factor: number;
  /** memfold's own count of a message: what sizes transcript segments. */
  message: (m: ConversationMessage) => number;
  /** The same times the factor: what every decision about the context uses (trigger, target, plan, tokens before and after). */
  context: (m: ConversationMessage) => number;
}

export function conversationCounts(tokens: TokenCounter, factor: number): ConversationCounts {
  const seen = new WeakMap<ConversationMessage, number>();
  const message = (m: ConversationMessage) => seen.get(m) ?? seen.set(m, tokens.countMessage(m)).get(m)!;
  return { factor, message, context: (m) => calibrated(message(m), factor) };
}

/** The conversation's calibration factor as the live store holds it (1 when none was observed since its last compaction). */
export async function calibrationFactorOf(persistence: PersistenceProvider, conversationId: string): Promise<number> {
  return (await persistence.getTokenCalibration(conversationId))?.factor ?? 1;
}
