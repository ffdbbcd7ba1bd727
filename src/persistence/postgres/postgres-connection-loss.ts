/**
 * Lost connections told to the caller, never thrown at the host. pg emits `'error'` on a client whose server
 * connection dies (terminated, idle timeout, network); the pool listens on its idle clients only, so on a checked-out
 * one (a transaction, a held conversation lock) the event would be an uncaught exception. Every client gets a
 * listener when the pool connects it. The first cause is kept: a query on that client reports it (pg itself says only
 * "not queryable"), a reserved session's `lost` signal aborts with it, and the client goes back to the pool with it
 * (`release(err)`), so the pool discards it and the next call gets a fresh connection.
 */
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { ConnectionLostError } from '../persistence-error.js';
import type { ReservedSession } from '../kysely/store-dialect.js';

/** SQLSTATEs of a session the server ended (admin shutdown, crash, idle-session / idle-in-transaction timeout) and connection exceptions. */
const LOST_SQLSTATE = /^(08...|57P0[125]|25P03)$/;
/** Node's codes for a socket the network dropped. */
const LOST_NODE_CODE = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
/** pg's own words for a socket that closed under it. */
const LOST_MESSAGE = /^Connection terminated|not queryable/;

/** A client's loss: the first cause, and a signal aborted with it. */
interface Loss {
  readonly controller: AbortController;
  error?: ConnectionLostError;
}

const losses = new WeakMap<pg.Client, Loss>();

function lossOf(client: pg.Client): Loss {
  let loss = losses.get(client);
  if (!loss) {
    loss = { controller: new AbortController() };
    losses.set(client, loss);
  }
  return loss;
}

/** Record `cause` as the client's loss (the first one wins) and return the loss error. */
function lose(client: pg.Client, cause: unknown): ConnectionLostError {
  const loss = lossOf(client);
  if (!loss.error) {
    loss.error = ConnectionLostError.isInstance(cause) ? cause : new ConnectionLostError(cause);
    loss.controller.abort(loss.error);
  }
  return loss.error;
}

/** Whether a failed query's error means the connection itself is gone. */
function isLoss(error: unknown): boolean {
  if (ConnectionLostError.isInstance(error)) return true;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && (LOST_SQLSTATE.test(code) || LOST_NODE_CODE.has(code))) return true;
  return error instanceof Error && LOST_MESSAGE.test(error.message);
}

/** Listen for losses on every client `pool` connects (before any caller gets it). */
export function watchConnectionLoss(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    client.on('error', (error) => void lose(client, error));
  });
  // An idle client that loses its server emits here too; the pool has already dropped it.
  pool.on('error', () => {});
}

/** Run a query on `client`, reporting a lost connection as its first cause. */
async function query<R>(client: pg.PoolClient, sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>> {
  const known = losses.get(client)?.error;
  if (known) throw known;
  try {
    return (await client.query(sql, [...parameters])) as unknown as PostgresQueryResult<R>;
  } catch (error) {
    // A query the server ended gets the cause; the socket's close comes after as an `'error'` event.
    throw isLoss(error) || losses.get(client)?.error ? lose(client, error) : error;
  }
}

/** Give `client` back; a lost one is discarded. */
function release(client: pg.PoolClient, destroy?: boolean): void {
  const lost = losses.get(client)?.error;
  client.release(lost ?? destroy === true);
}

/** The pool as Kysely's PostgresDialect sees it: clients whose queries report a lost connection's cause. */
export function lossReportingPool(pool: pg.Pool): PostgresPool {
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    options: pool.options,
    async connect() {
      const client = await pool.connect();
      let facade = wrapped.get(client);
      if (!facade) {
        facade = {
          query: ((sql: string, parameters: readonly unknown[]) => query(client, sql, parameters)) as PostgresPoolClient['query'],
          release: (destroy?: boolean) => release(client, destroy),
        };
        wrapped.set(client, facade);
      }
      return facade;
    },
    end: () => pool.end(),
  };
}

/** Take a connection of `pool` for a session. */
export async function reserveSession(pool: pg.Pool): Promise<ReservedSession> {
  const client = await pool.connect();
  try {
    const info = await query<{ pid: number; idle_ms: string | null }>(
      client,
      // idle_session_timeout exists from PostgreSQL 14; before, the subquery finds no row.
      `select pg_backend_pid() as pid, (select setting from pg_settings where name = 'idle_session_timeout') as idle_ms`,
      [],
    );
    const row = info.rows[0]!;
    return {
      pid: Number(row.pid),
      idleTimeoutMs: Number(row.idle_ms ?? 0),
      lost: lossOf(client).controller.signal,
      query: async <R>(sql: string, parameters: readonly unknown[] = []) => (await query<R>(client, sql, parameters)).rows,
      release: (destroy?: boolean) => release(client, destroy),
    };
  } catch (error) {
    release(client, true);
    throw error;
  }
}
