/**
 * An S3 endpoint that accepts connections and never answers: opening, memory_read and a compaction end within the
 * deadlines set by MEMFOLD_S3_TIMEOUT_MS (each request) and MEMFOLD_S3_DEADLINE_MS (each read and the opening), with
 * an `archive_error` naming the endpoint and what memfold waited for; nothing is lost. Small settings keep it fast;
 * the test's own timeout is the bound the old code (no deadline: minutes per request) did not meet.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemfoldError } from '../../src/errors.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { copyPgliteTemplateTo } from '../support/backends.js';
import { orderChat } from '../support/messages.js';
import { S3RVER_KEYS, startLocalS3, type LocalS3 } from '../support/s3-server.js';

const homes: string[] = [];
afterAll(async () => {
  for (const dir of homes) await rm(dir, { recursive: true, force: true });
});

/** A home holding a migrated PGlite store (a copy of the prepared template: no initdb). */
async function home(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-s3-hang-'));
  homes.push(dir);
  copyPgliteTemplateTo(path.join(dir, 'pg'));
  return dir;
}

function s3Env(endpoint: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    LANCEDB_URI: 's3://memfold-test/hang',
    MEMFOLD_S3_ENDPOINT: endpoint,
    MEMFOLD_S3_REGION: 'us-east-1',
    MEMFOLD_S3_ACCESS_KEY_ID: S3RVER_KEYS.accessKeyId,
    MEMFOLD_S3_SECRET_ACCESS_KEY: S3RVER_KEYS.secretAccessKey,
    MEMFOLD_S3_ALLOW_HTTP: 'true',
    MEMFOLD_S3_TIMEOUT_MS: '200',
    MEMFOLD_S3_DEADLINE_MS: '1500',
    ...extra,
  };
}

/** A TCP server on 127.0.0.1 that accepts every connection and never answers. */
async function silentServer(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function openError(env: Record<string, string>): Promise<MemfoldError> {
  const error = await createMemfold({ env: { MEMFOLD_HOME: await home(), ...env } }).then(
    async (memfold) => {
      await memfold.close();
      return undefined;
    },
    (caught: unknown) => caught,
  );
  if (!MemfoldError.isInstance(error)) throw new Error(`expected opening to fail with a MemfoldError, got ${String(error)}`);
  return error;
}

describe('an S3 endpoint that accepts connections and never answers', () => {
  let silent: Awaited<ReturnType<typeof silentServer>>;
  beforeAll(async () => {
    silent = await silentServer();
  });
  afterAll(() => silent.close());

  it('fails opening with archive_error naming the endpoint, whether the conditional-PUT check runs or not', async () => {
    const checked = await openError(s3Env(silent.endpoint));
    expect(checked.code).toBe('archive_error');
    expect(checked.message).toContain(`the S3 endpoint ${silent.endpoint} (bucket memfold-test) could not be reached`);
    const unchecked = await openError(s3Env(silent.endpoint, { MEMFOLD_S3_SINGLE_WRITER: 'true' }));
    expect(unchecked.code).toBe('archive_error');
    expect(unchecked.message).toContain(
      `the S3 endpoint ${silent.endpoint} (bucket memfold-test) did not answer within 1500 ms while memfold waited for the archive to open (MEMFOLD_S3_DEADLINE_MS)`,
    );
  }, 60_000);
});

describe('an S3 endpoint that stops answering while memfold runs', () => {
  let s3: LocalS3;
  let memfold: Memfold;
  beforeAll(async () => {
    s3 = await startLocalS3({ conditionalPut: true });
    // Long enough for s3rver on a loaded machine; no client retries, so a stalled write ends after a few attempts
    // of Lance's own throttle layer instead of four times as many.
    memfold = await createMemfold({
      env: { MEMFOLD_HOME: await home(), ...s3Env(s3.endpoint, { MEMFOLD_S3_TIMEOUT_MS: '1000', MEMFOLD_S3_DEADLINE_MS: '2500' }) },
      config: { lancedbStorageOptions: { client_max_retries: '0' } },
      compaction: { contextWindow: 2_000 },
    });
  }, 120_000);
  afterAll(async () => {
    await memfold?.close({ waitMs: 0 }).catch(() => undefined);
    await s3?.close();
  });

  it('memory_read and compact end with an error naming the endpoint, and every message stays live', async () => {
    await memfold.append('c', orderChat(12));
    const first = await memfold.compact('c', { force: true });
    expect(first.status, first.error).toBe('compacted');
    const liveBefore = (await memfold.history('c')).length;
    s3.stall();
    const read = await memfold.memoryRead('c').execute({ query: 'order' });
    expect(read.ok).toBe(false);
    expect(read.output).toContain(
      `the S3 endpoint ${s3.endpoint} (bucket memfold-test) did not answer within 2500 ms while memfold waited for a search of the archive (MEMFOLD_S3_DEADLINE_MS)`,
    );
    await memfold.append('c', orderChat(12, 12));
    const second = await memfold.compact('c', { force: true });
    expect(second.status).toBe('failed');
    expect(second.error).toContain(s3.endpoint);
    expect((await memfold.history('c')).length).toBe(liveBefore + orderChat(12, 12).length);
  }, 120_000);
});
