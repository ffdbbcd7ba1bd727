/**
 * The background jobs' defaults come from `JOB_DEFAULTS` alone: the runtime config's `MEMFOLD_JOB_*` defaults, the
 * in-process queue's retries and delays, and the worker's `--concurrency` help all read it.
 */
import { expect, it } from 'vitest';
import { DEFAULT_JOB_SCHEMA, type JobOutcome } from '../../src/background/compaction-queue.js';
import { createInProcessQueue } from '../../src/background/in-process-queue.js';
import { JOB_DEFAULTS } from '../../src/background/job-defaults.js';
import { usage } from '../../src/cli/args.js';
import type { CompactionResult } from '../../src/compaction/compaction-result.js';
import { resolveRuntimeConfig } from '../../src/config.js';

it('the runtime config defaults its job settings to JOB_DEFAULTS', () => {
  expect(resolveRuntimeConfig({}, {})).toMatchObject({
    jobRetries: JOB_DEFAULTS.retries,
    jobHeartbeatSeconds: JOB_DEFAULTS.heartbeatSeconds,
    jobSuperviseSeconds: JOB_DEFAULTS.superviseSeconds,
  });
  expect(DEFAULT_JOB_SCHEMA).toBe(JOB_DEFAULTS.schema);
});

it('the in-process queue retries JOB_DEFAULTS.retries times, from JOB_DEFAULTS.retryDelaySeconds, doubling', async () => {
  const delays: number[] = [];
  const outcomes: JobOutcome[] = [];
  let attempts = 0;
  const failed = { status: 'failed', failureCode: 'archive_failed', error: 'down', fallbacks: [], modelCalls: 0, tokensBefore: 1, tokensAfter: 1 };
  const queue = createInProcessQueue(
    async () => {
      attempts++;
      return failed as unknown as CompactionResult;
    },
    { sleep: async (ms) => void delays.push(ms), onOutcome: (outcome) => outcomes.push(outcome) },
  );
  await queue.enqueue('a');
  await queue.close(5_000);
  expect(attempts).toBe(JOB_DEFAULTS.retries + 1);
  expect(delays).toEqual(Array.from({ length: JOB_DEFAULTS.retries }, (_, i) => JOB_DEFAULTS.retryDelaySeconds * 1000 * 2 ** i));
  expect(outcomes).toEqual([expect.objectContaining({ status: 'failed', attempt: JOB_DEFAULTS.retries })]);
});

it("the worker's help states JOB_DEFAULTS.workerConcurrency as its default", () => {
  expect(usage('worker')).toContain(`compactions this worker runs at once (default ${JOB_DEFAULTS.workerConcurrency})`);
});
