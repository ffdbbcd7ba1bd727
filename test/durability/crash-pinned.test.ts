/**
 * SIGKILL during compactions of a conversation holding pinned messages (PostgreSQL + LanceDB), with the crash test's
 * child (children/compact-until-killed.ts): one run per kind of boundary, tier 2 and tier 3 both running each time.
 * After each kill and reconcile, a pinned user message and a pinned tool call with its output are live, unchanged, in
 * their places, in no transcript segment and no cleared output's entry, and every invariant holds; a message pinned
 * while its compaction was cut short inside its commit makes reconcile undo that compaction. A handful of runs:
 * the full crash test (crash-recovery.test.ts) covers the boundaries at length.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seeded } from '../../src/cli/demo/demo-conversation.js';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { turnMessages } from '../support/arbitraries.js';
import { createPostgresTestDatabase, postgresServerUrl } from '../support/backends.js';
import { checkInvariants } from '../support/invariants.js';
import { bundleChild, startedChildren, type BundledChild, type StartedChildren } from './child-process.js';
import { clearingRunTurns, installSlowCommit } from './crash-kit.js';
import type { CrashJob, KillPoint } from './children/crash-job.js';

const CHILD_SOURCE = new URL('./children/compact-until-killed.ts', import.meta.url);
const SEED = Number(process.env.MEMFOLD_CRASH_SEED ?? 29_006);
/** Tier 2 clears and tier 3 follows it on every run (crash-recovery.test.ts's clearing settings). */
const settings = {
  contextWindow: 2_000,
  keepRecentTokens: 400,
  keepRecentMessages: 4,
  chunkTokens: 300,
  keepToolUses: 1,
  clearToolOutputMinTokens: 20,
  targetTokens: 100,
};
const POINTS: KillPoint[] = [
  { point: 'plan' },
  { point: 'clear-commit', ms: 150 },
  { point: 'fold', n: 1 },
  { point: 'write', n: 1 },
  { point: 'commit', ms: 150 },
  { point: 'after-commit' },
  // Last: pinned before reconcile (pinBeforeReconcile).
  { point: 'commit', ms: 150 },
];
const CONVERSATION = "pinned-'crash'";

const databaseUrl = postgresServerUrl();

describe.skipIf(databaseUrl === undefined)('SIGKILL during compactions with pinned messages, then reconcile (PostgreSQL + LanceDB)', () => {
  let database: { url: string; drop(): Promise<void> };
  let lanceDir: string;
  let admin: pg.Client;
  let memfold: Memfold;
  let child: BundledChild;
  let children: StartedChildren;

  beforeAll(async () => {
    child = await bundleChild(CHILD_SOURCE);
    children = startedChildren(child, 1);
    database = await createPostgresTestDatabase(databaseUrl!);
    lanceDir = await mkdtemp(path.join(os.tmpdir(), 'memfold-crash-pinned-'));
    memfold = await createMemfold({
      env: {},
      config: { databaseUrl: database.url, lancedbUri: lanceDir },
      compaction: settings,
      tokens: createTokenCounter({ mode: 'chars4' }),
    });
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await installSlowCommit(admin);
  }, 60_000);

  afterAll(async () => {
    await children?.close();
    await child?.remove();
    await memfold?.close();
    await admin?.end();
    await database?.drop();
    if (lanceDir) await rm(lanceDir, { recursive: true, force: true });
  });

  it(`keeps the pinned messages live and unarchived through ${POINTS.length} killed runs`, async () => {
    const rand = seeded(SEED);
    const appended: ConversationMessage[] = [];
    const append = async (messages: Parameters<Memfold['append']>[1]) => {
      const stored = await memfold.append(CONVERSATION, messages);
      appended.push(...stored);
      return stored;
    };
    await append(turnMessages(clearingRunTurns(rand, 3), 'seed', new Date(Date.UTC(2025, 0, 1))));
    const [fact] = await append([{ role: 'user', content: 'Pinned: the vault code is 4417.', pinned: true, createdAt: '2025-01-01T01:00:00.000Z' }]);
    const pinnedTurn = await append(
      turnMessages(clearingRunTurns(rand, 1), 'pin', new Date(Date.UTC(2025, 0, 1, 1, 1))).map((m) => (m.toolCalls ? { ...m, pinned: true } : m)),
    );
    const pinned = [fact!, ...pinnedTurn.filter((m) => m.pinned === true || m.role === 'tool')];
    expect(pinned.length).toBeGreaterThanOrEqual(3);
    const kills: string[] = [];

    /**
     * The last run is killed inside its commit, leaving its operation `archived`: one of its messages is pinned before
     * reconcile, which must then undo the operation (its commit would take the pinned row) rather than fail.
     */
    async function pinBeforeReconcile(): Promise<void> {
      const [pending] = await memfold.persistence.listPendingOperations(CONVERSATION);
      expect(pending, 'the killed commit left its operation archived').toMatchObject({ status: 'archived' });
      const id = pending!.messageIds.find((m) => appended.find((a) => a.id === m)?.role === 'user')!;
      expect(await memfold.pin(CONVERSATION, [id])).toBe(1);
      const message = appended.find((m) => m.id === id)!;
      message.pinned = true;
      pinned.push(message);
      const outcomes = await memfold.reconcile(CONVERSATION);
      expect(outcomes).toEqual([expect.objectContaining({ operationId: pending!.id, action: 'rolled_back', reason: `message ${id} was pinned since` })]);
    }

    for (const [run, killAt] of POINTS.entries()) {
      await append(turnMessages(clearingRunTurns(rand, 3), `r${run}`, new Date(Date.UTC(2025, 0, 2 + run))));
      const slow = killAt.point === 'commit' || killAt.point === 'clear-commit';
      if (slow) await admin.query('insert into memfold_test_slow_commit values ($1)', [CONVERSATION]);
      const exit = await children.run(
        JSON.stringify({ databaseUrl: database.url, lanceDir, conversationId: CONVERSATION, settings, killAt } satisfies CrashJob),
      );
      if (slow) await admin.query('delete from memfold_test_slow_commit where conversation_id = $1', [CONVERSATION]);
      if (exit.signal === 'SIGKILL') kills.push(killAt.point);
      else expect(exit.code, `run ${run} ${JSON.stringify(killAt)}: ${exit.stderr}`).toBe(0);
      if (run === POINTS.length - 1) await pinBeforeReconcile();
      await memfold.reconcile(CONVERSATION);

      const live = new Map((await memfold.history(CONVERSATION)).map((m) => [m.id, m]));
      const entries = await memfold.archive.list({ conversationId: CONVERSATION });
      const archived = new Set(entries.flatMap((e) => (e.messages ?? []).map((m) => m.id)));
      for (const m of pinned) {
        expect(live.get(m.id), `run ${run} ${killAt.point}: ${m.id} live as appended`).toEqual(m);
        expect(archived.has(m.id), `run ${run} ${killAt.point}: ${m.id} archived`).toBe(false);
      }
      await checkInvariants(memfold, CONVERSATION, appended, { toolPairs: true });
    }
    // The kills landed: most boundaries come on every run, and the last one must.
    expect(kills.length).toBeGreaterThanOrEqual(POINTS.length - 1);
    expect(kills.at(-1)).toBe('commit');
    expect(await memfold.persistence.listPendingOperations()).toEqual([]);
    // Compactions did archive around them.
    expect((await memfold.archive.list({ conversationId: CONVERSATION, kind: 'transcript' })).length).toBeGreaterThan(0);
  }, 120_000);
});
