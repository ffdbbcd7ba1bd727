/** Driver failures become MemfoldError('persistence_error'), with retryability decided here, at the adapter. */
import { MemfoldError, errorMessage } from '../errors.js';

/**
 * SQLSTATE classes and codes worth retrying: serialization failure, deadlock, connection exceptions, a session the
 * server ended (admin shutdown, crash, idle-session or idle-in-transaction timeout), too many connections.
 */
const RETRYABLE_SQLSTATE = /^(40001|40P01|08...|57P0[1235]|25P03|53300)$/;
const RETRYABLE_NODE_CODE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN']);

/**
 * The server connection a query needed is gone (terminated, timed out, network): `cause` is what the driver saw
 * first (e.g. "terminating connection due to administrator command"). The operation in flight fails with it; the
 * pool discards the connection, so the next call gets a fresh one.
 */
export class ConnectionLostError extends MemfoldError {
  static override readonly kind: string = 'memfold.ConnectionLostError';
  /** The cause's SQLSTATE or Node code, when it has one. */
  readonly sqlCode: string | undefined;
  constructor(cause: unknown, database = 'PostgreSQL') {
    const sqlCode = codeOf(cause);
    super('persistence_error', `the ${database} connection was lost: ${errorMessage(cause)}`, {
      cause,
      retryable: true,
      details: { ...(sqlCode !== undefined ? { code: sqlCode } : {}), reason: 'connection_lost' },
    });
    this.name = 'ConnectionLostError';
    this.sqlCode = sqlCode;
  }
}

function codeOf(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** Wrap anything that is not already a MemfoldError; `action` says what failed ("append to conversation x"). */
export function toPersistenceError(error: unknown, action: string): MemfoldError {
  // A lost connection is wrapped too, so that the error names the action it cut off.
  const lost = ConnectionLostError.isInstance(error);
  if (MemfoldError.isInstance(error) && !lost) return error;
  const code = lost ? error.sqlCode : codeOf(error);
  const retryable = lost || (code !== undefined && (RETRYABLE_SQLSTATE.test(code) || RETRYABLE_NODE_CODE.has(code)));
  return new MemfoldError('persistence_error', `Persistence failed to ${action}: ${errorMessage(error)}`, {
    cause: error,
    retryable,
    details: { ...(code !== undefined ? { code } : {}), ...(lost ? { reason: 'connection_lost' } : {}) },
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
