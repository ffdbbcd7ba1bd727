/** The persistence port's per-conversation records besides messages and operations, and what writes them. */

/** The archive a live store belongs to, as the first process that opened them together recorded it. */
export interface ArchiveBinding {
  /** Where that process found the archive: an absolute folder, or the object-store URI. */
  location: string;
  /** The id the archive keeps inside itself; what is compared. */
  archiveId: string;
  boundAt: Date;
}

/** What `bindArchive` asks: given the binding recorded now, the one to record (undefined: keep it). */
export type ArchiveBindingDecision = (bound: ArchiveBinding | undefined) => Promise<{ location: string; archiveId: string } | undefined>;

export interface MigrationReport {
  /** Names of the migrations this call applied, in order (empty when up to date). */
  applied: string[];
  /** Every migration recorded as applied after the call. */
  current: string[];
}

/** What `eraseConversation` deleted from the live store: rows per table (0 everywhere: nothing was stored). */
export interface ConversationErasure {
  /** The `conversations` row (0 or 1; 0 too when messages appended after the boundary keep it). */
  conversations: number;
  /** Message rows: live, overlay-marked and the clip-archive. */
  messages: number;
  /** Messages appended after the erase's boundary (`EraseConversationOptions.throughSeq`), kept. */
  messagesKept: number;
  /** Entries of the id ledger (`message_ids`). */
  messageIds: number;
  /** Operation journal rows of every kind and status, the erase's own included. */
  operations: number;
  /** The loop guard record (`compaction_pauses`, 0 or 1). */
  loopGuard: number;
  /** The token calibration (`token_calibrations`, 0 or 1). */
  calibration: number;
}

/** What `eraseConversation` removes. */
export interface EraseConversationOptions {
  /**
   * Remove messages up to this seq only (an erase's `eraseThroughSeq`): later ones stay, with their id ledger entries
   * and the conversation row. Default: every message.
   */
  throughSeq?: number;
}

/**
 * The loop guard's record of one conversation (`migrations/004_compaction_pause.sql`): the compactions in a row
 * that left its context at or over the trigger (or failed), the trigger they were counted against, and since when
 * automatic compaction is paused. The compactor's loop guard decides (`compaction/usage/loop-guard.ts`); the store keeps
 * what it decided, so every process sharing the store sees it.
 */
export interface LoopGuardState {
  /** Compactions in a row that did not bring the context under `trigger`: 1 or more (no streak, no record). */
  streak: number;
  /** The trigger, in tokens, the streak was counted against. */
  trigger: number;
  /** When automatic compaction was paused (ISO time); absent while it is not paused. */
  pausedAt?: string;
  updatedAt: string;
}

/** What `setLoopGuardState` writes. */
export interface LoopGuardUpdate {
  /** An integer from 1 to 2,147,483,647. */
  streak: number;
  /** An integer from 1 to 2,147,483,647. */
  trigger: number;
  /** Automatic compaction is paused: `pausedAt` is set (kept when it already was); false removes it. */
  paused: boolean;
}

/**
 * A conversation's token calibration by the assistant's reported usage (`migrations/005_token_calibration.sql`):
 * the factor memfold's counts of its context are multiplied by, and the two counts it came from. The compactor
 * decides it (`Compactor.observeUsage`); the store keeps it, so every process sharing the store, and a restarted
 * one, counts the conversation the same way. `commitCompaction` drops it.
 */
export interface TokenCalibration {
  /** promptTokens / estimatedTokens, clamped by the compactor to [1, 5]. */
  factor: number;
  /** The prompt tokens the assistant's provider reported for one request. */
  promptTokens: number;
  /** memfold's own count of the context that request was built from. */
  estimatedTokens: number;
  /** When it was observed (ISO time). */
  observedAt: string;
}

/** What `setTokenCalibration` writes. */
export interface TokenCalibrationUpdate {
  /** A number from 1 to 5 (`CALIBRATION_RANGE`). */
  factor: number;
  /** An integer from 1 to 2,147,483,647. */
  promptTokens: number;
  /** An integer from 1 to 2,147,483,647. */
  estimatedTokens: number;
}

/**
 * A conversation's compaction settings overrides as the store keeps them (`migrations/014_conversation_settings.sql`):
 * the keys that were set, by their setting names, and when they were last written. The store checks only that they
 * are a JSON object; which keys and values are settings is the compactor's to say (`compaction/stored-settings.ts`).
 */
export interface ConversationSettingsRecord {
  settings: Record<string, unknown>;
  /** When they were written (ISO time, the store's clock). */
  updatedAt: string;
}
