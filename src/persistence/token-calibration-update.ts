/** The checks of `setTokenCalibration`'s input, pure: every adapter runs them before it writes. */
import { requireConversationId } from '../conversation/conversation-id.js';
import { describeValue } from '../conversation/text.js';
import { InvalidArgumentError } from '../errors.js';
import { requireFactor, requireTokenCount } from '../tokens/usage-calibration.js';
import type { TokenCalibrationUpdate } from './persistence-provider.js';

/** The conversation id and the update, checked; fields are named `update.factor`, `update.promptTokens`, `update.estimatedTokens`. */
export function checkTokenCalibrationUpdate(conversationId: unknown, update: unknown): { conversationId: string; update: TokenCalibrationUpdate } {
  const id = requireConversationId(conversationId);
  if (typeof update !== 'object' || update === null || Array.isArray(update)) {
    throw new InvalidArgumentError('update', `must be an object { factor, promptTokens, estimatedTokens }, got ${describeValue(update)}`);
  }
  const given = update as Record<string, unknown>;
  return {
    conversationId: id,
    update: {
      factor: requireFactor(given.factor, 'update.factor'),
      promptTokens: requireTokenCount(given.promptTokens, 'update.promptTokens'),
      estimatedTokens: requireTokenCount(given.estimatedTokens, 'update.estimatedTokens'),
    },
  };
}
