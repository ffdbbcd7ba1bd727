/**
 * Text cut to a length (a message too long for one summarizer request, an extractive summary's line, a memory_read
 * passage) never ends in half a surrogate pair. Half a pair cannot be stored as UTF-8: LanceDB would hold U+FFFD in
 * its place, the batch read back would never equal the batch written, and every compaction of the conversation
 * would fail at the read-back (the crash soak found a tool call with astral characters cut that way).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { NewMessage } from '../../src/conversation/types.js';
import { textProblem } from '../../src/conversation/well-formed-text.js';
import { createMemfold } from '../../src/memfold.js';
import { persistenceBackends } from '../support/backends.js';

/**
 * Turns per round and rounds: enough for cut messages, extractive lines and re-summarizations in both rounds. Each
 * batch is a LanceDB write and read-back, so more turns only cost time (24 turns and 3 rounds took a minute on a
 * loaded machine, about 150 batches for the same checks).
 */
const TURNS = 8;
const ROUNDS = 2;

/** Astral characters after a 1- or 2-character prefix: a cut at any even (or odd) position falls inside a pair. */
const astral = (prefix: string, pairs: number) => prefix + '𝄞😀𑨋𐤋'.repeat(Math.ceil(pairs / 4)).slice(0, pairs * 2);

function conversation(): NewMessage[] {
  const messages: NewMessage[] = [];
  for (let i = 0; i < TURNS; i++) {
    const at = (k: number) => new Date(Date.UTC(2024, 5, 1, 10, i, k)).toISOString();
    messages.push({ role: 'user', content: `Question ${i}: ${astral('x'.repeat((i % 2) + 1), 40)}`, createdAt: at(0) });
    messages.push({
      role: 'assistant',
      content: '',
      toolCalls: [{ id: `call-${i}`, type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ q: astral('q', 30) }) } }],
      createdAt: at(1),
    });
    // Long enough to be cut for the summarizer, and a line longer than the extractive summary keeps.
    messages.push({ role: 'tool', toolCallId: `call-${i}`, name: 'lookup', content: astral('r'.repeat((i % 2) + 1), 700 + i), createdAt: at(2) });
    messages.push({ role: 'assistant', content: `Answer ${i}: ${astral('a', 220 + i)}`, createdAt: at(3) });
  }
  return messages;
}

describe('cuts of astral text', () => {
  const backend = persistenceBackends()[0]!;

  it(`${backend.name} + LanceDB: compactions and re-summarizations archive well-formed text and read it back`, async () => {
    const { persistence, cleanup } = await backend.open();
    const lance = await mkdtemp(path.join(os.tmpdir(), 'memfold-astral-'));
    const memfold = await createMemfold({
      persistence,
      env: {},
      config: { lancedbUri: lance },
      compaction: { contextWindow: 4_000, chunkTokens: 400, maxSummaryTokens: 200, clearToolOutputs: false },
    });
    try {
      await memfold.append('astral', conversation());
      const results = [];
      for (let round = 0; round < ROUNDS; round++) {
        results.push(await memfold.compact('astral', { force: true }));
        await memfold.append(
          'astral',
          conversation().map((m, k) => ({ ...m, createdAt: new Date(Date.UTC(2024, 5, 2 + round, 9, 0, k)).toISOString() })),
        );
      }
      for (const result of results) expect(result, result.error).toMatchObject({ status: 'compacted' });
      expect(results.every((result) => result.failureCode === undefined)).toBe(true);
      expect(results.reduce((sum, result) => sum + result.resummarized.length, 0)).toBeGreaterThan(0);

      const archive = await memfold.archive.list({ conversationId: 'astral' });
      expect(archive.length).toBeGreaterThan(0);
      // The fold read cut messages, and what it wrote is stored as written.
      expect(archive.some((entry) => entry.content.includes('cut for the summarizer'))).toBe(true);
      for (const entry of archive) {
        expect(textProblem(entry.content), entry.label).toBeUndefined();
        expect(entry.content, entry.label).not.toContain('\uFFFD');
      }
      const read = await memfold.memoryRead('astral').execute({ query: 'Question 3' });
      expect(read.ok).toBe(true);
      expect(textProblem(read.output)).toBeUndefined();
    } finally {
      await memfold.close();
      await cleanup();
      await rm(lance, { recursive: true, force: true });
    }
  });
});
