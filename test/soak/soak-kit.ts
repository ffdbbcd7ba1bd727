/**
 * What the soak's lanes share: the tally the summary prints, the violation that stops the soak, the slow-commit
 * triggers (a listed conversation's commit sleeps inside its transaction, so that a kill lands mid-commit), and
 * small helpers. The triggers are the crash test's (test/durability/crash-recovery.test.ts), kept here as SQL.
 */
import type pg from 'pg';
import type { ReconcileOutcome } from '../../src/compaction/journal/reconcile.js';

export interface SoakTally {
  runs: { inProcess: number; worker: number };
  /** In-process kills by kill point (`plan`, `fold`, ... as in `children/crash-job.ts`), SIGKILL confirmed. */
  inProcessKills: Record<string, number>;
  /** In-process runs whose kill point never came (fewer folds, no re-summarization): the child finished. */
  inProcessFinished: number;
  /** In-process compactions that failed (rolled back, nothing lost) instead of reaching their kill point, by error. */
  inProcessFailed: Record<string, number>;
  /** Worker kills: one per killed `memfold worker` process. */
  workerKills: number;
  /** What each worker kill waited for (`worker-lane.ts`, `TRIGGERS`). */
  workerTriggers: Record<string, number>;
  /** What each conversation's job was doing when its worker died (`jobStepOf`). */
  workerJobSteps: Record<string, number>;
  reconcile: { finished: number; undone: number; busy: number };
  /** Interrupted operations of killed workers that the next attempt of the job reconciled (the soak did not). */
  leftToRetry: number;
  /** Jobs that one live (never killed) worker ran twice: another attempt started while one still ran (its claim was lost). */
  liveWorkerReruns: number;
  jobs: { enqueued: number; completed: number; deadLettered: number; byStatus: Record<string, number> };
  messagesLost: number;
  duplicates: number;
  /** Messages appended over the soak (both lanes). */
  appended: number;
}

export function newTally(): SoakTally {
  return {
    runs: { inProcess: 0, worker: 0 },
    inProcessKills: {},
    inProcessFinished: 0,
    inProcessFailed: {},
    workerKills: 0,
    workerTriggers: {},
    workerJobSteps: {},
    reconcile: { finished: 0, undone: 0, busy: 0 },
    leftToRetry: 0,
    liveWorkerReruns: 0,
    jobs: { enqueued: 0, completed: 0, deadLettered: 0, byStatus: {} },
    messagesLost: 0,
    duplicates: 0,
    appended: 0,
  };
}

export function bump(counts: Record<string, number>, key: string, by = 1): void {
  counts[key] = (counts[key] ?? 0) + by;
}

export function countReconciled(tally: SoakTally, outcomes: readonly ReconcileOutcome[]): void {
  for (const outcome of outcomes) {
    if (outcome.action === 'committed') tally.reconcile.finished++;
    else if (outcome.action === 'rolled_back') tally.reconcile.undone++;
    else tally.reconcile.busy++;
  }
}

/** A broken invariant: the soak stops and prints how to replay it. */
export class SoakViolation extends Error {
  constructor(
    readonly lane: string,
    readonly run: number,
    message: string,
  ) {
    super(`${lane} run ${run}: ${message}`);
  }
}

/** The message of a failed `checkInvariants` assertion, with what it tells about lost or duplicated messages. */
export function classifyFailure(tally: SoakTally, message: string): void {
  if (/is lost|live and archived/.test(message)) tally.messagesLost++;
  if (/archived twice|labels are unique|depth-0 coverage/.test(message)) tally.duplicates++;
}

export { installSlowCommit } from '../durability/crash-kit.js';

export async function setSlowCommit(admin: pg.Client, conversationIds: readonly string[], slow: boolean): Promise<void> {
  if (conversationIds.length === 0) return;
  if (slow) await admin.query('insert into memfold_test_slow_commit select unnest($1::text[]) on conflict do nothing', [conversationIds]);
  else await admin.query('delete from memfold_test_slow_commit where conversation_id = any($1::text[])', [conversationIds]);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Poll `check` every `everyMs` until it holds; throws naming `what` after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms: number, what: string, everyMs = 100): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Parse `--runs N --seed S --worker-share F --batch K --lanes L`. */
export interface SoakArgs {
  runs: number;
  seed: number;
  /** Share of the runs that are worker-job runs (each conversation of a killed worker's batch is one run). Default 0.5. */
  workerShare: number;
  /** Background conversations per worker kill (all their jobs run at once in the killed worker). Default 8. */
  batch: number;
  /** Worker lanes running at once, each on its own namespace (their heartbeat waits overlap). Default 2. */
  lanes: number;
  /** In-process crash children running at once. Default 2. */
  parallel: number;
}

export function parseSoakArgs(argv: readonly string[]): SoakArgs {
  const args: SoakArgs = { runs: 20, seed: Math.floor(Math.random() * 2 ** 31), workerShare: 0.5, batch: 8, lanes: 2, parallel: 2 };
  const names: Record<string, keyof SoakArgs> = {
    '--runs': 'runs',
    '--seed': 'seed',
    '--worker-share': 'workerShare',
    '--batch': 'batch',
    '--lanes': 'lanes',
    '--parallel': 'parallel',
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') continue;
    const [flag, inline] = arg.split('=', 2) as [string, string | undefined];
    const key = names[flag];
    if (key === undefined) throw new Error(`unknown option ${arg} (known: ${Object.keys(names).join(', ')})`);
    const raw = inline ?? argv[++i];
    const value = Number(raw);
    if (raw === undefined || !Number.isFinite(value) || value < 0) throw new Error(`Invalid option ${flag}: must be a number >= 0, got ${raw}`);
    args[key] = value;
  }
  if (args.workerShare > 1) throw new Error('Invalid option --worker-share: must be between 0 and 1');
  if (args.batch < 1 || args.lanes < 1 || args.parallel < 1) throw new Error('Invalid options --batch, --lanes, --parallel: must be >= 1');
  return args;
}
