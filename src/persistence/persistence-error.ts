/** Driver failures become MemfoldError('persistence_error'), with retryability decided here, at the adapter. */
import { MemfoldError } from '../errors.js';

/**
 * SQLSTATE classes and codes worth retrying: serialization failure, deadlock, connection
 * exceptions, admin shutdown, too many connections.
 */
const RETRYABLE_SQLSTATE = /^(40001|40P01|08...|57P0[123]|53300)$/;
const RETRYABLE_NODE_CODE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN']);

/** Wrap anything that is not already a MemfoldError; `action` says what failed ("append to conversation x"). */
export function toPersistenceError(error: unknown, action: string): MemfoldError {
  if (MemfoldError.isInstance(error)) return error;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  const retryable = typeof code === 'string' && (RETRYABLE_SQLSTATE.test(code) || RETRYABLE_NODE_CODE.has(code));
  const message = error instanceof Error ? error.message : String(error);
  return new MemfoldError('persistence_error', `Persistence failed to ${action}: ${message}`, {
    cause: error,
    retryable,
    details: typeof code === 'string' ? { code } : {},
  });
}

/** Run `fn`, rethrowing failures as persistence errors. */
export async function guard<T>(action: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw toPersistenceError(error, action);
  }
}
