/**
 * A worker lane: `memfold worker` processes SIGKILLed mid-job, on a namespace of its own. A round appends to the
 * lane's background conversations (`compaction: { background: true }`) until each has a job queued in pg-boss,
 * starts a victim worker whose summaries come from the slow fake model (and, for some conversations, whose commit
 * sleeps inside its transaction), kills it at a random delay after it took its first job, notes what each job was
 * doing, sometimes kills a second victim on the retries, then lets a fast worker finish the jobs (the retry of a
 * killed job starts after the 10 s heartbeat). Half the rounds reconcile right after the kill; the others leave the
 * interrupted operations to the jobs' retries. Then: every job completed or dead-lettered, every invariant holds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { JobOutcome } from '../../src/background/compaction-queue.js';
import { queueNames, type CompactionJobData } from '../../src/background/pg-boss-queue.js';
import { seeded } from '../../src/cli/demo/demo-conversation.js';
import type { ConversationMessage } from '../../src/conversation/types.js';
import type { Memfold } from '../../src/memfold.js';
import type { CompactionOperation } from '../../src/persistence/persistence-provider.js';
import { sampleTurns, turnMessages } from '../support/arbitraries.js';
import { checkInvariants } from '../support/invariants.js';
import { bump, classifyFailure, countReconciled, setSlowCommit, sleep, SoakViolation, until, type SoakTally } from './soak-kit.js';

const BIN = new URL('../../bin/memfold.js', import.meta.url).pathname;

export interface WorkerLane {
  index: number;
  namespace: string;
  /** The lane's memfold: appends (queueing jobs), reconciles, checks. Opened again each round (`open`). */
  memfold: Memfold;
  /**
   * A fresh memfold, as a new appending process would open it. Its running token count is only refreshed by its
   * own compactions: kept across rounds, it stays above the trigger after a worker compacted, and every append
   * queues a job the worker then skips (below the trigger).
   */
  open: () => Promise<Memfold>;
  /** Job ids of `compaction_queued` events, by conversation, as the lane's memfold reports them. */
  queued: Map<string, string>;
  boss: PgBoss;
  admin: pg.Client;
  conversations: string[];
  appended: Map<string, ConversationMessage[]>;
  /** Environment of every worker of the lane (stores, namespace, heartbeat, retries). */
  workerEnv: Record<string, string>;
  /** The fake model with latency the victims call. */
  slowModelUrl: string;
  /** Retries of a job after its first attempt (the lane's `MEMFOLD_JOB_RETRIES`). */
  jobRetries: number;
  seed: number;
  tally: SoakTally;
  /** Spawned workers, so the soak can kill what is left if it stops early. */
  children: Set<ChildProcess>;
  /** Dead letters already counted (the dead-letter queue keeps them). */
  deadSeen: Set<string>;
}

interface Worker {
  process: ChildProcess;
  lines: string[];
  exited: Promise<void>;
}

