/**
 * Property-based: random sequences of append, import, compact, re-summarize, crash and restart, with
 * message ids drawn from a small pool so that they collide with live, archived and pending ids. After
 * every step:
 * - every message ever accepted is live or archived verbatim, covered by exactly one depth-0 batch;
 * - a refused append or import changed nothing (live rows, used ids);
 * - no archive row of a committed operation was replaced (same operation, same content);
 * and after a crash and restart (reconcile on open) nothing is pending. Each process started (one per sequence, and
 * one per restart) compacts in the other mode than the one before (delete, overlay, delete, ...), so ids also collide
 * with rows overlay compactions kept, and histories mix both modes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArchiveEntry, ConversationMessage, NewMessage } from '../../src/conversation/types.js';
import { runImport } from '../../src/cli/commands/import.js';
import { MemfoldError } from '../../src/errors.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { createMemfold, type Memfold } from '../../src/memfold.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { Archive } from '../../src/archive/archive.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import type { Summarizer } from '../../src/summarizer/summarizer.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { persistenceBackends, type OpenedBackend } from '../support/backends.js';
import { checkInvariants } from '../support/invariants.js';

const POOL = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'];
const settings = { contextWindow: 2_000, keepRecentTokens: 300, keepRecentMessages: 2, keepFirstTurns: 0, chunkTokens: 300, clipBuffer: 1 };
const RUNS = Number(process.env.MEMFOLD_PROPERTY_RUNS ?? 12);
const silent = { out: () => undefined, err: () => undefined };

type Draft = { id: string | undefined; words: number; variant: number };
type CrashPoint = 'write' | 'mark' | 'model' | 'commit';
type Step =
  | { kind: 'append'; messages: Draft[] }
  | { kind: 'import'; messages: Draft[] }
  | { kind: 'compact' }
  | { kind: 'resummarize' }
  /** A compaction that dies at the n-th archive write or mark: nothing it did is undone until reconcile. */
  | { kind: 'crash'; at: CrashPoint; n: number; messages: Draft[] }
  | { kind: 'restart' };

const draft = fc.record({ id: fc.option(fc.constantFrom(...POOL), { nil: undefined, freq: 2 }), words: fc.integer({ min: 60, max: 200 }), variant: fc.nat(2) });
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('append' as const), messages: fc.array(draft, { minLength: 1, maxLength: 6 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('import' as const), messages: fc.array(draft, { minLength: 1, maxLength: 6 }) }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'compact' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'resummarize' as const }) },
  // A crash step first appends fresh messages, so that its compaction has work to die in.
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('crash' as const),
      at: fc.constantFrom<CrashPoint>('write', 'mark', 'model', 'commit'),
      n: fc.integer({ min: 1, max: 2 }),
      messages: fc.array(
        draft.map((d) => ({ ...d, id: undefined })),
        { minLength: 2, maxLength: 6 },
      ),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
);

/** Counts archive and model calls while armed and, at the chosen one, dies: the call never completes and nothing is undone. */
class Crash {
  armed: { at: CrashPoint; n: number } | undefined;
  dead = false;
  private calls = 0;
  arm(at: CrashPoint, n: number): void {
    this.armed = { at, n };
    this.dead = false;
    this.calls = 0;
  }
  disarm(): void {
    this.armed = undefined;
    this.dead = false;
  }
  check(at: CrashPoint | 'undo'): void {
    // After the crash point the process is gone: neither the undo nor anything else reaches the stores.
    if (this.dead) throw new MemfoldError('archive_error', 'the process died');
    if (this.armed?.at === at && ++this.calls === this.armed.n) {
      this.dead = true;
      throw new MemfoldError(at === 'model' ? 'model_error' : 'archive_error', `killed at ${at} ${this.armed.n}`);
    }
  }
}

function crashingMemory(memory: Archive, crash: Crash): Archive {
  return {
    ...memory,
    async write(entries) {
      crash.check('write');
      await memory.write(entries);
    },
    async mark(conversationId, labels, parent) {
      crash.check(parent === null ? 'undo' : 'mark');
      await memory.mark(conversationId, labels, parent);
    },
    async markEach(conversationId, marks) {
      crash.check('mark');
      await memory.markEach(conversationId, marks);
    },
    async delete(conversationId, labels) {
      crash.check('undo');
      await memory.delete(conversationId, labels);
    },
    close: async () => undefined,
  };
}

