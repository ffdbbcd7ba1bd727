/**
 * The archive on S3-compatible object storage (`LANCEDB_URI=s3://bucket/prefix`), against a local s3rver
 * (test/support/s3-server.ts) with conditional PUT: the MEMFOLD_S3_* variables reach LanceDB (a wrong secret is
 * refused by the server), a compacted conversation is found by memory_read, again after reopening, and two
 * processes compacting into the same table at once lose nothing. On the same server without conditional PUT,
 * memfold refuses to open unless told only one process writes. Errors name the endpoint, never the secret.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createMemfold } from '../../src/memfold.js';
import { copyPgliteTemplateTo } from '../support/backends.js';
import { checkInvariants } from '../support/invariants.js';
import { orderChat } from '../support/messages.js';
import { S3RVER_KEYS, startLocalS3, type LocalS3 } from '../support/s3-server.js';

const WINDOW = 2_000;
/** PGlite and LanceDB opening over HTTP make each case slow on a loaded machine. */
const SLOW = 180_000;
const homes: string[] = [];

/** A home holding a migrated PGlite store (a copy of the prepared template: no initdb), its archive on S3. */
async function home(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-s3-home-'));
  homes.push(dir);
  copyPgliteTemplateTo(path.join(dir, 'pg'));
  return dir;
}

function s3Env(s3: LocalS3, prefix: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    LANCEDB_URI: `s3://${s3.bucket}/${prefix}`,
    MEMFOLD_S3_ENDPOINT: s3.endpoint,
    MEMFOLD_S3_REGION: 'us-east-1',
    MEMFOLD_S3_ACCESS_KEY_ID: S3RVER_KEYS.accessKeyId,
    MEMFOLD_S3_SECRET_ACCESS_KEY: S3RVER_KEYS.secretAccessKey,
    MEMFOLD_S3_ALLOW_HTTP: 'true',
    ...extra,
  };
}

async function openError(env: Record<string, string>): Promise<Error> {
  const error = await createMemfold({ env: { MEMFOLD_HOME: await home(), ...env } }).then(
    async (memfold) => {
      await memfold.close();
      return undefined;
    },
    (caught: unknown) => caught as Error,
  );
  expect(error, 'memfold opened').toBeInstanceOf(Error);
  return error!;
}

/**
 * One writer process (children/s3-writer.ts) with only the variables given: no DATABASE_URL, no AWS_*. `opened`
 * resolves once its memfold is open; it writes when `go()` is called.
 */
