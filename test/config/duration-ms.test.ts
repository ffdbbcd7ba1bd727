/**
 * Every millisecond setting and option that becomes a timer stops at 2^31-1, the longest delay Node keeps: a longer
 * one would be replaced by 1 ms, and every model request would time out at once. Each is refused naming its field;
 * 2^31-1 itself is accepted, and the default deadline (twice the timeout) never passes it.
 */
import { describe, expect, it } from 'vitest';
import { resolveRuntimeConfig } from '../../src/config.js';
import { InvalidArgumentError, InvalidConfigError } from '../../src/errors.js';
import { createMemfold } from '../../src/memfold.js';
import { createCircuitBreaker } from '../../src/openai/openai-circuit-breaker.js';
import { createOpenAIEmbedder } from '../../src/openai/openai-embedder.js';
import { createOpenAISummarizer } from '../../src/openai/openai-summarizer.js';

/** The longest delay a Node timer keeps (`MAX_TIMER_MS`), and one more. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const TOO_LONG = 2 ** 31;

function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('the environment and config overrides', () => {
  it.each(['MEMFOLD_MODEL_TIMEOUT_MS', 'MEMFOLD_MODEL_DEADLINE_MS', 'MEMFOLD_MODEL_BREAKER_COOLDOWN_MS'])('refuses %s=2147483648, naming it', (name) => {
    const error = thrownBy(() => resolveRuntimeConfig({}, { [name]: String(TOO_LONG) }));
    expect(error).toBeInstanceOf(InvalidConfigError);
    expect(error).toMatchObject({ field: name, message: expect.stringContaining('2147483647 ms') });
    expect(resolveRuntimeConfig({}, { [name]: String(MAX_TIMER_MS) })).toBeTruthy();
  });

  it.each(['modelTimeoutMs', 'modelDeadlineMs', 'modelBreakerCooldownMs'] as const)('refuses config.%s of 2^31, naming it', (key) => {
    expect(thrownBy(() => resolveRuntimeConfig({ [key]: TOO_LONG }, {}))).toMatchObject({ code: 'invalid_config', field: `config.${key}` });
  });

  it('refuses job timer periods over a day, naming them', () => {
    for (const name of ['MEMFOLD_JOB_HEARTBEAT_SECONDS', 'MEMFOLD_JOB_SUPERVISE_SECONDS']) {
      expect(
        thrownBy(() => resolveRuntimeConfig({}, { [name]: '4294968' })),
        name,
      ).toMatchObject({ code: 'invalid_config', field: name });
      expect(resolveRuntimeConfig({}, { [name]: '86400' }), name).toBeTruthy();
    }
    expect(thrownBy(() => resolveRuntimeConfig({ jobHeartbeatSeconds: 86_401 }, {}))).toMatchObject({ field: 'config.jobHeartbeatSeconds' });
  });

  it('keeps the default deadline, twice the timeout, within a timer', () => {
    const config = resolveRuntimeConfig({}, { MEMFOLD_MODEL_TIMEOUT_MS: String(MAX_TIMER_MS) });
    expect(config.modelTimeoutMs).toBe(MAX_TIMER_MS);
    expect(config.modelDeadlineMs).toBe(MAX_TIMER_MS);
  });
});

describe('options given in code', () => {
  it('refuses the model adapters a timeout, deadline or cooldown over 2^31-1, naming it', () => {
    const base = { model: 'm', maxRetries: 0 };
    const cases: Array<[() => unknown, string]> = [
      [() => createOpenAISummarizer({ ...base, timeoutMs: TOO_LONG }), 'timeoutMs'],
      [() => createOpenAISummarizer({ ...base, timeoutMs: 1_000, deadlineMs: TOO_LONG }), 'deadlineMs'],
      [() => createOpenAIEmbedder({ ...base, timeoutMs: TOO_LONG }), 'timeoutMs'],
      [() => createOpenAIEmbedder({ ...base, timeoutMs: 1_000, deadlineMs: TOO_LONG }), 'deadlineMs'],
      [() => createCircuitBreaker({ cooldownMs: TOO_LONG }), 'cooldownMs'],
    ];
    for (const [run, field] of cases) {
      const error = thrownBy(run);
      expect(error, field).toBeInstanceOf(InvalidArgumentError);
      expect(error, field).toMatchObject({ field });
    }
    expect(() => createOpenAISummarizer({ ...base, timeoutMs: MAX_TIMER_MS })).not.toThrow();
  });

  it('refuses close({ waitMs: 2 ** 31 }) naming waitMs, and closes with a valid one', async () => {
    const memfold = await createMemfold({ store: 'memory', env: {} });
    await expect(memfold.close({ waitMs: TOO_LONG })).rejects.toMatchObject({ code: 'invalid_config', field: 'waitMs' });
    await expect(memfold.compactor.drain(TOO_LONG)).rejects.toMatchObject({ code: 'invalid_argument', field: 'timeoutMs' });
    await memfold.close({ waitMs: MAX_TIMER_MS });
  });
});
