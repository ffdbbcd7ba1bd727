/** The checks of `setConversationSettings`'s input, pure: every adapter runs them before it writes. */
import { requireConversationId } from '../conversation/conversation-id.js';
import { describeValue } from '../conversation/text.js';
import { InvalidArgumentError } from '../errors.js';

/** A settings object's largest JSON form: the settings are a few dozen keys, tool lists included. */
export const MAX_CONVERSATION_SETTINGS_BYTES = 64 * 1024;

/**
 * The conversation id and the settings, checked: a plain object of JSON values (what jsonb stores unchanged), at
 * most `MAX_CONVERSATION_SETTINGS_BYTES` as JSON. Which keys and values are settings is the compactor's to say.
 */
export function checkConversationSettings(
  conversationId: unknown,
  settings: unknown,
): { conversationId: string; settings: Record<string, unknown>; json: string } {
  const id = requireConversationId(conversationId);
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings) || Object.getPrototypeOf(settings) !== Object.prototype) {
    throw new InvalidArgumentError('settings', `must be a plain object of settings, got ${describeValue(settings)}`);
  }
  let json: string;
  try {
    json = JSON.stringify(settings);
  } catch {
    throw new InvalidArgumentError('settings', 'must be JSON (no cycles, no bigint)');
  }
  const parsed = JSON.parse(json) as Record<string, unknown>;
  // A value JSON drops or changes (undefined, a function, NaN) would not read back as given.
  if (JSON.stringify(parsed) !== json || Object.keys(parsed).length !== Object.keys(settings).length) {
    throw new InvalidArgumentError('settings', 'must hold JSON values only');
  }
  for (const [key, value] of Object.entries(settings)) {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new InvalidArgumentError(`settings.${key}`, 'must be a finite number');
  }
  if (Buffer.byteLength(json, 'utf8') > MAX_CONVERSATION_SETTINGS_BYTES) {
    throw new InvalidArgumentError('settings', `must be at most ${MAX_CONVERSATION_SETTINGS_BYTES} bytes as JSON`);
  }
  return { conversationId: id, settings: parsed, json };
}
