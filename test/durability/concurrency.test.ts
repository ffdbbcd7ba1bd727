/**
 * Two processes with four workers each append to and compact 50 conversations at once, a fixed
 * number of steps each (so a slow machine does the same work as a fast one), on one PostgreSQL database and one LanceDB folder (both created by the racing
 * processes themselves). One process compacts in delete mode, the other in overlay mode, so every
 * conversation's history mixes deleted and kept (marked) rows. At the end every invariant holds for
 * every conversation, overlay rows included, and every message appended (including those appended
 * while a compaction of the same conversation ran) is live or archived. That the processes do meet
 * is not left to timing: first one process's compaction of a conversation waits in its summarizer
 * (under the conversation's lock) until the other has appended to that conversation and found it busy.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { createPostgresTestDatabase, postgresServerUrl } from '../support/backends.js';
import { checkInvariants } from '../support/invariants.js';
import { bundleChild, runChild, type BundledChild } from './child-process.js';
import type { WorkerJob, WorkerReport } from './children/busy-worker.js';

const CHILD_SOURCE = new URL('./children/busy-worker.ts', import.meta.url);
const PROCESSES = 2;
const WORKERS = 4;
/** Steps of each worker; a third of them compactions, half of those forced. */
const STEPS = Number(process.env.MEMFOLD_CONCURRENCY_STEPS ?? 60);
const settings = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 };
const CONVERSATIONS = Array.from({ length: 50 }, (_, i) => (i % 10 === 0 ? `busy-'${i}'` : `busy-${i}`));

const databaseUrl = postgresServerUrl();

describe.skipIf(databaseUrl === undefined)('two processes, four workers each, 50 conversations (PostgreSQL + LanceDB)', () => {
  let database: { url: string; drop(): Promise<void> };
  let dir: string;
  let memfold: Memfold | undefined;

  let child: BundledChild;

  beforeAll(async () => {
    child = await bundleChild(CHILD_SOURCE);
    database = await createPostgresTestDatabase(databaseUrl!);
    dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-busy-'));
  });
  afterAll(async () => {
    await child?.remove();
    await memfold?.close();
    await database?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('keeps every invariant and every appended message', async () => {
    const lanceDir = path.join(dir, 'lancedb');
    const meeting = { conversationId: "meeting-'0'", heldFile: path.join(dir, 'held'), releasedFile: path.join(dir, 'released') };
    const jobs: WorkerJob[] = Array.from({ length: PROCESSES }, (_, p) => ({
      databaseUrl: database.url,
      lanceDir,
      conversations: CONVERSATIONS,
      workers: WORKERS,
      steps: STEPS,
      meeting: { ...meeting, role: p === 0 ? ('hold' as const) : ('meet' as const) },
      seed: 1_000_003 * (p + 1),
      name: `p${p}`,
      settings: { ...settings, mode: p % 2 === 0 ? 'delete' : 'overlay' },
      outFile: path.join(dir, `report-${p}.json`),
    }));
    const exits = await Promise.all(jobs.map((job) => runChild(child, [JSON.stringify(job)])));
    for (const exit of exits) expect(exit.code, exit.stderr).toBe(0);
    const reports = await Promise.all(jobs.map(async (job) => JSON.parse(await readFile(job.outFile, 'utf8')) as WorkerReport));
    // The meeting: the compaction held in its summarizer committed, the other process found the conversation busy.
    expect(reports.map((r) => r.meeting)).toEqual(['compacted', 'skipped:busy']);

    memfold = await createMemfold({
      env: {},
      config: { databaseUrl: database.url, lancedbUri: lanceDir },
      compaction: settings,
      tokens: createTokenCounter({ mode: 'chars4' }),
    });
    const byConversation = new Map<string, ConversationMessage[]>();
    for (const m of reports.flatMap((r) => r.appended)) byConversation.set(m.conversationId, [...(byConversation.get(m.conversationId) ?? []), m]);
    let archived = 0;
    let overlaid = 0;
    const committedByMode: Record<string, number> = {};
    for (const [id, appended] of byConversation) {
      const report = await checkInvariants(memfold, id, appended, { toolPairs: true });
      archived += report.archived;
      overlaid += report.overlaid;
      for (const op of await memfold.persistence.listOperations(id)) {
        if (op.status === 'committed' && op.messageIds.length > 0) committedByMode[op.mode] = (committedByMode[op.mode] ?? 0) + 1;
      }
    }
    expect(await memfold.persistence.listPendingOperations()).toEqual([]);

    const compactions: Record<string, number> = {};
    for (const r of reports) for (const [k, n] of Object.entries(r.compactions)) compactions[k] = (compactions[k] ?? 0) + n;
    const failures = reports.flatMap((r) => r.failures);
    console.log(
      `concurrency test: ${PROCESSES} processes x ${WORKERS} workers x ${STEPS} steps: ${reports.reduce((n, r) => n + r.appends, 0)} appends ` +
        `(${reports.reduce((n, r) => n + r.appended.length, 0)} messages, ${reports.reduce((n, r) => n + r.appendsDuringCompaction, 0)} during a compaction of the same conversation), ` +
        `compactions ${JSON.stringify(compactions)}, committed by mode ${JSON.stringify(committedByMode)}, ` +
        `${archived} messages archived (${overlaid} of them kept as overlay rows) in ${byConversation.size} conversations` +
        (failures.length > 0 ? `; failures: ${[...new Set(failures)].join(' | ')}` : ''),
    );
    // Counts of work done, not of how fast: each worker made STEPS / 6 forced compactions.
    expect(compactions.compacted ?? 0).toBeGreaterThan(20);
    // Both modes committed compactions, on conversations the other mode compacted too.
    expect(committedByMode.delete ?? 0).toBeGreaterThan(5);
    expect(committedByMode.overlay ?? 0).toBeGreaterThan(5);
    expect(overlaid).toBeGreaterThan(0);
    expect(reports.reduce((n, r) => n + r.appendsDuringCompaction, 0)).toBeGreaterThan(0);
    // Contention may fail a compaction (and lose nothing); a failure of any other kind is a bug.
    for (const failure of failures) expect(failure).toMatch(/^(archive_failed|readback_failed|commit_failed):/);
  }, 600_000);
});
