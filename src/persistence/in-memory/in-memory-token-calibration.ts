/** Each conversation's token calibration over in-memory tables (`kysely/kysely-token-calibration.ts`'s twin). */
import { requireText } from '../../conversation/text.js';
import { unknownConversation } from '../loop-guard-update.js';
import type { TokenCalibration, TokenCalibrationUpdate } from '../persistence-provider.js';
import { checkTokenCalibrationUpdate } from '../token-calibration-update.js';
import { conversationKey, copyOf, type InMemoryTables } from './in-memory-tables.js';

export function getTokenCalibration(tables: InMemoryTables, namespace: string, conversationId: string): TokenCalibration | undefined {
  const id = requireText(conversationId, 'conversationId');
  const calibration = tables.conversations.get(conversationKey(namespace, id))?.calibration;
  return calibration === undefined ? undefined : copyOf(calibration);
}

/** Write the calibration of a conversation the tables hold. */
export function setTokenCalibration(
  tables: InMemoryTables,
  namespace: string,
  conversationId: string,
  input: TokenCalibrationUpdate,
  now: string,
): TokenCalibration {
  const { conversationId: id, update } = checkTokenCalibrationUpdate(conversationId, input);
  const record = tables.conversations.get(conversationKey(namespace, id));
  if (record === undefined) throw unknownConversation(id);
  record.calibration = { ...update, observedAt: now };
  return copyOf(record.calibration);
}
