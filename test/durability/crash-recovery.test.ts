/**
 * SIGKILL at every step boundary of a compaction, in a child process on PostgreSQL and LanceDB:
 * after planning, between fold calls, after each archive write, after each mark, inside the commit
 * transaction, right after it, and at random moments. After each kill, reconcile runs and every
 * invariant must hold: every message ever appended is live or archived verbatim and covered by
 * exactly one depth-0 batch, no label twice, no batch of an uncommitted operation, the clip-archive
 * matches the frontier, no tool call split from its result.
 * A second scenario does the same to tier 2 (clearing old tool outputs) and the tier 3 that follows it: after its
 * operation is recorded, after its archive write, inside and right after its transaction, and after tier 3 marks
 * the cleared outputs it archived; a cleared output must stay verbatim in exactly one place. Every run ends on a turn
 * of two calls, so tier 2 clears the older one's output in the verbatim tail and the next tier 3 folds it: the kills
 * land on tier 3 superseding outputs, and a committed tier 3 leaves superseded outputs to the runs after it, whatever
 * the seed.
 *
 * Then the same conversations are compacted in overlay mode (rows kept and marked) and killed once or more at each
 * kind of boundary, while the test's own memfold, which reconciles, runs in delete mode: an overlay operation must be
 * finished by marking (never deleting) or undone with no mark left, and every overlay row must be marked exactly by
 * the committed operation that archived it.
 *
 * MEMFOLD_CRASH_RUNS (default 100), MEMFOLD_CRASH_OVERLAY_RUNS (default 8), MEMFOLD_CRASH_CLEAR_RUNS (default 16) and MEMFOLD_CRASH_SEED (default: random,
 * printed) reproduce a run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { seeded } from '../../src/cli/demo/demo-conversation.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { sampleTurns, turnMessages } from '../support/arbitraries.js';
import { createPostgresTestDatabase, postgresServerUrl } from '../support/backends.js';
import { checkInvariants } from '../support/invariants.js';
import { bundleChild, startedChildren, type BundledChild, type StartedChildren } from './child-process.js';
import { clearingRunTurns, installSlowCommit, KILL_POINT_KINDS, killPointOfKind } from './crash-kit.js';
import type { CrashJob, KillPoint } from './children/crash-job.js';

const CHILD_SOURCE = new URL('./children/compact-until-killed.ts', import.meta.url);
const RUNS = Number(process.env.MEMFOLD_CRASH_RUNS ?? 100);
const OVERLAY_RUNS = Number(process.env.MEMFOLD_CRASH_OVERLAY_RUNS ?? 8);
const CLEAR_RUNS = Number(process.env.MEMFOLD_CRASH_CLEAR_RUNS ?? 16);
const SEED = Number(process.env.MEMFOLD_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const PARALLEL = 2;
const settings = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 };
/**
 * Tier 2 clears on every run: each run's tool outputs are large enough, and only the last call's stays whole. No
 * history comes down to the target by clearing alone, so tier 3 follows tier 2 on every run (`clearingRunTurns`).
 */
const clearingSettings = { ...settings, keepToolUses: 1, clearToolOutputMinTokens: 20, targetTokens: 100 };
/** Hostile ids on purpose: quotes, LIKE and filter metacharacters, non-ASCII. */
const CONVERSATIONS = ["crash-'quoted'", 'crash-%_*', 'crash-ünïcødé', 'crash-plain'];

function cycleKillPoint(run: number, rand: () => number): KillPoint {
  const kinds: KillPoint[] = [
    { point: 'commit', ms: 150 },
    { point: 'write', n: 1 },
    { point: 'after-commit' },
    { point: 'plan' },
    { point: 'fold', n: 1 },
    { point: 'timer', ms: Math.floor(rand() * 800) },
    { point: 'mark', n: 1 },
  ];
  return kinds[run % kinds.length]!;
}

const databaseUrl = postgresServerUrl();

