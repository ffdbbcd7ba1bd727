/**
 * Property-based: random histories (roles, tool pairs, sizes, unicode, hostile conversation ids),
 * compacted in rounds with a random fault at a random point, on the real stores. Whatever happens,
 * after reconcile every invariant holds (see test/support/invariants.ts).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { MemfoldError } from '../../src/errors.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import type { Summarizer } from '../../src/summarizer/summarizer.js';
import type { Archive } from '../../src/archive/archive.js';
import { turnMessages, turnShape } from '../support/arbitraries.js';
import { persistenceBackends } from '../support/backends.js';
import { checkInvariants } from '../support/invariants.js';
import { openStack, type Stack } from '../support/stack.js';

type FaultKind = 'none' | 'model' | 'write' | 'write-after-storing' | 'readback' | 'mark';

interface Fault {
  kind: FaultKind;
  /** Fires on the n-th call of its kind within the faulty round. */
  n: number;
  /** The undo fails too, leaving the operation for reconcile. */
  undoFails: boolean;
  round: number;
}

/** Counts calls and throws where the armed fault says; everything else goes to the real component. */
class FaultSwitch {
  armed: Fault | undefined;
  /** The armed fault went off. */
  fired = false;
  private calls: Record<string, number> = {};
  arm(fault: Fault | undefined): void {
    this.armed = fault;
    this.fired = false;
    this.calls = {};
  }
  hit(kind: FaultKind): boolean {
    this.calls[kind] = (this.calls[kind] ?? 0) + 1;
    const fires = this.armed?.kind === kind && this.armed.n === this.calls[kind];
    this.fired ||= fires;
    return fires;
  }
  undoFails(): boolean {
    return this.armed?.undoFails === true;
  }
}

/** As the LanceDB adapter reports its failures. */
const archiveError = (what: string) => new MemfoldError('archive_error', `injected: ${what}`);

/** The failure code a compaction must report for each fault. */
const EXPECTED_CODE: Record<Exclude<FaultKind, 'none'>, string> = {
  model: 'model_failed',
  write: 'archive_failed',
  'write-after-storing': 'archive_failed',
  readback: 'readback_failed',
  mark: 'archive_failed',
};

function faultyMemory(memory: Archive, faults: FaultSwitch): Archive {
  return {
    ...memory,
    async write(entries) {
      if (faults.hit('write')) throw archiveError('write refused');
      await memory.write(entries);
      if (faults.hit('write-after-storing')) throw archiveError('write stored, then failed');
    },
    async read(conversationId, labels) {
      const rows = await memory.read(conversationId, labels);
      return faults.hit('readback') ? rows.map((r) => ({ ...r, content: `${r.content}!` })) : rows;
    },
    async readDigests(conversationId, labels) {
      const digests = await memory.readDigests!(conversationId, labels);
      return faults.hit('readback') ? digests.map((d) => ({ ...d, content: `${d.content}!` })) : digests;
    },
    async mark(conversationId, labels, parent) {
      if (parent === null && faults.undoFails()) throw archiveError('undo refused');
      if (parent !== null && faults.hit('mark')) throw archiveError('mark refused');
      await memory.mark(conversationId, labels, parent);
    },
    async markEach(conversationId, marks) {
      if (faults.hit('mark')) throw archiveError('mark refused');
      await memory.markEach(conversationId, marks);
    },
    async delete(conversationId, labels) {
      if (faults.undoFails()) throw archiveError('undo refused');
      await memory.delete(conversationId, labels);
    },
    close: async () => undefined,
  };
}

function faultyModel(faults: FaultSwitch): Summarizer {
  const extractive = createExtractiveSummarizer();
  return {
    ...extractive,
    async summarize(request) {
      if (faults.hit('model')) throw new MemfoldError('model_error', 'injected: model down');
      return extractive.summarize(request);
    },
  };
}

const fault: fc.Arbitrary<Fault> = fc.record({
  kind: fc.constantFrom<FaultKind>('none', 'model', 'write', 'write-after-storing', 'readback', 'mark'),
  n: fc.integer({ min: 1, max: 3 }),
  undoFails: fc.boolean(),
  round: fc.integer({ min: 0, max: 2 }),
});

const scenario = fc.record({
  /** Unicode and metacharacters in the id: every store query must keep it scoped. */
  idSuffix: fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => s.replace(/\u0000/g, '')),
  rounds: fc.array(fc.array(turnShape, { minLength: 2, maxLength: 12 }), { minLength: 3, maxLength: 3 }),
  fault,
});

const settings = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 };
const RUNS = Number(process.env.MEMFOLD_PROPERTY_RUNS ?? 20);

for (const backend of persistenceBackends()) {
  describe(`${backend.name}: compaction properties under random faults`, () => {
    const faults = new FaultSwitch();
    let stack: Stack;
    beforeAll(async () => {
      stack = await openStack(backend, { compaction: settings, summarizer: faultyModel(faults), wrapMemory: (m) => faultyMemory(m, faults) });
    });
    afterAll(async () => stack?.close());

    it(`every message stays live or archived exactly once, whatever fails (${RUNS} random scenarios)`, async () => {
      let run = 0;
      const seen: Record<string, number> = {};
      await fc.assert(
        fc.asyncProperty(scenario, async ({ idSuffix, rounds, fault: planned }) => {
          const conversationId = `prop-${run++}-${idSuffix}`;
          const appended: ConversationMessage[] = [];
          for (const [round, turns] of rounds.entries()) {
            appended.push(...(await stack.memfold.append(conversationId, turnMessages(turns, `r${round}`, new Date(Date.UTC(2024, round, 1))))));
            faults.arm(round === planned.round ? planned : undefined);
            const result = await stack.memfold.compact(conversationId, { force: true });
            const fired = faults.fired ? faults.armed!.kind : undefined;
            faults.arm(undefined);
            // A fault that went off fails the compaction, and the result says where. (A corrupted read may
            // hit a lookup before the write rather than the read-back, which fails nothing.)
            if (fired !== undefined && fired !== 'none' && (fired !== 'readback' || result.status === 'failed')) {
              expect(result.failureCode, `fault ${fired} (${result.error})`).toBe(EXPECTED_CODE[fired]);
            }
            const key = `${result.status}${result.failureCode ? `:${result.failureCode}` : ''}`;
            seen[key] = (seen[key] ?? 0) + 1;
            // A failure returns the history it was given; nothing was deleted.
            if (result.status === 'failed') expect(result.history.map((m) => m.id)).toEqual((await stack.memfold.history(conversationId)).map((m) => m.id));
            if ((await stack.memfold.persistence.listPendingOperations(conversationId)).length > 0) await stack.memfold.reconcile(conversationId);
            await checkInvariants(stack.memfold, conversationId, appended, { toolPairs: true });
          }
        }),
        // Each scenario runs real stores for seconds: report the first counterexample instead of shrinking it for minutes.
        { numRuns: RUNS, endOnFailure: true },
      );
      console.log(`${backend.name} properties: ${RUNS} scenarios, compaction outcomes ${JSON.stringify(seen)}`);
      // The faults did fire: most scenarios must fail somewhere, and some must compact.
      expect(Object.keys(seen).some((k) => k.startsWith('failed'))).toBe(true);
      expect(seen.compacted ?? 0).toBeGreaterThan(0);
    }, 600_000);
  });
}