function writer(env: Record<string, string>, conversationId: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./children/s3-writer.ts', import.meta.url).pathname, conversationId, '2'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let opened!: () => void;
  const openedOnce = new Promise<void>((resolve) => (opened = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk;
    if (stdout.startsWith('opened\n')) opened();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
  const done = new Promise<{ appended: ConversationMessage[]; statuses: string[] }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`writer ${conversationId} exited ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!));
    });
  });
  return { opened: Promise.race([openedOnce, done.then(() => undefined)]), go: () => child.stdin.end('go\n'), done };
}

describe('LanceDB archive on S3 with conditional PUT (s3rver)', () => {
  let s3: LocalS3;
  beforeAll(async () => {
    s3 = await startLocalS3({ conditionalPut: true });
  }, SLOW);
  afterAll(async () => {
    await s3?.close();
    await Promise.all(homes.map((dir) => rm(dir, { recursive: true, force: true })));
  }, SLOW);

  it(
    'archives a compacted conversation that memory_read finds, again after reopening',
    async () => {
      const env = { MEMFOLD_HOME: await home(), ...s3Env(s3, 'single') };
      const memfold = await createMemfold({ env, compaction: { contextWindow: WINDOW } });
      const appended: ConversationMessage[] = [];
      try {
        appended.push(...(await memfold.append('c', orderChat(24))));
        expect((await memfold.compact('c')).status).toBe('compacted');
        const read = await memfold.memoryRead('c').execute({ query: 'order ORD-503 Ada Lovelace' });
        expect(read.ok).toBe(true);
        expect(read.output).toContain('ORD-503');
      } finally {
        await memfold.close();
      }
      const reopened = await createMemfold({ env, compaction: { contextWindow: WINDOW } });
      try {
        expect((await checkInvariants(reopened, 'c', appended)).archived).toBeGreaterThan(0);
        const read = await reopened.memoryRead('c').execute({ query: 'order ORD-503 Ada Lovelace' });
        expect(read.output).toContain('ORD-503');
      } finally {
        await reopened.close();
      }
    },
    SLOW,
  );

  it(
    'two processes compacting into one table at once lose nothing',
    async () => {
      const envs = await Promise.all(['a', 'b'].map(async () => ({ MEMFOLD_HOME: await home(), ...s3Env(s3, 'shared') })));
      // Opened one after the other: each open probes the store with a PUT and a DELETE of its own object, and s3rver's
      // file store can remove a folder under another probe's PUT (an uncaught ENOENT in s3rver). Then both write at once.
      const a = writer(envs[0]!, 'conversation-a');
      await a.opened;
      const b = writer(envs[1]!, 'conversation-b');
      await b.opened;
      a.go();
      b.go();
      const results = await Promise.all([a.done, b.done]);
      for (const result of results) expect(result.statuses.filter((s) => s !== 'skipped')).toEqual(['compacted', 'compacted']);
      for (const [i, id] of ['conversation-a', 'conversation-b'].entries()) {
        const memfold = await createMemfold({ env: envs[i]!, compaction: { contextWindow: WINDOW } });
        try {
          expect((await checkInvariants(memfold, id, results[i]!.appended)).archived).toBeGreaterThan(0);
        } finally {
          await memfold.close();
        }
      }
    },
    SLOW,
  );

  // s3rver checks the access key id only (it does not verify V4 signatures), so the wrong key is the id.
  it(
    'refuses unknown credentials with the server answer, naming the endpoint and never the secret',
    async () => {
      const secret = 'wrong-secret-value-1234';
      const error = await openError(s3Env(s3, 'denied', { MEMFOLD_S3_ACCESS_KEY_ID: 'NOT-S3RVER', MEMFOLD_S3_SECRET_ACCESS_KEY: secret }));
      expect(error.message).toContain(s3.endpoint);
      expect(error.message).toContain('HTTP 403');
      expect(error.message).not.toContain(secret);
    },
    SLOW,
  );

  it(
    'refuses an endpoint nobody listens on, naming it and never the secret',
    async () => {
      const closed = await startLocalS3();
      const endpoint = closed.endpoint;
      await closed.close();
      const secret = 'unreachable-secret-5678';
      const error = await openError({ ...s3Env(s3, 'gone', { MEMFOLD_S3_SECRET_ACCESS_KEY: secret }), MEMFOLD_S3_ENDPOINT: endpoint });
      expect(error.message).toContain(`${endpoint} (bucket ${s3.bucket}) could not be reached`);
      expect(error.message).not.toContain(secret);
    },
    SLOW,
  );
});

describe('LanceDB archive on S3 without conditional PUT (plain s3rver)', () => {
  let s3: LocalS3;
  beforeAll(async () => {
    s3 = await startLocalS3();
  }, SLOW);
  afterAll(async () => {
    await s3?.close();
  }, SLOW);

  it(
    'is refused: concurrent writers would overwrite each other',
    async () => {
      const error = await openError(s3Env(s3, 'unsafe'));
      expect(error.message).toContain(`${s3.endpoint} ignores If-None-Match on PUT`);
      expect(error.message).toContain('MEMFOLD_S3_SINGLE_WRITER');
    },
    SLOW,
  );

  it(
    'opens when MEMFOLD_S3_SINGLE_WRITER says one process writes',
    async () => {
      const env = { MEMFOLD_HOME: await home(), ...s3Env(s3, 'single-writer', { MEMFOLD_S3_SINGLE_WRITER: 'true' }) };
      const memfold = await createMemfold({ env, compaction: { contextWindow: WINDOW } });
      try {
        await memfold.append('c', orderChat(24));
        expect((await memfold.compact('c')).status).toBe('compacted');
        expect((await memfold.memoryRead('c').execute({ query: 'ORD-503' })).output).toContain('ORD-503');
      } finally {
        await memfold.close();
      }
    },
    SLOW,
  );
});
