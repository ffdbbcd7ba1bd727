/** The loop guard's record of each conversation over in-memory tables (`kysely/kysely-loop-guard.ts`'s twin). */
import { requireText } from '../../conversation/text.js';
import { checkLoopGuardUpdate, unknownConversation } from '../loop-guard-update.js';
import type { LoopGuardState, LoopGuardUpdate } from '../persistence-provider.js';
import { conversationKey, copyOf, type InMemoryTables } from './in-memory-tables.js';

export function getLoopGuardState(tables: InMemoryTables, namespace: string, conversationId: string): LoopGuardState | undefined {
  const id = requireText(conversationId, 'conversationId');
  const state = tables.conversations.get(conversationKey(namespace, id))?.loopGuard;
  return state === undefined ? undefined : copyOf(state);
}

/** Write the record of a conversation the tables hold; a pause already set keeps its first time while it stays paused. */
export function setLoopGuardState(tables: InMemoryTables, namespace: string, conversationId: string, input: LoopGuardUpdate, now: string): LoopGuardState {
  const { conversationId: id, update } = checkLoopGuardUpdate(conversationId, input);
  const record = tables.conversations.get(conversationKey(namespace, id));
  if (record === undefined) throw unknownConversation(id);
  const state: LoopGuardState = { streak: update.streak, trigger: update.trigger, updatedAt: now };
  if (update.paused) state.pausedAt = record.loopGuard?.pausedAt ?? now;
  record.loopGuard = state;
  return copyOf(state);
}

export function clearLoopGuardState(tables: InMemoryTables, namespace: string, conversationId: string): boolean {
  const id = requireText(conversationId, 'conversationId');
  const record = tables.conversations.get(conversationKey(namespace, id));
  if (record?.loopGuard === undefined) return false;
  delete record.loopGuard;
  return true;
}