/** After the crash point the journal and the live table stay as the process left them. */
function crashingPersistence(persistence: PersistenceProvider, crash: Crash): PersistenceProvider {
  const alive =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      crash.check('undo');
      return fn(...args);
    };
  return {
    ...persistence,
    migrate: () => persistence.migrate(),
    transaction: (fn) => persistence.transaction(fn),
    withConversationLock: (id, fn, options) => persistence.withConversationLock(id, fn, options),
    append: alive((id: string, messages: NewMessage[]) => persistence.append(id, messages)),
    recordOperation: alive((operation: Parameters<PersistenceProvider['recordOperation']>[0]) => persistence.recordOperation(operation)),
    updateOperation: alive((update: Parameters<PersistenceProvider['updateOperation']>[0]) => persistence.updateOperation(update)),
    commitCompaction: async (commit) => {
      crash.check('commit');
      return persistence.commitCompaction(commit);
    },
    close: async () => undefined,
  };
}

function crashingModel(crash: Crash): Summarizer {
  const extractive = createExtractiveSummarizer();
  return { ...extractive, summarize: (request) => (crash.check('model'), extractive.summarize(request)) };
}

function content(d: Draft, id: string | undefined): string {
  const topic = ['harbour', 'glacier', 'orchard'][d.variant]!;
  return `${id ?? 'auto'} ${topic} ${Array.from({ length: d.words }, (_, i) => `w${i % 17}`).join(' ')}`;
}

function toNew(drafts: readonly Draft[], minute: number): NewMessage[] {
  return drafts.map((d, i) => ({
    ...(d.id !== undefined ? { id: d.id } : {}),
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: content(d, d.id),
    createdAt: new Date(Date.UTC(2024, 0, 1, 0, minute + i)).toISOString(),
  }));
}

/** Rows (overlay rows included) and used ids of the pool: what a refused input must leave as it was. */
async function snapshot(memfold: Memfold, conversationId: string): Promise<unknown> {
  const live = await memfold.persistence.loadHistory(conversationId, { includeCompacted: true });
  const used = await memfold.persistence.findUsedIds(conversationId, POOL);
  return { live, used: used.sort((x, y) => x.id.localeCompare(y.id)) };
}

/** Rows of committed operations, by label: none may change content or owner later. */
async function committedRows(memfold: Memfold, conversationId: string): Promise<Map<string, ArchiveEntry>> {
  const committed = new Set((await memfold.persistence.listOperations(conversationId)).filter((op) => op.status === 'committed').map((op) => op.id));
  return new Map((await memfold.archive.list({ conversationId })).filter((e) => committed.has(e.operationId)).map((e) => [e.label, e]));
}

