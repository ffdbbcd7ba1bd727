/**
 * Settings that may change while memfold runs: the settings every conversation starts from, and overrides of one
 * conversation (its window, target, scope...), each resolved as `createMemfold({ compaction })` resolves them, so a
 * new window brings its own trigger and budgets unless they are given. Each compaction reads them when it starts.
 * Kept in the process: every process applies its own `configure` calls.
 */
import { requireConversationId } from '../conversation/conversation-id.js';
import { InvalidConfigError } from '../errors.js';
import { resolveCompactionSettings, type CompactionSettings } from './compaction-settings.js';

/** A change of settings: the keys to set, and keys set to `undefined` to put back to their defaults. */
export type SettingsChange = { [K in keyof CompactionSettings]?: CompactionSettings[K] | undefined };

export interface LiveSettings {
  /** The settings of conversations without overrides. */
  readonly base: CompactionSettings;
  /** The settings of one conversation: the base given settings with its overrides over them. */
  of(conversationId: string): CompactionSettings;
  /**
   * Change settings from the next compaction on: those every conversation starts from, or, with `conversationId`,
   * one conversation's. `partial` merges over what was given before (a key set to `undefined` goes back to its
   * default). Validated as a whole before anything changes: a bad value throws `InvalidConfigError` naming
   * `compaction.<key>`, and the settings stay as they were; so does a throw of `check`, which sees every settings
   * object the change would put in force. Returns the settings now in force for that scope.
   */
  configure(partial: SettingsChange, scope?: { conversationId: string }, check?: (settings: CompactionSettings) => void): CompactionSettings;
  /** Moves on with every change, so what was derived from the settings knows to derive again. */
  readonly version: number;
}

/** Given settings merged, keys set to `undefined` dropped (back to their defaults). */
function merge(given: Partial<CompactionSettings>, partial: SettingsChange): Partial<CompactionSettings> {
  return Object.fromEntries(Object.entries({ ...given, ...partial }).filter(([, value]) => value !== undefined)) as Partial<CompactionSettings>;
}

export function createLiveSettings(initial: SettingsChange = {}): LiveSettings {
  let given = merge({}, initial);
  let base = resolveCompactionSettings(given);
  /** Per conversation: its overrides, and its settings resolved over the base given settings (undefined until asked). */
  const overrides = new Map<string, { given: Partial<CompactionSettings>; resolved?: CompactionSettings }>();
  let version = 0;

  return {
    get base() {
      return base;
    },
    get version() {
      return version;
    },
    of(conversationId) {
      const own = overrides.get(conversationId);
      if (own === undefined) return base;
      own.resolved ??= resolveCompactionSettings(merge(given, own.given));
      return own.resolved;
    },
    configure(partial, scope, check = () => undefined) {
      if (typeof partial !== 'object' || partial === null || Array.isArray(partial))
        throw new InvalidConfigError('compaction', 'must be an object of settings');
      if (scope !== undefined) requireConversationId(scope.conversationId, 'conversationId', (field, rule) => new InvalidConfigError(field, rule));
      if (scope === undefined) {
        const next = merge(given, partial);
        const resolved = resolveCompactionSettings(next);
        check(resolved);
        // Every conversation's overrides must still make sense over the new base: checked before anything changes.
        const rebased = [...overrides].map(([id, own]) => {
          const settings = resolveCompactionSettings(merge(next, own.given));
          check(settings);
          return [id, { given: own.given, resolved: settings }] as const;
        });
        given = next;
        base = resolved;
        for (const [id, own] of rebased) overrides.set(id, own);
        version++;
        return base;
      }
      const own = merge(overrides.get(scope.conversationId)?.given ?? {}, partial);
      const resolved = resolveCompactionSettings(merge(given, own));
      check(resolved);
      overrides.set(scope.conversationId, { given: own, resolved });
      version++;
      return resolved;
    },
  };
}
