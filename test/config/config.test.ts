/**
 * Configuration at the boundary: every bad value from the environment, code overrides or compaction
 * settings is refused with an InvalidConfigError naming the variable or field; good values resolve.
 */
import { describe, expect, it } from 'vitest';
import { type CompactionSettings, DEFAULT_COMPACTION_SETTINGS, resolveCompactionSettings } from '../../src/compaction/compaction-settings.js';
import { resolveRuntimeConfig } from '../../src/config.js';
import { DEFAULT_MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES_LIMIT, validateMaxMessageBytes } from '../../src/persistence/message-size-limit.js';
import { InvalidConfigError } from '../../src/errors.js';

function expectConfigError(run: () => unknown, field: string): void {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(InvalidConfigError);
  expect(thrown).toMatchObject({ code: 'invalid_config', field, message: expect.stringContaining(`Invalid config field ${field}:`) });
}

describe('resolveRuntimeConfig', () => {
  it('defaults maxMessageBytes to 10 MiB and reads MEMFOLD_MAX_MESSAGE_BYTES', () => {
    expect(resolveRuntimeConfig({}, {}).maxMessageBytes).toBe(DEFAULT_MAX_MESSAGE_BYTES);
    expect(DEFAULT_MAX_MESSAGE_BYTES).toBe(10 * 1024 * 1024);
    expect(resolveRuntimeConfig({}, { MEMFOLD_MAX_MESSAGE_BYTES: '1048576' }).maxMessageBytes).toBe(1_048_576);
    expect(resolveRuntimeConfig({}, { MEMFOLD_MAX_MESSAGE_BYTES: ` ${MAX_MESSAGE_BYTES_LIMIT} ` }).maxMessageBytes).toBe(MAX_MESSAGE_BYTES_LIMIT);
    expect(resolveRuntimeConfig({ maxMessageBytes: 500 }, { MEMFOLD_MAX_MESSAGE_BYTES: '1000' }).maxMessageBytes).toBe(500);
  });

  it('treats empty and blank variables as unset', () => {
    const config = resolveRuntimeConfig({}, { MEMFOLD_MAX_MESSAGE_BYTES: '', MEMFOLD_MODEL_TIMEOUT_MS: '   ', MEMFOLD_NAMESPACE: ' ' });
    expect(config).toMatchObject({ maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES, modelTimeoutMs: 60_000, namespace: 'default' });
  });

  it.each([
    ['MEMFOLD_MAX_MESSAGE_BYTES', '-1'],
    ['MEMFOLD_MAX_MESSAGE_BYTES', '0'],
    ['MEMFOLD_MAX_MESSAGE_BYTES', 'ten megabytes'],
    ['MEMFOLD_MAX_MESSAGE_BYTES', '1e6'],
    ['MEMFOLD_MAX_MESSAGE_BYTES', '0x100'],
    ['MEMFOLD_MAX_MESSAGE_BYTES', '1.5'],
    ['MEMFOLD_MAX_MESSAGE_BYTES', 'NaN'],
    ['MEMFOLD_MAX_MESSAGE_BYTES', 'Infinity'],
    ['MEMFOLD_MAX_MESSAGE_BYTES', String(MAX_MESSAGE_BYTES_LIMIT + 1)],
    ['MEMFOLD_MAX_MESSAGE_BYTES', '99999999999999999999'],
    ['MEMFOLD_MODEL_TIMEOUT_MS', '-5'],
    ['MEMFOLD_MODEL_TIMEOUT_MS', '0'],
    ['MEMFOLD_MODEL_TIMEOUT_MS', 'soon'],
    ['MEMFOLD_MODEL_MAX_RETRIES', '-1'],
    ['MEMFOLD_MODEL_MAX_RETRIES', 'two'],
    ['MEMFOLD_MODEL_CONCURRENCY', '0'],
    ['MEMFOLD_MODEL_CONCURRENCY', '4 threads'],
    ['MEMFOLD_NAMESPACE', "a'; drop table messages; --"],
    ['MEMFOLD_NAMESPACE', 'a%'],
    ['MEMFOLD_NAMESPACE', 'x'.repeat(65)],
  ])('refuses %s=%j naming the variable', (name, value) => {
    expectConfigError(() => resolveRuntimeConfig({}, { [name]: value }), name === 'MEMFOLD_NAMESPACE' ? 'namespace' : name);
  });

  it.each([
    [{ maxMessageBytes: 0 }, 'config.maxMessageBytes'],
    [{ maxMessageBytes: MAX_MESSAGE_BYTES_LIMIT + 1 }, 'config.maxMessageBytes'],
    [{ maxMessageBytes: Number.NaN }, 'config.maxMessageBytes'],
    [{ maxMessageBytes: '1000' }, 'config.maxMessageBytes'],
    [{ modelTimeoutMs: -1 }, 'config.modelTimeoutMs'],
    [{ modelTimeoutMs: 1.5 }, 'config.modelTimeoutMs'],
    [{ modelMaxRetries: -1 }, 'config.modelMaxRetries'],
    [{ modelConcurrency: Number.POSITIVE_INFINITY }, 'config.modelConcurrency'],
    [{ home: 42 }, 'config.home'],
    [{ databaseUrl: '' }, 'config.databaseUrl'],
    [{ namespace: 'bad namespace' }, 'namespace'],
    [{ lanceDbUri: '/tmp/x' }, 'config.lanceDbUri'],
    [null, 'config'],
  ])('refuses the override %j naming the field', (overrides, field) => {
    expectConfigError(() => resolveRuntimeConfig(overrides as never, {}), field);
  });

  it.each([
    ['DATABASE_URL', 'hello world', 'must be a URL'],
    ['DATABASE_URL', 'mysql://root:hunter2@db/app', 'must be a postgres or postgresql URL'],
    ['DATABASE_URL', 'http://root:hunter2@db/app', 'its scheme is "http"'],
    ['DATABASE_URL', 'root:hunter2@db/app', 'must be a postgres or postgresql URL'],
    ['OPENAI_BASE_URL', 'not a url', 'must be a URL'],
    ['OPENAI_BASE_URL', 'ftp://x', 'its scheme is "ftp"'],
    ['OPENAI_BASE_URL', 'file:///v1', 'must be a http or https URL'],
    ['OPENAI_BASE_URL', 'https://user:hunter2@:443', 'must be a URL'],
  ])('refuses %s=%j naming the variable, without echoing the value', (name, value, rule) => {
    let thrown: unknown;
    try {
      resolveRuntimeConfig({}, { [name]: value });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidConfigError);
    expect(thrown).toMatchObject({ field: name, message: expect.stringContaining(`Invalid config field ${name}: ${rule.startsWith('its') ? '' : rule}`) });
    expect((thrown as Error).message).toContain(rule);
    expect((thrown as Error).message).not.toContain('hunter2');
    expect((thrown as Error).message).not.toContain(value);
  });

  it('states the rule with the value given', () => {
    expect(() => resolveRuntimeConfig({}, { MEMFOLD_MODEL_TIMEOUT_MS: 'soon' })).toThrow(
      'Invalid config field MEMFOLD_MODEL_TIMEOUT_MS: must be an integer from 1 to 2147483647 ms, the longest timer Node keeps (got "soon")',
    );
    expect(() => resolveRuntimeConfig({}, { MEMFOLD_MAX_MESSAGE_BYTES: '0' })).toThrow(
      'Invalid config field MEMFOLD_MAX_MESSAGE_BYTES: must be an integer from 1 to 134217728 (got "0")',
    );
    expect(() => resolveRuntimeConfig({ modelTimeoutMs: 1.5 }, {})).toThrow(
      'Invalid config field config.modelTimeoutMs: must be an integer from 1 to 2147483647 ms, the longest timer Node keeps (got 1.5)',
    );
    expect(() => resolveRuntimeConfig({ lanceDbUri: '/x' } as never, {})).toThrow('Invalid config field config.lanceDbUri: unknown setting');
    expect(() => resolveRuntimeConfig({ home: 42 } as never, {})).toThrow('Invalid config field config.home: must be a non-empty string');
  });

  it('names the override, not the variable, when the bad URL comes from code', () => {
    expectConfigError(() => resolveRuntimeConfig({ databaseUrl: 'hello world' }, { DATABASE_URL: 'postgres://h/db' }), 'config.databaseUrl');
    expectConfigError(() => resolveRuntimeConfig({ openaiBaseUrl: 'ftp://x' }, {}), 'config.openaiBaseUrl');
  });

  it('accepts the URLs the README shows, and a socketless local PostgreSQL', () => {
    const config = resolveRuntimeConfig(
      {},
      {
        DATABASE_URL: 'postgres://memfold:memfold@127.0.0.1:5432/memfold',
        OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
      },
    );
    expect(config).toMatchObject({ databaseUrl: 'postgres://memfold:memfold@127.0.0.1:5432/memfold', openaiBaseUrl: 'http://127.0.0.1:11434/v1' });
    expect(resolveRuntimeConfig({}, { DATABASE_URL: 'postgresql:///memfold', OPENAI_BASE_URL: 'https://api.openai.com/v1' }).databaseUrl).toBe(
      'postgresql:///memfold',
    );
  });

  it("takes memfold's own names over the generic ones a host application may set, and names the one it refuses", () => {
    const env = {
      DATABASE_URL: 'mysql://app@db/app',
      MEMFOLD_DATABASE_URL: 'postgres://memfold@127.0.0.1:5432/memfold',
      OPENAI_BASE_URL: 'https://api.openai.com/v1',
      MEMFOLD_OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
      OPENAI_API_KEY: 'sk-app',
      MEMFOLD_OPENAI_API_KEY: 'sk-memfold',
    };
    expect(resolveRuntimeConfig({}, env)).toMatchObject({
      databaseUrl: 'postgres://memfold@127.0.0.1:5432/memfold',
      openaiBaseUrl: 'http://127.0.0.1:11434/v1',
      openaiApiKey: 'sk-memfold',
    });
    // The generic names still work alone, as documented fallbacks.
    expect(resolveRuntimeConfig({}, { DATABASE_URL: 'postgres://x@h/db', OPENAI_API_KEY: 'sk-app' })).toMatchObject({
      databaseUrl: 'postgres://x@h/db',
      openaiApiKey: 'sk-app',
    });
    expectConfigError(() => resolveRuntimeConfig({}, { MEMFOLD_DATABASE_URL: 'mysql://x@h/db' }), 'MEMFOLD_DATABASE_URL');
    expectConfigError(() => resolveRuntimeConfig({}, { DATABASE_URL: 'mysql://x@h/db' }), 'DATABASE_URL');
    expectConfigError(() => resolveRuntimeConfig({}, { MEMFOLD_OPENAI_BASE_URL: 'ftp://x' }), 'MEMFOLD_OPENAI_BASE_URL');
  });

  it('validateMaxMessageBytes, shared by the store option, names the field it is given', () => {
    expect(validateMaxMessageBytes(1, 'maxMessageBytes')).toBe(1);
    expectConfigError(() => validateMaxMessageBytes(-1, 'maxMessageBytes'), 'maxMessageBytes');
    expectConfigError(() => validateMaxMessageBytes(undefined, 'store.maxMessageBytes'), 'store.maxMessageBytes');
  });
});

