/**
 * The in-process lane: the crash test's child (`test/durability/children/compact-until-killed.ts`) compacts one
 * conversation and SIGKILLs itself at a step boundary: after planning, after the n-th fold call, archive write or
 * mark, inside the commit transaction (the database sleeps there) or right after it, at a random moment, and, on
 * the tool-heavy conversations, at tier 2's boundaries. Some runs compact in overlay mode. After each run this
 * process reconciles and checks every invariant. Each run's choices come from the soak's seed and the run number.
 */
import type pg from 'pg';
import { seeded } from '../../src/cli/demo/demo-conversation.js';
import type { CompactionSettings } from '../../src/compaction/compaction-settings.js';
import type { ConversationMessage } from '../../src/conversation/types.js';
import type { Memfold } from '../../src/memfold.js';
import { runChild, type BundledChild } from '../durability/child-process.js';
import { pickKillPoint, toolHeavyTurns } from '../durability/crash-kit.js';
import type { CrashJob, KillPoint } from '../durability/children/crash-job.js';
import { sampleTurns, turnMessages, type TurnShape } from '../support/arbitraries.js';
import { checkInvariants } from '../support/invariants.js';
import { bump, classifyFailure, countReconciled, setSlowCommit, SoakViolation, type SoakTally } from './soak-kit.js';

export const IN_PROCESS_SETTINGS = {
  contextWindow: 2_000,
  keepRecentTokens: 400,
  keepRecentMessages: 4,
  chunkTokens: 300,
} satisfies Partial<CompactionSettings>;
/** Tier 2 clears on every run of the tool-heavy conversations. */
const CLEARING_SETTINGS = { ...IN_PROCESS_SETTINGS, keepToolUses: 1, clearToolOutputMinTokens: 20 };
/** Hostile ids on purpose, as in the crash test. */
const CONVERSATIONS = ["soak-'quoted'", 'soak-%_*', 'soak-ünïcødé', 'soak-plain'];
const CLEARING = ["soak-clear-'q'", 'soak-clear-plain'];

export interface InProcessLane {
  child: BundledChild;
  memfold: Memfold;
  admin: pg.Client;
  databaseUrl: string;
  lanceDir: string;
  seed: number;
  runs: number;
  parallel: number;
  tally: SoakTally;
  stopped: () => boolean;
}

/** Tier 2's boundaries and the tier 3 after it, as the crash test's third scenario takes them. */
function pickClearingKillPoint(rand: () => number): KillPoint {
  const points: KillPoint[] = [
    { point: 'clear' },
    { point: 'write', n: 1 },
    { point: 'clear-commit', ms: 150 },
    { point: 'after-clear-commit' },
    { point: 'mark', n: 1 },
    { point: 'write', n: 2 },
    { point: 'after-commit' },
    { point: 'timer', ms: Math.floor(rand() * 600) },
  ];
  return points[Math.floor(rand() * points.length)]!;
}

export async function runInProcessLane(lane: InProcessLane): Promise<void> {
  const { memfold, tally } = lane;
  const all = [...CONVERSATIONS, ...CLEARING];
  const appended = new Map<string, ConversationMessage[]>(all.map((id) => [id, []]));
  // Enough history that every forced compaction has something to archive.
  for (const [k, id] of all.entries()) {
    const turns = CLEARING.includes(id) ? toolHeavyTurns(seeded(lane.seed - k), 6) : sampleTurns(lane.seed - k - 1, 10);
    const stored = await memfold.append(id, turnMessages(turns, 'seed', new Date(Date.UTC(2023, 0, 1))));
    appended.get(id)!.push(...stored);
    tally.appended += stored.length;
  }

  async function oneRun(run: number, conversationId: string): Promise<void> {
    const rand = seeded((lane.seed + 7919 * run) >>> 0);
    const clearing = CLEARING.includes(conversationId);
    const start = new Date(Date.UTC(2024, 0, 1) + run * 3_600_000);
    const turns = clearing ? toolHeavyTurns(rand, 3) : sampleTurns(lane.seed + run, 3 + Math.floor(rand() * 5));
    const stored = await memfold.append(conversationId, turnMessages(turns, `r${run}`, start));
    appended.get(conversationId)!.push(...stored);
    tally.appended += stored.length;
    const killAt = clearing ? pickClearingKillPoint(rand) : pickKillPoint(rand);
    const mode = !clearing && rand() < 0.15 ? 'overlay' : 'delete';
    const settings = { ...(clearing ? CLEARING_SETTINGS : IN_PROCESS_SETTINGS), mode } as const;
    const slow = killAt.point === 'commit' || killAt.point === 'clear-commit';
    if (slow) await setSlowCommit(lane.admin, [conversationId], true);
    const job: CrashJob = { databaseUrl: lane.databaseUrl, lanceDir: lane.lanceDir, conversationId, settings, killAt };
    const exit = await runChild(lane.child, [JSON.stringify(job)]);
    if (slow) await setSlowCommit(lane.admin, [conversationId], false);
    const where = `${conversationId} ${mode} ${JSON.stringify(killAt)}`;
    tally.runs.inProcess++;
    if (exit.signal === 'SIGKILL') bump(tally.inProcessKills, `${killAt.point}${mode === 'overlay' ? ' (overlay)' : ''}`);
    else if (exit.code === 0) {
      const result = JSON.parse(exit.stdout.trim().split('\n').pop() ?? '{}') as { status?: string; error?: string };
      if (result.status === 'failed') bump(tally.inProcessFailed, String(result.error).slice(0, 160));
      else tally.inProcessFinished++;
      if (process.env.MEMFOLD_SOAK_DEBUG) console.log(`in-process run ${run} ${where}: not killed: ${exit.stdout.trim()}`);
    } else throw new SoakViolation('in-process', run, `${where}: the child exited with ${exit.code ?? exit.signal}: ${exit.stderr.slice(-2_000)}`);
    // A lock of the killed child's session is released when PostgreSQL sees its socket close: retry a busy answer.
    for (let attempt = 0; ; attempt++) {
      const outcomes = await memfold.reconcile(conversationId);
      countReconciled(tally, outcomes);
      if (!outcomes.some((o) => o.action === 'busy') || attempt === 20) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    try {
      await checkInvariants(memfold, conversationId, appended.get(conversationId)!, { toolPairs: true });
    } catch (error) {
      const message = (error as Error).message;
      classifyFailure(tally, message);
      throw new SoakViolation('in-process', run, `${where}: ${message}`);
    }
  }

  const step = Math.min(lane.parallel, all.length);
  for (let run = 0; run < lane.runs && !lane.stopped(); run += step) {
    const rand = seeded((lane.seed ^ 0x5eed) + run);
    const offset = Math.floor(rand() * all.length);
    const batch = Array.from({ length: Math.min(step, lane.runs - run) }, (_, k) => oneRun(run + k, all[(offset + k) % all.length]!));
    await Promise.all(batch);
  }
}