function startWorker(lane: WorkerLane, extra: Record<string, string>): Worker {
  const child = spawn(process.execPath, [BIN, 'worker', '--concurrency', String(lane.conversations.length)], {
    env: { PATH: process.env.PATH ?? '', ...lane.workerEnv, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  lane.children.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => lane.children.delete(child));
  return { process: child, lines, exited };
}

type JobState = 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed' | 'missing';

async function jobState(lane: WorkerLane, id: string): Promise<{ state: JobState; output?: JobOutcome | undefined; retryCount: number }> {
  const job = await lane.boss.getJobById<CompactionJobData>(queueNames(lane.namespace).jobs, id);
  if (job === null) return { state: 'missing', retryCount: 0 };
  return { state: job.state, output: job.output as JobOutcome | undefined, retryCount: job.retryCount };
}

/**
 * What a conversation's job was doing when its worker died, from the job's state and the operation journal:
 * an operation still `planned` (planning, folding, writing the archive) or `archived` (about to commit, or inside
 * the commit: the transaction died with the worker), committed with the job not yet completed, or taken but not
 * yet planned. Jobs that had ended or were not taken were not interrupted.
 */
function jobStepOf(stateBeforeKill: JobState, victim: number, pending: CompactionOperation | undefined, newlyCommitted: boolean, slow: boolean): string {
  if (stateBeforeKill === 'completed') return 'job ended before the kill';
  if (stateBeforeKill === 'retry' && victim === 0) return 'job back in retry before the kill (its live worker lost the claim)';
  if (stateBeforeKill !== 'active') return `job ${stateBeforeKill}, not taken`;
  if (pending) return `op ${pending.status}${pending.status === 'archived' && slow ? ' (commit slowed: killed in or before it)' : ''}`;
  return newlyCommitted ? 'op committed, job not completed' : 'job taken, op not yet planned';
}

/**
 * When a victim dies, counted from when it took a job: at a random moment (most land before planning: a fresh
 * worker's first job opens the archive first), a random moment after an operation was planned (folding), as soon
 * as one is archived (before or, with the commit slowed, inside the commit), or as soon as one committed.
 */
const TRIGGERS = ['timer', 'planned', 'archived', 'committed'] as const;
type Trigger = (typeof TRIGGERS)[number];

/** Wait for `trigger` among the operations the lane's namespace changed since `since`; returns what was waited for. */
async function pullTrigger(lane: WorkerLane, trigger: Trigger, since: Date, rand: () => number): Promise<string> {
  if (trigger === 'timer') {
    await sleep(Math.floor(rand() * 8_000));
    return 'timer';
  }
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { rows } = await lane.admin.query<{ status: string }>('select status from compaction_operations where namespace = $1 and updated_at >= $2', [
      lane.namespace,
      since,
    ]);
    if (rows.some((row) => row.status === trigger)) {
      if (trigger === 'planned') await sleep(Math.floor(rand() * 800));
      return `op ${trigger}`;
    }
    await sleep(20);
  }
  return `op ${trigger} (never seen: killed after 30 s)`;
}

export async function runWorkerRound(lane: WorkerLane, round: number): Promise<void> {
  await lane.memfold.close();
  lane.memfold = await lane.open();
  const { memfold, tally, conversations } = lane;
  const rand = seeded((lane.seed + 104_729 * (lane.index + 1) + round) >>> 0);
  const where = (message: string) => new SoakViolation(`worker lane ${lane.index}`, round, message);

  // Append until every conversation of the lane has a job queued.
  const jobs = new Map<string, string>();
  for (const [k, conversationId] of conversations.entries()) {
    lane.queued.delete(conversationId);
    for (let step = 0; !lane.queued.has(conversationId); step++) {
      if (step === 60) throw where(`${conversationId}: no job queued after 60 appends`);
      const turns = sampleTurns(lane.seed + 1_000_003 * (lane.index + 1) + 7_919 * round + 97 * k + step, 1 + Math.floor(rand() * 3));
      const stored = await memfold.append(conversationId, turnMessages(turns, `w${round}s${step}`));
      lane.appended.get(conversationId)!.push(...stored);
      tally.appended += stored.length;
    }
    jobs.set(conversationId, lane.queued.get(conversationId)!);
  }
  tally.jobs.enqueued += jobs.size;
  tally.runs.worker += jobs.size;

  const operationsBefore = new Map<string, Set<string>>();
  for (const id of conversations) operationsBefore.set(id, new Set((await memfold.persistence.listOperations(id)).map((op) => op.id)));
  const slow = conversations.filter(() => rand() < 0.3);
  await setSlowCommit(lane.admin, slow, true);

  // One victim, or two: the second is killed on the retries of the first one's jobs.
  const victims = rand() < 0.25 ? 2 : 1;
  const interrupted = new Map<string, string>();
  let activeAtKill = 0;
  for (let v = 0; v < victims; v++) {
    if (v > 0 && activeAtKill === 0) break;
    // Jobs already ended are not this victim's; a retry shows as a higher retry count.
    const before = new Map<string, { state: JobState; retryCount: number }>();
    for (const [id, jobId] of jobs) before.set(id, await jobState(lane, jobId));
    const since = (await lane.admin.query<{ now: Date }>('select now()')).rows[0]!.now;
    const victim = startWorker(lane, { OPENAI_BASE_URL: lane.slowModelUrl, MEMFOLD_SUMMARY_MODEL: 'slow-model', MEMFOLD_MODEL_MAX_RETRIES: '0' });
    // The first victim takes fresh jobs; a second one takes the retries, once the first one's heartbeat expired.
    // No retry comes when every job ended (a job out of retries is dead-lettered instead): no second kill then.
    let ended = false;
    await until(
      async () => {
        let open = 0;
        for (const [id, jobId] of jobs) {
          const now = await jobState(lane, jobId);
          if (now.state === 'active' && (v === 0 || now.retryCount > before.get(id)!.retryCount)) return true;
          if (now.state !== 'completed' && now.state !== 'failed') open++;
        }
        ended = v > 0 && open === 0;
        return ended;
      },
      90_000,
      `a victim worker to take a job (round ${round}, victim ${v + 1}): ${victim.lines.slice(-5).join(' | ')}`,
      50,
    );
    if (ended) {
      victim.process.kill('SIGKILL');
      await victim.exited;
      break;
    }
    const trigger = TRIGGERS[Math.floor(rand() * TRIGGERS.length)]!;
    bump(tally.workerTriggers, await pullTrigger(lane, trigger, since, rand));
    const stateBeforeKill = new Map<string, JobState>();
    for (const [id, jobId] of jobs) stateBeforeKill.set(id, (await jobState(lane, jobId)).state);
    victim.process.kill('SIGKILL');
    await victim.exited;
    if (process.env.MEMFOLD_SOAK_DEBUG) console.log(`lane ${lane.index} round ${round} victim ${v + 1} (${trigger}):\n  ${victim.lines.join('\n  ')}`);
    tally.workerKills++;
    interrupted.clear();
    activeAtKill = 0;
    for (const [id, jobId] of jobs) {
      if (before.get(id)!.state === 'completed') continue;
      const { state } = await jobState(lane, jobId);
      const atKill = stateBeforeKill.get(id)!;
      if (atKill === 'active') activeAtKill++;
      const operations = await memfold.persistence.listOperations(id);
      const pending = operations.find((op) => op.status === 'planned' || op.status === 'archived');
      const newlyCommitted = operations.some((op) => op.status === 'committed' && !operationsBefore.get(id)!.has(op.id));
      bump(tally.workerJobSteps, jobStepOf(state === 'completed' ? 'completed' : atKill, v, pending, newlyCommitted, slow.includes(id)));
      if (pending) interrupted.set(id, pending.id);
    }
  }
  await setSlowCommit(lane.admin, slow, false);

  // Reconcile here, or leave the interrupted operations to the retries (which reconcile first).
  const reconcileNow = rand() < 0.5;
  const leftToRetry = new Map<string, string>();
  for (const [id, operationId] of interrupted) {
    if (reconcileNow) countReconciled(tally, await memfold.reconcile(id));
    else leftToRetry.set(id, operationId);
  }

  const finisher = startWorker(lane, {});
  const deadline = 60_000 + 20_000 * lane.jobRetries;
  const settled = async () => {
    for (const jobId of jobs.values()) {
      const { state } = await jobState(lane, jobId);
      if (state !== 'completed' && state !== 'failed') return false;
    }
    return true;
  };
  try {
    await until(settled, deadline, `every job of round ${round} to complete or fail`, 250);
  } catch (error) {
    finisher.process.kill('SIGKILL');
    throw where(`${(error as Error).message}; finisher said: ${finisher.lines.slice(-8).join(' | ')}`);
  }
  // SIGTERM before the worker's handler is installed would kill it plainly: wait until it is taking jobs.
  await until(() => finisher.lines.some((line) => line.includes('taking compaction jobs')), 60_000, 'the finishing worker to start');
  // A job the finisher (never killed) ran more than once: a new attempt began while one was still running.
  const attempts = new Map<string, Set<string>>();
  for (const line of finisher.lines) {
    const match = /\(job ([0-9a-f-]+), attempt (\d+)\)/.exec(line);
    if (match) attempts.set(match[1]!, (attempts.get(match[1]!) ?? new Set()).add(match[2]!));
  }
  for (const seen of attempts.values()) if (seen.size > 1) tally.liveWorkerReruns++;
  if (process.env.MEMFOLD_SOAK_DEBUG) console.log(`lane ${lane.index} round ${round} finisher:\n  ${finisher.lines.join('\n  ')}`);
  finisher.process.kill('SIGTERM');
  await finisher.exited;
  if (finisher.process.exitCode !== 0) throw where(`the finishing worker exited with ${finisher.process.exitCode ?? finisher.process.signalCode}`);

  // Jobs: completed (with the outcome of their last attempt) or dead-lettered after their retries.
  const dead = await lane.boss.findJobs<CompactionJobData>(queueNames(lane.namespace).dead, { limit: 100_000 });
  for (const [id, jobId] of jobs) {
    const { state, output } = await jobState(lane, jobId);
    if (state === 'completed') {
      tally.jobs.completed++;
      bump(tally.jobs.byStatus, output?.status ?? 'no output');
      if (output?.status === 'compacted' && output.operationId) {
        const operation = (await memfold.persistence.listOperations(id)).find((op) => op.id === output.operationId);
        if (operation?.status !== 'committed') throw where(`${id}: job ${jobId} completed with operation ${output.operationId}, which is ${operation?.status}`);
      }
    } else if (dead.some((job) => job.data.conversationId === id && job.data.namespace === lane.namespace && !lane.deadSeen.has(job.id))) {
      tally.jobs.deadLettered++;
      for (const job of dead) if (job.data.conversationId === id) lane.deadSeen.add(job.id);
    } else {
      throw where(`${id}: job ${jobId} ended ${state} and is not in the dead-letter queue`);
    }
    // An interrupted operation left to the job: the retry reconciled it (unless the job was dead-lettered first).
    const left = leftToRetry.get(id);
    if (left && state === 'completed') {
      const operation = (await memfold.persistence.listOperations(id)).find((op) => op.id === left);
      if (operation?.status !== 'committed' && operation?.status !== 'rolled_back')
        throw where(`${id}: operation ${left} of the killed worker is still ${operation?.status} after the job's retry completed`);
      tally.leftToRetry++;
    }
  }

  // Then what any process finds: reconcile (a dead-lettered job's last interrupted operation), every invariant.
  for (const id of conversations) {
    countReconciled(tally, await memfold.reconcile(id));
    try {
      await checkInvariants(memfold, id, lane.appended.get(id)!, { toolPairs: true });
    } catch (error) {
      const message = (error as Error).message;
      classifyFailure(tally, message);
      throw where(`${id}: ${message}`);
    }
  }
}