for (const backend of persistenceBackends()) {
  describe(`${backend.name}: ids collide with live, archived and pending ones`, () => {
    const crash = new Crash();
    let opened: OpenedBackend;
    let archive: Archive;
    let memfold: Memfold;
    let dir: string;
    let starts = 0;

    /**
     * A process on the stores. Opening reconciles what a crash of the one before left, unless told not
     * to: then the crashed operation stays pending (its ids still live) until the next compaction.
     */
    async function start(reconcileOnOpen = true): Promise<void> {
      crash.disarm();
      memfold = await createMemfold({
        reconcileOnOpen,
        env: {},
        tokens: createTokenCounter({ mode: 'chars4' }),
        compaction: { ...settings, mode: starts++ % 2 === 0 ? 'delete' : 'overlay' },
        summarizer: crashingModel(crash),
        persistence: crashingPersistence(opened.persistence, crash),
        archive: crashingMemory(archive, crash),
      });
    }

    beforeAll(async () => {
      opened = await backend.open();
      dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-id-reuse-'));
      archive = await openLanceArchive({ uri: path.join(dir, 'lancedb'), embedder: createHashingEmbedder() });
      await start();
    });
    afterAll(async () => {
      await archive?.close();
      await opened?.cleanup();
      await rm(dir, { recursive: true, force: true });
    });

    it(`every accepted message stays live or archived, refusals change nothing, no committed row is replaced (${RUNS} sequences)`, async () => {
      let run = 0;
      const seen: Record<string, number> = {};
      const count = (key: string) => void (seen[key] = (seen[key] ?? 0) + 1);
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 8, maxLength: 16 }), async (steps) => {
          const conversationId = `ids-${run++}`;
          // A process of its own for each sequence, so that half of them start in overlay mode.
          await start();
          const accepted: ConversationMessage[] = [];
          let minute = 0;
          let rowsBefore = new Map<string, ArchiveEntry>();
          for (const [index, current] of steps.entries()) {
            const before = await snapshot(memfold, conversationId);
            if (current.kind === 'append' || current.kind === 'import') {
              const messages = toNew(current.messages, minute);
              minute += messages.length;
              const liveIds = new Set((await memfold.history(conversationId)).map((m) => m.id));
              const ids = messages.flatMap((m) => (m.id === undefined ? [] : [m.id]));
              let outcome: 'accepted' | 'refused';
              if (current.kind === 'append') {
                outcome = await memfold.append(conversationId, messages).then(
                  (stored) => (accepted.push(...stored), 'accepted' as const),
                  (error: unknown) => {
                    expect(error, `step ${index}: append refused with ${String(error)}`).toMatchObject({ code: 'invalid_argument' });
                    return 'refused' as const;
                  },
                );
              } else {
                const file = path.join(dir, `${conversationId}-${index}.jsonl`);
                await writeFile(file, messages.map((m) => JSON.stringify({ ...m, created_at: m.createdAt, createdAt: undefined })).join('\n') + '\n');
                outcome = await runImport(memfold, file, { conversation: conversationId, json: true }, silent).then(
                  () => 'accepted' as const,
                  (error: unknown) => {
                    expect(error, `step ${index}: import refused with ${String(error)}`).toMatchObject({ code: 'invalid_argument' });
                    return 'refused' as const;
                  },
                );
                if (outcome === 'accepted') {
                  const fresh = (await memfold.history(conversationId)).filter((m) => m.kind !== 'clip_archive' && !liveIds.has(m.id));
                  accepted.push(...fresh);
                }
              }
              const usedBefore = new Set((before as { used: Array<{ id: string }> }).used.map((u) => u.id));
              const collides = ids.some((id, k) => usedBefore.has(id) || ids.indexOf(id) !== k);
              // An append with a used or repeated id is refused; an import may skip lines it already stored.
              if (current.kind === 'append') expect(outcome, `step ${index}: ids ${ids.join(',')}`).toBe(collides ? 'refused' : 'accepted');
              else if (!collides) expect(outcome, `step ${index}: ids ${ids.join(',')}`).toBe('accepted');
              if (outcome === 'refused')
                expect(await snapshot(memfold, conversationId), `step ${index}: a refused ${current.kind} changed nothing`).toEqual(before);
              count(`${current.kind}:${outcome}`);
            } else if (current.kind === 'compact' || current.kind === 'crash') {
              if (current.kind === 'crash') {
                const messages = toNew(current.messages, minute);
                minute += messages.length;
                accepted.push(...(await memfold.append(conversationId, messages)));
                crash.arm(current.at, current.n);
              }
              const result = await memfold.compact(conversationId, { force: true });
              count(`${current.kind}:${result.status}${crash.dead ? ':died' : ''}`);
              if (result.status === 'compacted') count(`compacted:${memfold.compactor.settings.mode}`);
              if (current.kind === 'compact') expect(result.status, `step ${index}: ${result.error}`).not.toBe('failed');
              if (crash.dead) await start(false);
              crash.disarm();
            } else if (current.kind === 'resummarize') {
              // Re-summarizing reconciles first: a crashed compaction's batches may be undone (or its operation
              // finished) before the depth is read, so the expectation is read after the same reconcile.
              await memfold.reconcile(conversationId);
              const frontier = await memfold.compactor.frontier(conversationId);
              const depth0 = frontier.filter((b) => b.depth === 0).length;
              const done = await memfold.compactor.resummarizeDepth(conversationId, 0).then(
                () => true,
                (error: unknown) => {
                  expect(error, `step ${index}`).toMatchObject({ field: 'depth' });
                  return false;
                },
              );
              expect(done).toBe(depth0 >= 2);
              count(`resummarize:${done}`);
            } else {
              await start();
              count('restart');
            }
            // While a crashed operation is pending its messages are still live: refusals and committed rows are
            // checked at every step, the full invariants once reconcile (next compaction, or open) settled it.
            const pending = (await memfold.persistence.listPendingOperations(conversationId)).length > 0;
            if (pending) count('pending');
            else await checkInvariants(memfold, conversationId, accepted);
            const rowsNow = await committedRows(memfold, conversationId);
            for (const [label, row] of rowsBefore) {
              const now = rowsNow.get(label);
              expect(now, `step ${index}: committed row ${label} is gone`).toBeDefined();
              expect({ operationId: now!.operationId, content: now!.content }, `step ${index}: committed row ${label} was replaced`).toEqual({
                operationId: row.operationId,
                content: row.content,
              });
            }
            rowsBefore = rowsNow;
          }
          await memfold.reconcile(conversationId);
          await checkInvariants(memfold, conversationId, accepted);
        }),
        // Each sequence runs real stores for seconds: report the first counterexample instead of shrinking it for minutes.
        { numRuns: RUNS, endOnFailure: true },
      );
      console.log(`${backend.name} id-reuse properties: ${RUNS} sequences, steps ${JSON.stringify(seen)}`);
      // The pool makes collisions happen: some inputs were refused, some compactions archived, some crashed.
      expect(seen['append:refused'] ?? 0).toBeGreaterThan(0);
      expect(seen['compact:compacted'] ?? 0).toBeGreaterThan(0);
      expect(seen['compacted:overlay'] ?? 0, 'compactions in overlay mode').toBeGreaterThan(0);
    }, 600_000);
  });
}
