/**
 * MEMFOLD_MODEL_RPM as the provider's limit, shared through PostgreSQL: two memfolds on one database, each given the
 * full limit, compact at once against a fake provider (in a process of its own, as a provider is) that allows exactly
 * that limit with no burst. Their requests reach it one interval apart and none is refused. The contrast: the same two
 * memfolds without a shared database (each spacing its own requests) meet 429s. And a reservation that fails sends
 * nothing: the summary falls back, saying why.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CompactionResult } from '../../src/compaction/compaction-result.js';
import type { RuntimeConfig } from '../../src/config.js';
import type { NewMessage } from '../../src/conversation/types.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { openKyselyStore } from '../../src/persistence/kysely/kysely-store.js';
import { createPostgresTestDatabase, postgresServerUrl } from '../support/backends.js';
import { startFakeOpenAIProcess } from '../support/fake-openai-process.js';
import { startFakeOpenAI } from '../support/fake-openai-server.js';

/** The provider's limit and every memfold's MEMFOLD_MODEL_RPM: one request a second. */
const RPM = 60;
const INTERVAL_MS = 60_000 / RPM;
/** The provider allows exactly its limit: no two requests closer than the interval. */
const NO_BURST = { requestsPerMinute: RPM, burst: 1 };

function chat(turns: number, tag: string): NewMessage[] {
  return Array.from({ length: turns }, (_, t) => [
    { role: 'user' as const, content: `Please remember order ${tag}-${500 + t} for Ada Lovelace. ${'context '.repeat(20)}` },
    { role: 'assistant' as const, content: `Noted ${tag}-${500 + t}. ${'confirmation '.repeat(20)}` },
  ]).flat();
}

let root: string;
let closeFake: (() => Promise<void>) | undefined;
const opened: Memfold[] = [];

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'memfold-shared-rpm-'));
});
afterEach(async () => {
  for (const memfold of opened.splice(0)) await memfold.close();
  await closeFake?.();
  closeFake = undefined;
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A memfold summarizing with `model` at `baseURL`, at the provider's full limit; nothing from the environment. */
async function openMemfold(baseURL: string, model: string, config: Partial<RuntimeConfig>, store?: 'memory'): Promise<Memfold> {
  const memfold = await createMemfold({
    env: {},
    ...(store ? { store } : {}),
    config: {
      home: await mkdtemp(path.join(root, 'home-')),
      // Processes sharing a database share its archive (another is refused).
      lancedbUri: path.join(root, 'lancedb'),
      openaiBaseUrl: baseURL,
      summaryModel: model,
      modelRequestsPerMinute: RPM,
      ...config,
    },
    // Small chunks: each compaction asks the model several times.
    compaction: { contextWindow: 2_000, chunkTokens: 300 },
  });
  opened.push(memfold);
  return memfold;
}

/** Both memfolds compact a conversation of their own at the same time. */
async function compactTogether(a: Memfold, b: Memfold): Promise<CompactionResult[]> {
  await a.append('conv-a', chat(20, 'A'));
  await b.append('conv-b', chat(20, 'B'));
  return Promise.all([a.compact('conv-a'), b.compact('conv-b')]);
}

/**
 * One compaction by each memfold, one after the other: a process's first requests are slower than the rest (the
 * HTTP client's first use, 50-200 ms here; the first compaction's setup holding the shared event loop), so they
 * reach the provider that much after their slots, which no spacing of starts absorbs. The measured compactions
 * come after, as a running worker's do.
 */
async function warmUp(...memfolds: Memfold[]): Promise<void> {
  for (const [i, memfold] of memfolds.entries()) {
    await memfold.append(`warm-${i}`, chat(10, `W${i}`));
    expect((await memfold.compact(`warm-${i}`, { force: true })).status).toBe('compacted');
  }
  // The last one came late too: let its successor's slot pass before the measured requests.
  await new Promise((resolve) => setTimeout(resolve, 2 * INTERVAL_MS));
}

const serverUrl = postgresServerUrl();

describe.skipIf(serverUrl === undefined)('on PostgreSQL: one limit for every memfold on the database', () => {
  let database: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    database = await createPostgresTestDatabase(serverUrl!);
  });
  afterAll(() => database.drop());

  it('two memfolds at the full limit each: their requests reach the provider one interval apart, almost none refused', async () => {
    const provider = await startFakeOpenAIProcess({ rateLimit: NO_BURST });
    closeFake = () => provider.close();
    const a = await openMemfold(provider.baseURL, 'fake-model-a', { databaseUrl: database.url });
    const b = await openMemfold(provider.baseURL, 'fake-model-b', { databaseUrl: database.url });
    await warmUp(a, b);
    const warmed = (await provider.stats()).chatRequests;
    const results = await compactTogether(a, b);

    for (const result of results) {
      expect(result.status, result.error).toBe('compacted');
      expect(result.modelCalls).toBeGreaterThan(1);
      expect(result.fallbacks).toEqual([]);
    }
    const requests = (await provider.stats()).chat.slice(warmed);
    const accepted = requests.filter((r) => !r.rateLimited);
    // Refused only when a start reached the provider early by more than the slots' allowance (a loaded machine's
    // jitter), then retried in its slot. Each spacing only its own at the full limit, they would ask twice the limit.
    const refused = requests.length - accepted.length;
    expect(refused, `${refused} refused, ${accepted.length} accepted`).toBeLessThanOrEqual(Math.floor(accepted.length / 2));
    // Both memfolds' requests, interleaved in one stream: the limit is the endpoint's, whichever model asks.
    expect(new Set(accepted.map((r) => r.model))).toEqual(new Set(['fake-model-a', 'fake-model-b']));
    const gaps = accepted.slice(1).map((r, i) => r.at - accepted[i]!.at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(INTERVAL_MS);
  });

  it('a reservation that fails sends nothing: the summary falls back, saying the rate limit was unavailable', async () => {
    const fake = await startFakeOpenAI({ rateLimit: NO_BURST });
    closeFake = () => fake.close();
    const memfold = await openMemfold(fake.baseURL, 'fake-model', { databaseUrl: database.url, modelMaxRetries: 1 });
    // The slots' table gone: every reservation fails.
    const { persistence, db } = await openKyselyStore({ dialect: 'postgres', databaseUrl: database.url });
    await sql`drop table memfold_rate_slots`.execute(db);
    await persistence.close();

    await memfold.append('conv', chat(20, 'C'));
    const result = await memfold.compact('conv');
    expect(result.status, result.error).toBe('compacted');
    expect(result.fallbacks.length).toBeGreaterThan(0);
    for (const fallback of result.fallbacks) expect(fallback.reason).toBe('rate limit unavailable');
    expect(fake.requests).toEqual([]);
  });
});

describe('without a shared database: each memfold spaces only its own requests', () => {
  it('two memfolds at the full limit each meet 429s at a provider allowing that limit once', async () => {
    const fake = await startFakeOpenAI({ rateLimit: NO_BURST });
    closeFake = () => fake.close();
    const a = await openMemfold(fake.baseURL, 'fake-model-a', {}, 'memory');
    const b = await openMemfold(fake.baseURL, 'fake-model-b', {}, 'memory');
    await compactTogether(a, b);
    // Both first requests start at once, and the provider takes one per interval: one of them is refused.
    expect(fake.rateLimited).toBeGreaterThan(0);
  });
});
