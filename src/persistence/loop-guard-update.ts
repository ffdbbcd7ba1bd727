/** The checks of `setLoopGuardState`'s input, pure: every adapter runs them before it writes. */
import { requireConversationId } from '../conversation/conversation-id.js';
import { describeValue } from '../conversation/text.js';
import { InvalidArgumentError } from '../errors.js';
import type { LoopGuardUpdate } from './persistence-provider.js';

/** The largest value of the `integer` columns that hold the streak and the trigger. */
const MAX_INT4 = 2_147_483_647;

function requireCount(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_INT4) {
    throw new InvalidArgumentError(field, `must be an integer from 1 to ${MAX_INT4}, got ${describeValue(value)}`);
  }
  return value;
}

/** The conversation id and the update, checked; fields are named `update.streak`, `update.trigger`, `update.paused`. */
export function checkLoopGuardUpdate(conversationId: unknown, update: unknown): { conversationId: string; update: LoopGuardUpdate } {
  const id = requireConversationId(conversationId);
  if (typeof update !== 'object' || update === null || Array.isArray(update)) {
    throw new InvalidArgumentError('update', `must be an object { streak, trigger, paused }, got ${describeValue(update)}`);
  }
  const given = update as Record<string, unknown>;
  const streak = requireCount(given.streak, 'update.streak');
  const trigger = requireCount(given.trigger, 'update.trigger');
  if (typeof given.paused !== 'boolean') throw new InvalidArgumentError('update.paused', `must be a boolean, got ${describeValue(given.paused)}`);
  return { conversationId: id, update: { streak, trigger, paused: given.paused } };
}

/** The refusal of an update for a conversation the store does not hold. */
export function unknownConversation(conversationId: string): InvalidArgumentError {
  return new InvalidArgumentError('conversationId', `${describeValue(conversationId)} is not a conversation of this store (nothing was appended to it)`);
}
