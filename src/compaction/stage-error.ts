/**
 * Failures as data: each step runs under the failure code of its stage, so a compaction that fails
 * reports where it stopped (`CompactionResult.failureCode`) without a step having to know the result.
 */
import { MemfoldError, errorMessage } from '../errors.js';
import { ReadbackError } from './batches/archive-writer.js';
import type { CompactionFailureCode } from './compaction-result.js';

/** A failure at a known stage; anything else is `unexpected`. */
export class StageError extends Error {
  constructor(
    readonly code: CompactionFailureCode,
    readonly original: unknown,
  ) {
    super(errorMessage(original));
  }
}

/** Failures whose origin the error itself tells, wherever in the pipeline they happen (re-summarization both folds and writes). */
function failureOrigin(error: unknown): CompactionFailureCode | undefined {
  if (error instanceof ReadbackError) return 'readback_failed';
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
    if (error instanceof StageError) throw error;
    throw new StageError(failureOrigin(error) ?? code, error);
  }
}

/** Stop between steps when the caller aborted: nothing after this point is written. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new StageError('aborted', signal.reason);
}
