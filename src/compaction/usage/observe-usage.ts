/**
 * The assistant's reported usage, observed (`Compactor.observeUsage`): the provider's prompt tokens of one request
 * over memfold's own count of the context the request was built from (the live rows as `context()` shows them, tool
 * outputs cut) is the conversation's calibration factor, clamped to [1, 5] and kept in the live store. Every count
 * memfold then takes of that conversation is multiplied by it, until a compaction's commit drops it.
 */
import type { ConversationMessage } from '../../conversation/types.js';
import { describeValue } from '../../conversation/text.js';
import { InvalidArgumentError } from '../../errors.js';
import type { PersistenceProvider, TokenCalibration } from '../../persistence/persistence-provider.js';
import type { TokenCounter } from '../../tokens/token-counter.js';
import { calibrated, calibrationFactor, requireTokenCount } from '../../tokens/usage-calibration.js';
import type { CompactionSettings } from '../compaction-settings.js';
import { assembleContext } from '../view/context-view.js';
import type { ContextWarnings } from './context-warnings.js';

/** What the assistant's provider reported for one request built from `context(conversationId)`. */
export interface UsageObservation {
  /** The request's prompt tokens (`usage.prompt_tokens` in OpenAI's API, `input_tokens` in Anthropic's): a positive integer. */
  promptTokens: number;
}

export interface ObserveUsageDeps {
  persistence: PersistenceProvider;
  tokens: TokenCounter;
  settings: Pick<CompactionSettings, 'toolOutputMaxLines'>;
  warnings: ContextWarnings;
}

/** The observation's prompt tokens, checked: refused naming `usage` or `promptTokens`. */
export function checkUsageObservation(usage: unknown): number {
  if (typeof usage !== 'object' || usage === null || Array.isArray(usage)) {
    throw new InvalidArgumentError('usage', `must be an object { promptTokens }, got ${describeValue(usage)}`);
  }
  return requireTokenCount((usage as Record<string, unknown>).promptTokens, 'promptTokens');
}

const sum = (messages: readonly ConversationMessage[], count: (m: ConversationMessage) => number) => messages.reduce((total, m) => total + count(m), 0);

/** Calibrate the conversation (an id already checked) by one observed usage; returns the calibration as stored. */
export async function observeUsage(conversationId: string, promptTokens: number, deps: ObserveUsageDeps): Promise<TokenCalibration> {
  const { persistence, tokens, settings, warnings } = deps;
  const rows = await persistence.loadHistory(conversationId);
  if (rows.length === 0) {
    throw new InvalidArgumentError('conversationId', `${JSON.stringify(conversationId)} has no messages: there is no context to calibrate against`);
  }
  const count = (m: ConversationMessage) => tokens.countMessage(m);
  const estimatedTokens = sum(assembleContext(rows, settings.toolOutputMaxLines), count);
  const factor = calibrationFactor(promptTokens, estimatedTokens);
  const stored = await persistence.setTokenCalibration(conversationId, { factor, promptTokens, estimatedTokens });
  // The context is seen again, counted as compaction counts it (tool outputs whole), now calibrated.
  const history = assembleContext(rows);
  const lastSeq = history.reduce((last, m) => Math.max(last, m.seq), 0);
  warnings.observe(
    conversationId,
    sum(history, (m) => calibrated(count(m), stored.factor)),
    lastSeq,
    stored.factor,
  );
  return stored;
}