describe('resolveCompactionSettings', () => {
  it('returns the defaults, and scales the budgets with a small window', () => {
    expect(resolveCompactionSettings()).toEqual(DEFAULT_COMPACTION_SETTINGS);
    const small = resolveCompactionSettings({ contextWindow: 4_000 });
    expect(small).toMatchObject({ contextWindow: 4_000, trigger: 3_200, keepRecentTokens: 1_000, chunkTokens: 3_200 });
  });

  it('reserves 20% of the window up to 200k tokens, then min(20%, 20,000); the target and minimum freed follow the window', () => {
    expect(resolveCompactionSettings({ contextWindow: 16_000 })).toMatchObject({ trigger: 12_800, targetTokens: 5_600, minFreedTokens: 1_600 });
    expect(resolveCompactionSettings({ contextWindow: 128_000 }).trigger).toBe(102_400);
    expect(resolveCompactionSettings({ contextWindow: 200_000 }).trigger).toBe(160_000);
    expect(resolveCompactionSettings({ contextWindow: 1_000_000 }).trigger).toBe(980_000);
    // A trigger given below the default target pulls the target and the minimum under it.
    const low = resolveCompactionSettings({ contextWindow: 16_000, trigger: 6_000 });
    expect(low.targetTokens).toBeLessThan(6_000);
    expect(low.minFreedTokens).toBeLessThanOrEqual(6_000 - low.targetTokens);
  });

  it.each([
    [{ contextWindw: 4_000 }, 'compaction.contextWindw'],
    [{ contextWindow: Number.NaN }, 'compaction.contextWindow'],
    [{ contextWindow: Number.POSITIVE_INFINITY }, 'compaction.contextWindow'],
    [{ contextWindow: '4000' }, 'compaction.contextWindow'],
    [{ contextWindow: 100 }, 'compaction.contextWindow'],
    [{ contextWindow: 4_000.5 }, 'compaction.contextWindow'],
    [{ keepRecentTokens: -1 }, 'compaction.keepRecentTokens'],
    [{ keepRecentMessages: -3 }, 'compaction.keepRecentMessages'],
    [{ keepFirstTurns: 0.5 }, 'compaction.keepFirstTurns'],
    [{ chunkTokens: 10 }, 'compaction.chunkTokens'],
    [{ maxSummaryTokens: 0 }, 'compaction.maxSummaryTokens'],
    [{ clipLast: 0 }, 'compaction.clipLast'],
    [{ toolOutputMaxLines: 0 }, 'compaction.toolOutputMaxLines'],
    [{ warnAt: 0 }, 'compaction.warnAt'],
    [{ warnAt: 1.5 }, 'compaction.warnAt'],
    [{ summarizerInputShare: -0.1 }, 'compaction.summarizerInputShare'],
    [{ trigger: 200_000 }, 'compaction.trigger'],
    [{ trigger: 0 }, 'compaction.trigger'],
    [{ contextWindow: 4_000, keepRecentTokens: 3_500 }, 'compaction.keepRecentTokens'],
    [{ transcriptSegmentTokens: 8 }, 'compaction.transcriptSegmentTokens'],
    [{ contextWindow: 16_000, targetTokens: 12_800 }, 'compaction.targetTokens'],
    [{ targetTokens: -1 }, 'compaction.targetTokens'],
    [{ contextWindow: 16_000, targetTokens: 8_000, minFreedTokens: 5_000 }, 'compaction.minFreedTokens'],
    [{ minFreedTokens: 0.5 }, 'compaction.minFreedTokens'],
    [{ sessionScope: 'fixed' }, 'compaction.sessionScope'],
    [{ sessionScope: 2 }, 'compaction.sessionScope'],
    [{ sessionScope: null }, 'compaction.sessionScope'],
    [{ sessionScope: 'fixedCount', keepSessions: 0 }, 'compaction.keepSessions'],
    [{ sessionScope: 'fixedCount', keepSessions: 1.5 }, 'compaction.keepSessions'],
    [{ keepSessions: '2' }, 'compaction.keepSessions'],
    [{ sessionGapMinutes: -1 }, 'compaction.sessionGapMinutes'],
    [{ sessionGapMinutes: Number.POSITIVE_INFINITY }, 'compaction.sessionGapMinutes'],
    [{ sessionGapMinutes: '30' }, 'compaction.sessionGapMinutes'],
    [{ mode: 'soft' }, 'compaction.mode'],
    [{ mode: 'Overlay' }, 'compaction.mode'],
    [{ mode: 1 }, 'compaction.mode'],
    [{ mode: null }, 'compaction.mode'],
    [null, 'compaction'],
    [[1, 2], 'compaction'],
  ])('refuses %j naming the field', (input, field) => {
    expectConfigError(() => resolveCompactionSettings(input as never), field);
  });

  it('takes the session settings: no scope and a 30-minute gap by default, and resolving twice changes nothing', () => {
    expect(DEFAULT_COMPACTION_SETTINGS).toMatchObject({ sessionScope: 'none', keepSessions: 2, sessionGapMinutes: 30 });
    const scoped = resolveCompactionSettings({ contextWindow: 16_000, sessionScope: 'fixedCount', keepSessions: 3, sessionGapMinutes: 0.5 });
    expect(scoped).toMatchObject({ sessionScope: 'fixedCount', keepSessions: 3, sessionGapMinutes: 0.5 });
    expect(resolveCompactionSettings(scoped)).toEqual(scoped);
    expect(resolveCompactionSettings({ sessionScope: 'tokenBudget', sessionGapMinutes: 0 })).toMatchObject({
      sessionScope: 'tokenBudget',
      sessionGapMinutes: 0,
    });
    expect(() => resolveCompactionSettings({ sessionScope: 'fixed' as never })).toThrow(
      'Invalid config field compaction.sessionScope: must be one of none, fixedCount, tokenBudget (got "fixed")',
    );
  });

  it("takes mode 'delete' (the default) or 'overlay', and says which in the error", () => {
    expect(resolveCompactionSettings().mode).toBe('delete');
    expect(resolveCompactionSettings({ mode: 'overlay', contextWindow: 4_000 })).toMatchObject({ mode: 'overlay', trigger: 3_200 });
    expect(() => resolveCompactionSettings({ mode: 'soft' as never })).toThrow(
      'Invalid config field compaction.mode: must be one of delete, overlay (got "soft")',
    );
  });

  it('ignores settings given as undefined (spread from optional options)', () => {
    // A JavaScript caller (or one without exactOptionalPropertyTypes) can pass undefined for a setting.
    const unset = { contextWindow: undefined, warnAt: undefined } as unknown as Partial<CompactionSettings>;
    expect(resolveCompactionSettings(unset)).toEqual(DEFAULT_COMPACTION_SETTINGS);
  });
});

