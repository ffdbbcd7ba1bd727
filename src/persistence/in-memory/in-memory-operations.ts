/**
 * The in-memory store's operations on its tables (messages, the operation log, erase, the per-conversation records),
 * loaded by the first call of any in-memory store (`in-memory-persistence.ts`): creating a store, or importing memfold,
 * does not load them.
 */
export { createInMemoryMessages } from './in-memory-messages.js';
export { eraseConversation } from './in-memory-erase.js';
export { clearLoopGuardState, getLoopGuardState, setLoopGuardState } from './in-memory-loop-guard.js';
export { listConversations, listOperations, recordOperation, updateOperation } from './in-memory-operation-log.js';
export { getTokenCalibration, setTokenCalibration } from './in-memory-token-calibration.js';
export { clearConversationSettings, getConversationSettings, setConversationSettings } from './in-memory-conversation-settings.js';
