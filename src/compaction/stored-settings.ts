/**
 * A conversation's settings overrides kept in the live store (`migrations/014_conversation_settings.sql`), so that
 * every process on that store compacts it alike: the application, `memfold compact`, `usage`, `worker`, `mcp`. Each
 * compaction entry reads the one small row again before it plans (`withStoredSettings`), and puts what it read as
 * the conversation's stored layer of the live settings (`live-settings.ts`); `save` and `reset` write it.
 */
import { conversationIdProblem } from '../conversation/conversation-id.js';
import { InvalidConfigError } from '../errors.js';
import type { PersistenceProvider } from '../persistence/persistence-provider.js';
import type { CompactionSettings } from './compaction-settings.js';
import { mergeSettings, type LiveSettings, type SettingsChange, type SettingsCheck } from './live-settings.js';

export type SettingsStore = Pick<PersistenceProvider, 'getConversationSettings' | 'setConversationSettings' | 'clearConversationSettings'>;

export interface StoredSettings {
  /**
   * Read the conversation's stored overrides into the live settings; returns its settings now. Throws
   * `InvalidConfigError` when they do not hold over this process's settings (naming the key and the conversation),
   * and the store's error when it fails; the settings in force stay as they were.
   */
  refresh(conversationId: string): Promise<CompactionSettings>;
  /** `refresh` once per conversation in this process (an append's warning and queueing need no fresher read). */
  ensure(conversationId: string): Promise<void>;
  /** The overrides the store keeps for the conversation, read now (undefined: none). */
  read(conversationId: string): Promise<Partial<CompactionSettings> | undefined>;
  /**
   * Merge `change` over the stored overrides (a key set to `undefined` is removed) and store them, for every process.
   * Checked over this process's settings before anything is written: a bad value throws `InvalidConfigError`
   * synchronously, on the call; in force here at once; resolves once stored to the conversation's settings now. A
   * write that fails rejects and puts back what this process had. The last writer wins.
   */
  save(conversationId: string, change: SettingsChange): Promise<CompactionSettings>;
  /** Remove the conversation's stored overrides, for every process; true when there were some. */
  reset(conversationId: string): Promise<boolean>;
}

/** `error` as the refusal of a conversation's stored settings: the field, and where they come from. */
function storedRefusal(error: unknown, conversationId: string): unknown {
  if (!InvalidConfigError.isInstance(error)) return error;
  const rule = error.message.slice(`Invalid config field ${error.field}: `.length);
  return new InvalidConfigError(
    error.field,
    `${rule} (in the stored settings of conversation ${JSON.stringify(conversationId)}, over this process's settings; \`memfold config\` shows and changes them)`,
  );
}

/** Writes of each conversation's row, one after another; a read waits for those in flight, so it never brings back what they replace. */
function createWriteQueue() {
  const tails = new Map<string, Promise<unknown>>();
  return {
    settled: async (conversationId: string) => void (await tails.get(conversationId)?.catch(() => undefined)),
    run<T>(conversationId: string, write: () => Promise<T>): Promise<T> {
      const run = (tails.get(conversationId) ?? Promise.resolve()).catch(() => undefined).then(write);
      tails.set(conversationId, run);
      void run
        .finally(() => {
          if (tails.get(conversationId) === run) tails.delete(conversationId);
        })
        .catch(() => undefined);
      return run;
    },
  };
}

/** After a failed write: what this process had before it, when that still holds over its settings (else none). */
function putBack(live: LiveSettings, check: SettingsCheck, conversationId: string, before: Partial<CompactionSettings> | undefined): void {
  try {
    live.setStored(conversationId, before, check);
  } catch {
    live.setStored(conversationId, undefined);
  }
}

export function createStoredSettings(options: { live: LiveSettings; store: SettingsStore; check?: SettingsCheck }): StoredSettings {
  const { live, store } = options;
  const check = options.check ?? (() => undefined);
  const writes = createWriteQueue();
  const loaded = new Set<string>();
  const storedRow = async (conversationId: string) =>
    (await store.getConversationSettings(conversationId))?.settings as Partial<CompactionSettings> | undefined;
  const apply = (conversationId: string, stored: Partial<CompactionSettings> | undefined): CompactionSettings => {
    try {
      return live.setStored(conversationId, stored, check);
    } catch (error) {
      throw storedRefusal(error, conversationId);
    }
  };

  async function read(conversationId: string): Promise<Partial<CompactionSettings> | undefined> {
    await writes.settled(conversationId);
    return storedRow(conversationId);
  }

  async function refresh(conversationId: string): Promise<CompactionSettings> {
    const settings = apply(conversationId, await read(conversationId));
    loaded.add(conversationId);
    return settings;
  }

  /** Run a write; when it fails, put back what this process had `before` it. */
  function write<T>(conversationId: string, before: Partial<CompactionSettings> | undefined, run: () => Promise<T>): Promise<T> {
    return writes.run(conversationId, run).catch((error: unknown) => {
      putBack(live, check, conversationId, before);
      throw error;
    });
  }

  return {
    refresh,
    async ensure(conversationId) {
      if (!loaded.has(conversationId)) await refresh(conversationId);
    },
    read,
    save(conversationId, change) {
      if (typeof change !== 'object' || change === null || Array.isArray(change)) throw new InvalidConfigError('compaction', 'must be an object of settings');
      const before = live.storedOf(conversationId);
      // Checked, and in force here, on the call: a refused change queues no write.
      live.setStored(conversationId, mergeSettings(before ?? {}, change), check);
      return write(conversationId, before, async () => {
        // Merged over the row as stored now, not as this process last saw it: another process may have written since.
        const merged = mergeSettings((await storedRow(conversationId)) ?? {}, change);
        apply(conversationId, merged);
        await store.setConversationSettings(conversationId, merged);
        loaded.add(conversationId);
        return live.of(conversationId);
      });
    },
    reset(conversationId) {
      const problem = conversationIdProblem(conversationId);
      if (problem !== undefined) throw new InvalidConfigError('conversationId', problem);
      const before = live.storedOf(conversationId);
      live.setStored(conversationId, undefined);
      return write(conversationId, before, () => store.clearConversationSettings(conversationId));
    },
  };
}