describe('background job settings', () => {
  it('default to 2 retries, a 30 s heartbeat and a 10 s supervision, and read their variables', () => {
    expect(resolveRuntimeConfig({}, {})).toMatchObject({ jobRetries: 2, jobHeartbeatSeconds: 30, jobSuperviseSeconds: 10 });
    const env = { MEMFOLD_JOB_RETRIES: '0', MEMFOLD_JOB_HEARTBEAT_SECONDS: '10', MEMFOLD_JOB_SUPERVISE_SECONDS: '1' };
    expect(resolveRuntimeConfig({}, env)).toMatchObject({ jobRetries: 0, jobHeartbeatSeconds: 10, jobSuperviseSeconds: 1 });
  });

  it.each([
    ['MEMFOLD_JOB_RETRIES', '-1'],
    ['MEMFOLD_JOB_HEARTBEAT_SECONDS', '5'],
    ['MEMFOLD_JOB_SUPERVISE_SECONDS', '0'],
  ])('refuses %s=%s naming it', (name, value) => expectConfigError(() => resolveRuntimeConfig({}, { [name]: value }), name));

  it('refuses a background setting that is not a boolean, naming it', () => {
    expectConfigError(() => resolveCompactionSettings({ background: 'yes' as unknown as boolean }), 'compaction.background');
  });
});
