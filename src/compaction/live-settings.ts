/**
 * Settings that may change while memfold runs, in three layers, each resolved as `createMemfold({ compaction })`
 * resolves them (a new window brings its own trigger and budgets unless they are given):
 * - the base: the settings every conversation of this process starts from;
 * - a conversation's stored overrides: what the live store keeps for it (`stored-settings.ts` reads and writes them),
 *   shared by every process on that store;
 * - a conversation's process overrides: `configure(..., { conversationId })` here, in this process only.
 * Later layers win. Each compaction reads them when it starts.
 */
import { requireConversationId } from '../conversation/conversation-id.js';
import { InvalidConfigError } from '../errors.js';
import { resolveCompactionSettings, type CompactionSettings } from './compaction-settings.js';

/** A change of settings: the keys to set, and keys set to `undefined` to put back to their defaults. */
export type SettingsChange = { [K in keyof CompactionSettings]?: CompactionSettings[K] | undefined };

/** Sees every settings object a change would put in force; throws to refuse it. */
export type SettingsCheck = (settings: CompactionSettings) => void;

export interface LiveSettings {
  /** The settings of conversations without overrides. */
  readonly base: CompactionSettings;
  /** The settings of one conversation: the base given settings, its stored overrides, then its process overrides. */
  of(conversationId: string): CompactionSettings;
  /**
   * Change settings from the next compaction on: those every conversation starts from, or, with `conversationId`,
   * one conversation's process overrides. `partial` merges over what was given before (a key set to `undefined` goes
   * back to its default). Validated as a whole before anything changes: a bad value throws `InvalidConfigError`
   * naming `compaction.<key>`, and the settings stay as they were; so does a throw of `check`, which sees every
   * settings object the change would put in force. Returns the settings now in force for that scope.
   */
  configure(partial: SettingsChange, scope?: { conversationId: string }, check?: SettingsCheck): CompactionSettings;
  /** The conversation's stored overrides as this process last read or wrote them (undefined: none known). */
  storedOf(conversationId: string): Partial<CompactionSettings> | undefined;
  /** Put `stored` (undefined: none) as the conversation's stored overrides, validated first; returns its settings. */
  setStored(conversationId: string, stored: Partial<CompactionSettings> | undefined, check?: SettingsCheck): CompactionSettings;
  /** Moves on with every change, so what was derived from the settings knows to derive again. */
  readonly version: number;
}

type Given = Partial<CompactionSettings>;

/** Given settings merged, keys set to `undefined` dropped (back to their defaults). */
export function mergeSettings(given: Given, partial: SettingsChange): Given {
  return Object.fromEntries(Object.entries({ ...given, ...partial }).filter(([, value]) => value !== undefined)) as Given;
}

/** A conversation's layers over the base, and its settings resolved (undefined until asked). */
interface Entry {
  stored?: Given | undefined;
  own?: Given | undefined;
  resolved?: CompactionSettings;
}

function resolveEntry(base: Given, entry: Entry, check: SettingsCheck): CompactionSettings {
  const settings = resolveCompactionSettings(mergeSettings(mergeSettings(base, entry.stored ?? {}), entry.own ?? {}));
  check(settings);
  return settings;
}

const sameGiven = (a: Given | undefined, b: Given | undefined) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

const none: SettingsCheck = () => undefined;

function requireScope(conversationId: unknown): void {
  requireConversationId(conversationId, 'conversationId', (field, rule) => new InvalidConfigError(field, rule));
}

export function createLiveSettings(initial: SettingsChange = {}): LiveSettings {
  let given = mergeSettings({}, initial);
  let base = resolveCompactionSettings(given);
  const entries = new Map<string, Entry>();
  let version = 0;

  /** Put an entry in force, validated first; an entry with no layer left is dropped. */
  function put(conversationId: string, entry: Entry, check: SettingsCheck): CompactionSettings {
    const resolved = resolveEntry(given, entry, check);
    if (entry.stored === undefined && entry.own === undefined) entries.delete(conversationId);
    else entries.set(conversationId, { ...entry, resolved });
    version++;
    return resolved;
  }

  function configureBase(partial: SettingsChange, check: SettingsCheck): CompactionSettings {
    const next = mergeSettings(given, partial);
    const resolved = resolveCompactionSettings(next);
    check(resolved);
    // Every conversation's overrides must still make sense over the new base: checked before anything changes.
    const rebased = [...entries].map(([id, entry]) => [id, { ...entry, resolved: resolveEntry(next, entry, check) }] as const);
    given = next;
    base = resolved;
    for (const [id, entry] of rebased) entries.set(id, entry);
    version++;
    return base;
  }

  return {
    get base() {
      return base;
    },
    get version() {
      return version;
    },
    of(conversationId) {
      const entry = entries.get(conversationId);
      if (entry === undefined) return base;
      entry.resolved ??= resolveEntry(given, entry, none);
      return entry.resolved;
    },
    configure(partial, scope, check = none) {
      if (typeof partial !== 'object' || partial === null || Array.isArray(partial))
        throw new InvalidConfigError('compaction', 'must be an object of settings');
      if (scope === undefined) return configureBase(partial, check);
      requireScope(scope.conversationId);
      const entry = entries.get(scope.conversationId) ?? {};
      return put(scope.conversationId, { stored: entry.stored, own: mergeSettings(entry.own ?? {}, partial) }, check);
    },
    storedOf: (conversationId) => entries.get(conversationId)?.stored,
    setStored(conversationId, stored, check = none) {
      requireScope(conversationId);
      const entry = entries.get(conversationId) ?? {};
      // Reading the same overrides again changes nothing: no new version, so nothing derived is made again.
      if (sameGiven(entry.stored, stored)) return this.of(conversationId);
      return put(conversationId, { stored, own: entry.own }, check);
    },
  };
}
