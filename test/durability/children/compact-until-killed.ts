/**
 * Child process of the crash test: opens memfold on the test's PostgreSQL database and LanceDB folder,
 * compacts one conversation and SIGKILLs itself at the step boundary it was given. The ports are the
 * real ones; the wrappers only count calls and pull the trigger.
 *
 *   node --import tsx compact-until-killed.ts '<CrashJob as JSON>'
 *   echo '<CrashJob as JSON>' | node --import tsx compact-until-killed.ts
 *
 * Prints one JSON line with the compaction result when it was not killed.
 */
import { createHashingEmbedder } from '../../../src/embedding/hashing-embedder.js';
import { createMemfold } from '../../../src/memfold.js';
import { openLanceArchive } from '../../../src/archive/lancedb/lancedb-archive.js';
import type { Archive } from '../../../src/archive/archive.js';
import { createExtractiveSummarizer } from '../../../src/summarizer/extractive/extractive-summarizer.js';
import type { Summarizer } from '../../../src/summarizer/summarizer.js';
import { createKyselyPersistence } from '../../../src/persistence/kysely/kysely-store.js';
import type { PersistenceProvider } from '../../../src/persistence/persistence-provider.js';
import { createTokenCounter } from '../../../src/tokens/create-token-counter.js';
import type { CrashJob } from './crash-job.js';

/** The job comes as the argument, or, from a child started before its job was known, as one line on standard input. */
async function readJob(): Promise<string> {
  if (process.argv[2] !== undefined) return process.argv[2];
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

const job = JSON.parse(await readJob()) as CrashJob;
const { killAt } = job;
const die = (): never => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
};
const calls = { fold: 0, write: 0, mark: 0 };
/** Die when this is the n-th call of the chosen kind. */
const after = (point: 'fold' | 'write' | 'mark') => {
  calls[point]++;
  if (killAt.point === point && killAt.n === calls[point]) die();
};

const archive = await openLanceArchive({ uri: job.lanceDir, embedder: createHashingEmbedder() });
const memory: Archive = {
  ...archive,
  async write(entries) {
    await archive.write(entries);
    after('write');
  },
  async mark(conversationId, labels, parent) {
    await archive.mark(conversationId, labels, parent);
    after('mark');
  },
  async markEach(conversationId, marks) {
    await archive.markEach(conversationId, marks);
    after('mark');
  },
};

const store = await createKyselyPersistence({ dialect: 'postgres', databaseUrl: job.databaseUrl });
const persistence: PersistenceProvider = {
  ...store,
  async commitCompaction(commit) {
    // The test database sleeps inside the commit transaction (a trigger), so this fires mid-transaction.
    if (killAt.point === 'commit') setTimeout(die, killAt.ms);
    const report = await store.commitCompaction(commit);
    if (killAt.point === 'after-commit') die();
    return report;
  },
  async commitClearing(commit) {
    // The same: the test database sleeps inside the clearing's transaction.
    if (killAt.point === 'clear-commit') setTimeout(die, killAt.ms);
    const updated = await store.commitClearing(commit);
    if (killAt.point === 'after-clear-commit') die();
    return updated;
  },
};

const extractive = createExtractiveSummarizer();
const model: Summarizer = {
  ...extractive,
  async summarize(request) {
    const completion = await extractive.summarize(request);
    after('fold');
    return completion;
  },
};

const memfold = await createMemfold({
  env: {},
  compaction: job.settings,
  tokens: createTokenCounter({ mode: 'chars4' }),
  summarizer: model,
  archive: memory,
  persistence,
  onEvent: (event) => {
    // The plan is made and the operation recorded `planned` when the fold stage starts (the clear stage for tier 2).
    if (killAt.point === 'plan' && event.type === 'stage' && event.stage === 'fold') die();
    if (killAt.point === 'clear' && event.type === 'stage' && event.stage === 'clear') die();
  },
});
if (killAt.point === 'timer') setTimeout(die, killAt.ms);
const result = await memfold.compact(job.conversationId, { force: true, wait: true });
process.stdout.write(
  `${JSON.stringify({ status: result.status, tier: result.tier, cleared: result.toolOutputsCleared, failureCode: result.failureCode, error: result.error, calls })}\n`,
);
await memfold.close();
await archive.close();
await store.close();
process.exit(0);
