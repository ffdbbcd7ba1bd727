/**
 * SIGKILL between the journal ahead and the batches' writes (PostgreSQL + LanceDB), with the crash test's child
 * (children/compact-until-killed.ts): a compaction journals every label of its chunks at once, then writes the
 * transcript segments, then each batch as its summary arrives. Killed right after the segments' write, its journal
 * names batch labels that were never written. Reconcile must undo it (never take it as archived), remove every row it
 * wrote and leave none of its own, and the next compaction must archive the same messages once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { createPostgresTestDatabase, postgresServerUrl } from '../support/backends.js';
import { checkInvariants } from '../support/invariants.js';
import { dialogue } from '../support/messages.js';
import { bundleChild, startedChildren, type BundledChild, type StartedChildren } from './child-process.js';
import type { CrashJob } from './children/crash-job.js';

const CHILD_SOURCE = new URL('./children/compact-until-killed.ts', import.meta.url);
const settings = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 };
const CONVERSATION = "ahead-'crash'";

const databaseUrl = postgresServerUrl();

describe.skipIf(databaseUrl === undefined)('SIGKILL after the journal ahead, before the batches are written (PostgreSQL + LanceDB)', () => {
  let database: { url: string; drop(): Promise<void> };
  let lanceDir: string;
  let memfold: Memfold;
  let child: BundledChild;
  let children: StartedChildren;

  beforeAll(async () => {
    child = await bundleChild(CHILD_SOURCE);
    children = startedChildren(child, 1);
    database = await createPostgresTestDatabase(databaseUrl!);
    lanceDir = await mkdtemp(path.join(os.tmpdir(), 'memfold-crash-ahead-'));
    memfold = await createMemfold({
      env: {},
      config: { databaseUrl: database.url, lancedbUri: lanceDir },
      compaction: settings,
      tokens: createTokenCounter({ mode: 'chars4' }),
    });
  }, 60_000);

  afterAll(async () => {
    await children?.close();
    await child?.remove();
    await memfold?.close();
    await database?.drop();
    if (lanceDir) await rm(lanceDir, { recursive: true, force: true });
  });

  it('undoes the compaction: its journaled labels written or not, none of its rows stays, nothing is lost', async () => {
    const appended: ConversationMessage[] = await memfold.append(CONVERSATION, [{ role: 'system', content: 'You are terse.' }, ...dialogue(24)]);
    const job: CrashJob = { databaseUrl: database.url, lanceDir, conversationId: CONVERSATION, settings, killAt: { point: 'write', n: 1 } };
    const exit = await children.run(JSON.stringify(job));
    expect(exit.signal, exit.stderr).toBe('SIGKILL');

    const [operation, ...others] = await memfold.persistence.listPendingOperations(CONVERSATION);
    expect(others).toEqual([]);
    expect(operation).toMatchObject({ status: 'planned' });
    const stored = new Set((await memfold.archive.read(CONVERSATION, operation!.labels)).map((e) => e.label));
    const unwritten = operation!.labels.filter((label) => !stored.has(label));
    // The state this test is about: the segments written, batch labels on the journal and not in the archive.
    expect(stored.size).toBeGreaterThan(0);
    expect(unwritten.length).toBeGreaterThan(0);

    const outcomes = await memfold.reconcile(CONVERSATION);
    expect(outcomes).toEqual([expect.objectContaining({ operationId: operation!.id, action: 'rolled_back' })]);
    const left = (await memfold.archive.list({ conversationId: CONVERSATION })).filter((e) => e.operationId === operation!.id);
    expect(left).toEqual([]);
    expect((await memfold.history(CONVERSATION)).length).toBe(appended.length);
    await checkInvariants(memfold, CONVERSATION, appended);

    // The same messages are archived once by the next compaction, some of them under the labels the killed one journaled.
    const result = await memfold.compact(CONVERSATION, { force: true });
    expect(result.status).toBe('compacted');
    expect(await memfold.persistence.listPendingOperations(CONVERSATION)).toEqual([]);
    await checkInvariants(memfold, CONVERSATION, appended);
  }, 120_000);
});
