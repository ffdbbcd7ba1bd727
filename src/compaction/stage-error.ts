/**
 * Failures as data: each step runs under the failure code of its stage, so a compaction that fails
 * reports where it stopped (`CompactionResult.failureCode`) without a step having to know the result.
 */
import { MemfoldError, errorMessage } from '../errors.js';
import { ReadbackError } from './batches/archive-writer.js';
import type { CompactionFailureCode } from './compaction-result.js';

/** A failure at a known stage (`failureCode`); anything else is `unexpected`. */
export class StageError extends MemfoldError {
  static override readonly kind: string = 'memfold.StageError';
  constructor(
    readonly failureCode: CompactionFailureCode,
    readonly original: unknown,
  ) {
    super('compaction_failed', errorMessage(original), { cause: original });
    this.name = 'StageError';
  }
}

/**
 * The attempts a remote client's retry loop made before it gave the failure up, when it came out of one (a model or
 * embedding call: `details.attempts`, anywhere in the cause chain; not when the call was aborted). Retrying the
 * compaction would stack on that loop.
 */
export function clientAttempts(error: unknown): number | undefined {
  for (let e = error, depth = 0; e !== undefined && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (StageError.isInstance(e)) e = e.original;
    if (MemfoldError.isInstance(e) && Array.isArray(e.details['attempts'])) {
      // An aborted call was stopped, not given up: a retry of the job (by another worker, say) may well succeed.
      return e.details['stoppedBy'] === 'aborted' ? undefined : e.details['attempts'].length;
    }
    if (typeof e !== 'object' || e === null) return undefined;
  }
  return undefined;
}

/** `{ clientAttempts }` of a failure for a CompactionResult, or nothing when no client retry loop gave it up. */
export function clientAttemptsOf(error: unknown): { clientAttempts?: number } {
  const attempts = clientAttempts(error);
  return attempts === undefined ? {} : { clientAttempts: attempts };
}

/** Failures whose origin the error itself tells, wherever in the pipeline they happen (re-summarization both folds and writes). */
function failureOrigin(error: unknown): CompactionFailureCode | undefined {
  if (ReadbackError.isInstance(error)) return 'readback_failed';
  if (!MemfoldError.isInstance(error)) return undefined;
  if (error.code === 'archive_error' || error.code === 'embedding_error') return 'archive_failed';
  if (error.code === 'model_error') return 'model_failed';
  return undefined;
}

/** Run `work`, turning what it throws into a StageError of `code` (or of the origin the error names). */
export async function atStage<T>(code: CompactionFailureCode, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (StageError.isInstance(error)) throw error;
    throw new StageError(failureOrigin(error) ?? code, error);
  }
}

/** Stop between steps when the caller aborted: nothing after this point is written. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new StageError('aborted', signal.reason);
}
