/**
 * memfold's settings methods: `configure` (the base, a conversation's stored overrides by default, or with
 * `persist: false` its overrides in this process only), `conversationSettings` and `resetSettings`. Stored overrides
 * live in the live store, so every process on it (the CLI, `memfold worker`, `memfold mcp`) compacts the conversation
 * with them (`compaction/stored-settings.ts`).
 */
import type { CompactionSettings } from './compaction/compaction-settings.js';
import type { Compactor } from './compaction/compactor-api.js';
import type { SettingsChange } from './compaction/live-settings.js';
import type { StoredSettings } from './compaction/stored-settings.js';

/** Where a change of settings goes: a conversation's, stored (default) or in this process only. */
export interface ConversationScope {
  conversationId: string;
  /**
   * true (default): stored in the live store, for every process on it and for later ones; false: in this process
   * only, over the stored overrides (what `memfold worker` does with a job's settings).
   */
  persist?: boolean;
}

/** A conversation's settings as `conversationSettings` reads them. */
export interface ConversationSettings {
  /** The overrides the live store keeps for the conversation (undefined: none). */
  stored: Partial<CompactionSettings> | undefined;
  /** The settings this process compacts it with: its base settings, the stored overrides, its own overrides. */
  settings: CompactionSettings;
}

export interface MemfoldSettings {
  configure(partial: SettingsChange, scope?: ConversationScope): CompactionSettings | Promise<CompactionSettings>;
  conversationSettings(conversationId: string): Promise<ConversationSettings>;
  resetSettings(conversationId: string): Promise<boolean>;
}

export function memfoldSettings(compactor: Compactor, stored: StoredSettings): MemfoldSettings {
  return {
    configure(partial, scope) {
      if (scope === undefined || scope.persist === false) {
        return compactor.configure(partial, scope === undefined ? undefined : { conversationId: scope.conversationId });
      }
      return stored.save(scope.conversationId, partial);
    },
    async conversationSettings(conversationId) {
      const settings = await stored.refresh(conversationId);
      return { stored: await stored.read(conversationId), settings };
    },
    resetSettings: async (conversationId) => stored.reset(conversationId),
  };
}
