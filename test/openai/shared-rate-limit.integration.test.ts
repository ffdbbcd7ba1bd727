/**
 * MEMFOLD_MODEL_RPM as the provider's limit, shared through PostgreSQL: two memfolds on one database, each given the
 * full limit, compact at once. Every request either sends takes a start slot from the database, under the endpoint's
 * one key whichever model asks, and the slots the database hands out are one interval apart: what the test reads is
 * those reserved slots (a trigger logs each), not when the callers happened to run. The contrast: the same two
 * memfolds without a shared database (each spacing its own requests) meet 429s from a provider allowing that limit
 * with no burst. And a reservation that fails sends nothing: the summary falls back, saying why.
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
import { rateSlotSpacingMs } from '../../src/openai/shared-rate-limit.js';
import { openKyselyStore } from '../../src/persistence/kysely/kysely-store.js';
import { createPostgresTestDatabase, postgresServerUrl } from '../support/backends.js';
import { startFakeOpenAI } from '../support/fake-openai-server.js';

/** The provider's limit and every memfold's MEMFOLD_MODEL_RPM: one request a second. */
const RPM = 60;
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
 * Log every reservation: `memfold_rate_slots` keeps only each key's next start, one spacing after the slot just
 * reserved, so a trigger records that row as each reservation leaves it, in the order the row's lock gave them.
 */
async function logReservations(databaseUrl: string): Promise<void> {
  const { persistence, db } = await openKyselyStore({ dialect: 'postgres', databaseUrl });
  await sql`create table rate_slot_log (id bigserial primary key, key text not null, next_at timestamptz not null)`.execute(db);
  await sql`create function log_rate_slot() returns trigger language plpgsql as $$
    begin insert into rate_slot_log (key, next_at) values (new.key, new.next_at); return new; end $$`.execute(db);
  await sql`create trigger log_rate_slot after insert or update on memfold_rate_slots for each row execute function log_rate_slot()`.execute(db);
  await persistence.close();
}

/** The reservations logged, in order: the key, and µs since the previous reservation's slot (exact, in the database). */
async function reservations(databaseUrl: string): Promise<Array<{ key: string; gapUs: number | null }>> {
  const { persistence, db } = await openKyselyStore({ dialect: 'postgres', databaseUrl });
  const { rows } = await sql<{ key: string; gap_us: string | null }>`
    select key, (extract(epoch from next_at - lag(next_at) over (order by id)) * 1000000)::bigint::text as gap_us
    from rate_slot_log order by id`.execute(db);
  await persistence.close();
  return rows.map((r) => ({ key: r.key, gapUs: r.gap_us === null ? null : Number(r.gap_us) }));
}

const serverUrl = postgresServerUrl();

describe.skipIf(serverUrl === undefined)('on PostgreSQL: one limit for every memfold on the database', () => {
  let database: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    database = await createPostgresTestDatabase(serverUrl!);
  });
  afterAll(() => database.drop());

  it('two memfolds at the full limit each: every request takes a slot of one shared key, the slots one interval apart', async () => {
    const fake = await startFakeOpenAI();
    closeFake = () => fake.close();
    const a = await openMemfold(fake.baseURL, 'fake-model-a', { databaseUrl: database.url });
    const b = await openMemfold(fake.baseURL, 'fake-model-b', { databaseUrl: database.url });
    // Opened: the stores have migrated, and memfold_rate_slots exists.
    await logReservations(database.url);
    const results = await compactTogether(a, b);

    for (const result of results) {
      expect(result.status, result.error).toBe('compacted');
      expect(result.modelCalls).toBeGreaterThan(1);
      expect(result.fallbacks).toEqual([]);
    }
    // Both memfolds asked (the provider limits no one here: every request answered, no retry).
    expect(new Set(fake.requests.map((r) => r.body.model))).toEqual(new Set(['fake-model-a', 'fake-model-b']));
    const slots = await reservations(database.url);
    // One slot per request sent, by either memfold, all under the endpoint's one key.
    expect(slots).toHaveLength(fake.requests.length);
    expect(new Set(slots.map((s) => s.key)).size).toBe(1);
    // Each slot at least the limit's spacing (interval + jitter allowance) after the one before, whoever reserved it.
    const gaps = slots.slice(1).map((s) => s.gapUs!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(rateSlotSpacingMs(RPM) * 1000);
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
