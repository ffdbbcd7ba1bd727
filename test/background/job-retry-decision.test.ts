/**
 * Which failed compactions a background job retries: not one whose model or embedding call the client's retry loop
 * gave up (it retried already), but one it did not retry (an aborted call, a failure elsewhere). The client errors
 * come from the real retry loop (`retryWithBackoff`), with its sleeps injected.
 */
import { describe, expect, it } from 'vitest';
import { jobRetryable, outcomeOf } from '../../src/background/compaction-queue.js';
import type { CompactionResult } from '../../src/compaction/compaction-result.js';
import { clientAttemptsOf, StageError } from '../../src/compaction/stage-error.js';
import { MemfoldError } from '../../src/errors.js';
import { retryWithBackoff } from '../../src/openai/openai-retry.js';

const http500 = () => new MemfoldError('embedding_error', 'http 500', { retryable: true, details: { reason: 'http 500', status: 500 } });

/** What the client's retry loop throws when `fn` keeps failing; `abortAfter` aborts its signal after that many attempts. */
async function clientFailure(options: { maxRetries: number; abortAfter?: number }): Promise<unknown> {
  const controller = new AbortController();
  let calls = 0;
  const failing = async () => {
    calls++;
    if (calls === options.abortAfter) controller.abort(new Error('worker stopping'));
    throw http500();
  };
  return retryWithBackoff(failing, {
    maxRetries: options.maxRetries,
    initialDelayMs: 1,
    maxDelayMs: 1,
    sleep: async () => undefined,
    signal: controller.signal,
    errorCode: 'embedding_error',
  }).catch((error: unknown) => error);
}

function outcomeOfFailure(error: unknown) {
  const result = {
    status: 'failed',
    failureCode: 'archive_failed',
    error: 'x',
    fallbacks: [],
    modelCalls: 0,
    tokensBefore: 9,
    tokensAfter: 9,
    ...clientAttemptsOf(error),
  };
  return outcomeOf(result as unknown as CompactionResult, 'c', 'job-1', 0);
}

describe('a failed compaction job', () => {
  it('is not retried when the client gave the call up after its own retries, wrapped in a stage or an archive error', async () => {
    const gaveUp = await clientFailure({ maxRetries: 2 });
    expect(clientAttemptsOf(new StageError('archive_failed', gaveUp))).toEqual({ clientAttempts: 3 });
    const wrapped = new MemfoldError('archive_error', 'embedding failed', { cause: gaveUp });
    const outcome = outcomeOfFailure(new StageError('archive_failed', wrapped));
    expect({ clientAttempts: outcome.clientAttempts, retried: jobRetryable(outcome) }).toEqual({ clientAttempts: 3, retried: false });
  });

  it('is not retried when the client made one attempt because it was told to retry none', async () => {
    expect(jobRetryable(outcomeOfFailure(await clientFailure({ maxRetries: 0 })))).toBe(false);
  });

  it('is retried when the call was aborted (a stopping worker), or the failure came from no client', async () => {
    const aborted = await clientFailure({ maxRetries: 2, abortAfter: 1 });
    expect(MemfoldError.isInstance(aborted) && aborted.details['stoppedBy']).toBe('aborted');
    expect(jobRetryable(outcomeOfFailure(new StageError('model_failed', aborted)))).toBe(true);
    expect(jobRetryable(outcomeOfFailure(new StageError('commit_failed', new Error('the PostgreSQL connection was lost'))))).toBe(true);
  });

  it('that compacted or skipped is never retried', () => {
    const done = outcomeOf({ status: 'compacted', fallbacks: [], modelCalls: 1, tokensBefore: 9, tokensAfter: 3 } as unknown as CompactionResult, 'c', 'j', 0);
    expect(jobRetryable(done)).toBe(false);
  });
});
