/**
 * The promise "every message ever appended is live or archived verbatim" whatever ids a caller sends:
 * an id is never accepted twice in a conversation, and an archive write never replaces a row of
 * another operation, even when a label is already taken.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { NewMessage } from '../../src/conversation/types.js';
import { baseLabel } from '../../src/compaction/format/labels.js';
import { persistenceBackends } from '../support/backends.js';
import { checkInvariants } from '../support/invariants.js';
import { openStack, type Stack } from '../support/stack.js';

const settings = { contextWindow: 4_000 };

/** The report's conversation: 200 turns with ids m000..m199, a minute apart. */
function turns(from: number, to: number, edit = ''): NewMessage[] {
  return Array.from({ length: to - from }, (_, k) => {
    const i = from + k;
    return {
      id: `m${String(i).padStart(3, '0')}`,
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `${edit}turn ${String(i).padStart(3, '0')} ${'lorem ipsum dolor sit amet '.repeat(8)}`,
      createdAt: new Date(Date.UTC(2024, 0, 1, 0, i)).toISOString(),
    };
  });
}

for (const backend of persistenceBackends()) {
  describe(`${backend.name}: ids are never reused`, () => {
    let stack: Stack | undefined;
    afterEach(async () => {
      await stack?.close();
      stack = undefined;
    });

    it('refuses new messages that re-use archived ids, naming the id; the archived originals stay readable', async () => {
      stack = await openStack(backend, { compaction: settings });
      const appended = await stack.memfold.append('re', turns(0, 200));
      expect((await stack.memfold.compact('re', { force: true })).status).toBe('compacted');
      const archived = new Set((await stack.archive.list({ conversationId: 're', kind: 'transcript' })).flatMap((t) => t.sourceIds));
      expect(archived.has('m031')).toBe(true);

      // Lines 3..186 of the report's second file: the same ids, edited text.
      await expect(stack.memfold.append('re', turns(2, 186, 'EDITED '))).rejects.toMatchObject({
        code: 'invalid_argument',
        field: 'messages[0].id',
        message: expect.stringContaining('"m002" is already used'),
      });
      expect((await stack.memfold.compact('re', { force: true })).status).not.toBe('failed');
      const found = await stack.memfold.memoryRead('re').execute({ query: 'turn 031 lorem', kind: 'transcript', limit: 20 });
      expect(found.output).toContain('turn 031 lorem');
      expect(found.output).not.toContain('EDITED');
      await checkInvariants(stack.memfold, 're', appended);
    });

    it('a compaction whose label another operation already holds takes a longer one and leaves that row as it was', async () => {
      stack = await openStack(backend, { compaction: settings });
      const appended = await stack.memfold.append('lb', turns(0, 200));
      // Learn the labels this compaction chooses, then undo it, and plant rows of another operation there.
      const first = await stack.memfold.compact('lb', { force: true });
      expect(first.status).toBe('compacted');
      const chosen = await stack.archive.list({ conversationId: 'lb' });
      expect(chosen.map((e) => e.label)).toContain(
        baseLabel({ kind: 'summary', depth: 0, time: first.batches[0]!.end, sourceIds: first.batches[0]!.sourceIds }),
      );

      const other = await openStack(backend, { compaction: settings });
      try {
        await other.memfold.append('lb', turns(0, 200));
        const planted = chosen.map((e) => ({ ...e, content: `${e.content} (planted)`, operationId: 'another-operation' }));
        await other.archive.write(planted);
        const result = await other.memfold.compact('lb', { force: true });
        expect(result.status).toBe('compacted');
        const rows = await other.archive.list({ conversationId: 'lb' });
        for (const row of planted) {
          expect(
            rows.find((r) => r.label === row.label),
            row.label,
          ).toMatchObject({ operationId: 'another-operation', content: row.content });
        }
        const own = rows.filter((r) => r.operationId === result.operationId);
        // The same messages make the same depth-0 batches and segments; re-summarization may differ, since the
        // planted batches are in this frontier too.
        const depth0 = (entries: typeof rows) => entries.filter((r) => r.depth === 0).length;
        expect(depth0(own)).toBe(depth0(chosen));
        for (const row of own) expect(chosen.map((e) => e.label)).not.toContain(row.label);
      } finally {
        await other.close();
      }
      await checkInvariants(stack.memfold, 'lb', appended);
    });
  });
}