describe.skipIf(databaseUrl === undefined)('SIGKILL during compaction, then reconcile (PostgreSQL + LanceDB)', () => {
  let database: { url: string; drop(): Promise<void> };
  let lanceDir: string;
  let admin: pg.Client;
  let memfold: Memfold;

  let child: BundledChild;
  /** Children started ahead of their runs, PARALLEL of them loading while the runs before them work. */
  let children: StartedChildren;

  beforeAll(async () => {
    child = await bundleChild(CHILD_SOURCE, { bundlePackages: true });
    children = startedChildren(child, PARALLEL);
    database = await createPostgresTestDatabase(databaseUrl!);
    lanceDir = await mkdtemp(path.join(os.tmpdir(), 'memfold-crash-'));
    memfold = await createMemfold({
      env: {},
      config: { databaseUrl: database.url, lancedbUri: lanceDir },
      compaction: settings,
      tokens: createTokenCounter({ mode: 'chars4' }),
    });
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    // A commit of a listed conversation sleeps inside its transaction, so that the child dies mid-commit.
    await installSlowCommit(admin);
  });

  afterAll(async () => {
    await children?.close();
    await child?.remove();
    await memfold?.close();
    await admin?.end();
    await database?.drop();
    if (lanceDir) await rm(lanceDir, { recursive: true, force: true });
  });

  // Deterministic from the seed, so a failing run can be replayed.
  const rand = seeded(SEED);
  const appended = new Map<string, ConversationMessage[]>(CONVERSATIONS.map((id) => [id, []]));

  interface Tally {
    runs: number;
    kills: number;
    finishedByChild: number;
    committed: number;
    rolledBack: number;
    killsByPoint: Record<string, number>;
  }
  const newTally = (): Tally => ({ runs: 0, kills: 0, finishedByChild: 0, committed: 0, rolledBack: 0, killsByPoint: {} });

  /** Append a few turns, run one compaction in a child in `mode` killed at `killAt`, reconcile here, check. */
  async function oneRun(run: number, conversationId: string, mode: 'delete' | 'overlay', killAt: KillPoint, tally: Tally): Promise<void> {
    const turns = sampleTurns(SEED + run, 3 + Math.floor(rand() * 5));
    const start = new Date(Date.UTC(2024, 0, 1) + run * 3_600_000);
    appended.get(conversationId)!.push(...(await memfold.append(conversationId, turnMessages(turns, `r${run}`, start))));
    if (killAt.point === 'commit') await admin.query('insert into memfold_test_slow_commit values ($1)', [conversationId]);
    const job: CrashJob = { databaseUrl: database.url, lanceDir, conversationId, settings: { ...settings, mode }, killAt };
    const exit = await children.run(JSON.stringify(job));
    if (killAt.point === 'commit') await admin.query('delete from memfold_test_slow_commit where conversation_id = $1', [conversationId]);

    tally.runs++;
    if (exit.signal === 'SIGKILL') {
      tally.kills++;
      tally.killsByPoint[killAt.point] = (tally.killsByPoint[killAt.point] ?? 0) + 1;
    } else {
      // Not killed: the chosen boundary never came (no re-summarization this time, fewer folds).
      expect(exit.code, `run ${run} (seed ${SEED}) ${mode} ${JSON.stringify(killAt)}: ${exit.stderr}`).toBe(0);
      if (process.env.MEMFOLD_CRASH_DEBUG) console.log(run, mode, JSON.stringify(killAt), exit.stdout.trim());
      tally.finishedByChild++;
    }
    // The reconciling memfold runs in delete mode: an overlay operation is finished in the mode it recorded.
    for (const outcome of await memfold.reconcile(conversationId)) {
      if (outcome.action === 'committed') tally.committed++;
      if (outcome.action === 'rolled_back') tally.rolledBack++;
    }
    await checkInvariants(memfold, conversationId, appended.get(conversationId)!, { toolPairs: true });
  }

  const summary = (tally: Tally) =>
    `${tally.runs} runs, ${tally.kills} killed by SIGKILL ${JSON.stringify(tally.killsByPoint)}, ` +
    `${tally.finishedByChild} finished before their kill point; reconcile finished ${tally.committed} and undid ${tally.rolledBack}`;

  /** Enough history that every forced compaction has something to archive (once per conversation). */
  async function seedConversations(): Promise<void> {
    for (const [k, id] of CONVERSATIONS.entries()) {
      if (appended.get(id)!.length > 0) continue;
      appended.get(id)!.push(...(await memfold.append(id, turnMessages(sampleTurns(SEED - k - 1, 10), 'seed', new Date(Date.UTC(2023, 0, 1))))));
    }
  }

  it(`keeps every invariant through ${RUNS} randomized runs killed at step boundaries`, async () => {
    const tally = newTally();
    await seedConversations();
    for (let run = 0; run < RUNS; run += PARALLEL) {
      const offset = Math.floor(rand() * CONVERSATIONS.length);
      const batch = Array.from({ length: Math.min(PARALLEL, RUNS - run) }, (_, k) =>
        // Each kind of boundary in turn (its parameters random), so that every kind is chosen whatever the seed.
        oneRun(run + k, CONVERSATIONS[(offset + k) % CONVERSATIONS.length]!, 'delete', killPointOfKind((run + k) % KILL_POINT_KINDS, rand), tally),
      );
      await Promise.all(batch);
    }

    for (const id of CONVERSATIONS) await checkInvariants(memfold, id, appended.get(id)!, { toolPairs: true });
    expect(await memfold.persistence.listPendingOperations()).toEqual([]);
    const depths = await Promise.all(
      CONVERSATIONS.map(async (id) => Math.max(0, ...(await memfold.archive.list({ conversationId: id, kind: 'summary' })).map((b) => b.depth))),
    );
    console.log(`crash test (seed ${SEED}): ${summary(tally)}; deepest batch per conversation ${depths.join('/')}`);
    expect(tally.runs).toBe(RUNS);
    // Every kind of boundary was hit at least once.
    for (const point of ['plan', 'fold', 'write', 'mark', 'commit', 'after-commit', 'timer']) {
      expect(tally.killsByPoint[point] ?? 0, `kills at ${point}`).toBeGreaterThan(0);
    }
  }, 900_000);

  it(`overlay mode on the same conversations: keeps every invariant, overlay rows included, through ${OVERLAY_RUNS} killed runs`, async () => {
    const tally = newTally();
    // After the delete-mode runs (when they ran), each history holds deleted and, from here on, overlay rows.
    await seedConversations();
    for (let run = 0; run < OVERLAY_RUNS; run += PARALLEL) {
      const batch = Array.from({ length: Math.min(PARALLEL, OVERLAY_RUNS - run) }, (_, k) =>
        oneRun(RUNS + run + k, CONVERSATIONS[(run + k) % CONVERSATIONS.length]!, 'overlay', cycleKillPoint(run + k, rand), tally),
      );
      await Promise.all(batch);
    }
    let overlaid = 0;
    for (const id of CONVERSATIONS) overlaid += (await checkInvariants(memfold, id, appended.get(id)!, { toolPairs: true })).overlaid;
    expect(await memfold.persistence.listPendingOperations()).toEqual([]);
    console.log(`crash test, overlay mode (seed ${SEED}): ${summary(tally)}; ${overlaid} messages kept as overlay rows`);
    expect(tally.runs).toBe(OVERLAY_RUNS);
    expect(overlaid, 'overlay compactions committed').toBeGreaterThan(0);
    // The boundaries every run reaches were each hit (with the default run count).
    if (OVERLAY_RUNS >= 4)
      for (const point of ['commit', 'write', 'after-commit', 'plan']) expect(tally.killsByPoint[point] ?? 0, `kills at ${point}`).toBeGreaterThan(0);
  }, 900_000);

  it(`keeps every invariant through ${CLEAR_RUNS} runs killed during tier 2 and the tier 3 after it`, async () => {
    const rand = seeded(SEED + 1);
    const conversations = ["clear-'quoted'", 'clear-plain'];
    const appended = new Map<string, ConversationMessage[]>(conversations.map((id) => [id, []]));
    const points: Array<() => KillPoint> = [
      () => ({ point: 'clear' }),
      () => ({ point: 'write', n: 1 }),
      () => ({ point: 'clear-commit', ms: 150 }),
      () => ({ point: 'after-clear-commit' }),
      // Tier 3 has marked superseded the outputs the runs before it cleared (run 2's, here 4).
      () => ({ point: 'mark', n: 1 }),
      () => ({ point: 'write', n: 2 }),
      // Tier 3 committed, having superseded the outputs cleared by the runs before (those of runs 2 and 4, here 6):
      // the next runs meet them.
      () => ({ point: 'after-commit' }),
      () => ({ point: 'timer', ms: Math.floor(rand() * 600) }),
    ];
    const killsByPoint: Record<string, number> = {};
    const tally = { kills: 0, finishedByChild: 0, committed: 0, rolledBack: 0 };

    async function oneRun(run: number, conversationId: string): Promise<void> {
      const start = new Date(Date.UTC(2025, 0, 1) + run * 3_600_000);
      appended.get(conversationId)!.push(...(await memfold.append(conversationId, turnMessages(clearingRunTurns(rand, 3), `c${run}`, start))));
      const killAt = points[run % points.length]!();
      const slow = killAt.point === 'clear-commit';
      if (slow) await admin.query('insert into memfold_test_slow_commit values ($1)', [conversationId]);
      const exit = await children.run(
        JSON.stringify({ databaseUrl: database.url, lanceDir, conversationId, settings: clearingSettings, killAt } satisfies CrashJob),
      );
      if (slow) await admin.query('delete from memfold_test_slow_commit where conversation_id = $1', [conversationId]);
      if (exit.signal === 'SIGKILL') {
        tally.kills++;
        killsByPoint[killAt.point] = (killsByPoint[killAt.point] ?? 0) + 1;
      } else {
        expect(exit.code, `run ${run} (seed ${SEED}) ${JSON.stringify(killAt)}: ${exit.stderr}`).toBe(0);
        tally.finishedByChild++;
      }
      const outcomes = await memfold.reconcile(conversationId);
      for (const outcome of outcomes) {
        if (outcome.action === 'committed') tally.committed++;
        if (outcome.action === 'rolled_back') tally.rolledBack++;
      }
      if (process.env.MEMFOLD_CRASH_DEBUG) {
        const outputs = await memfold.archive.list({ conversationId, kind: 'tool_output' });
        const reconciled = outcomes.map((o) => `${o.action}: ${o.reason}`);
        console.log(
          run,
          conversationId,
          JSON.stringify(killAt),
          exit.signal ?? exit.stdout.trim(),
          JSON.stringify(reconciled),
          `${outputs.filter((o) => o.parentLabel).length}/${outputs.length} outputs superseded`,
        );
      }
      await checkInvariants(memfold, conversationId, appended.get(conversationId)!, { toolPairs: true });
    }

    for (let run = 0; run < CLEAR_RUNS; run += conversations.length) {
      await Promise.all(conversations.slice(0, CLEAR_RUNS - run).map((id, k) => oneRun(run + k, id)));
    }
    const outputs = (await Promise.all(conversations.map((id) => memfold.archive.list({ conversationId: id, kind: 'tool_output' })))).flat();
    console.log(
      `crash test, tier 2 (seed ${SEED}): ${CLEAR_RUNS} runs, ${tally.kills} killed ${JSON.stringify(killsByPoint)}, ${tally.finishedByChild} finished; ` +
        `reconcile finished ${tally.committed} and undid ${tally.rolledBack}; ${outputs.length} tool outputs archived, ${outputs.filter((o) => o.parentLabel).length} superseded`,
    );
    expect(await memfold.persistence.listPendingOperations()).toEqual([]);
    // With the default run count, every point came at least once, tier 3 superseding included.
    if (CLEAR_RUNS >= points.length) {
      expect(outputs.filter((o) => o.parentLabel).length, 'tool outputs superseded by tier 3').toBeGreaterThan(0);
      for (const point of ['clear', 'write', 'clear-commit', 'after-clear-commit', 'mark'])
        expect(killsByPoint[point] ?? 0, `kills at ${point}`).toBeGreaterThan(0);
    }
  }, 300_000);
});
