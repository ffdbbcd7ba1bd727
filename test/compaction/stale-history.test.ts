/**
 * A history read before another compaction changed the live rows in place (tier 2 cleared some of its tool outputs)
 * is planned again on the live rows, whichever tier the stale plan chose: compacting the stale copies would archive
 * those outputs a second time and leave their tool-output entries standing beside the transcript.
 */
import { describe, expect, it } from 'vitest';
import { createCompactor } from '../../src/compaction/compactor.js';
import type { NewMessage } from '../../src/conversation/types.js';
import { createMemfold } from '../../src/memfold.js';
import { checkInvariants } from '../support/invariants.js';

const at = (minute: number) => new Date(Date.UTC(2024, 6, 1, 8, minute)).toISOString();

function chat(turns: number, from: number): NewMessage[] {
  return Array.from({ length: turns }, (_, i) => [
    { role: 'user' as const, content: `Question ${from + i} about the invoice. ${'Please check it carefully. '.repeat(6)}`, createdAt: at(2 * (from + i)) },
    { role: 'assistant' as const, content: `Answer ${from + i}: the invoice is fine. ${'All lines add up. '.repeat(6)}`, createdAt: at(2 * (from + i) + 1) },
  ]).flat();
}

function lookups(turns: number, from: number): NewMessage[] {
  return Array.from({ length: turns }, (_, i) => {
    const t = from + i;
    const call = { id: `call_${t}`, type: 'function' as const, function: { name: 'get_invoice', arguments: `{"id":"INV-${t}"}` } };
    return [
      { role: 'user' as const, content: `Look up invoice INV-${t}.`, createdAt: at(2 * t) },
      { role: 'assistant' as const, content: '', toolCalls: [call], createdAt: at(2 * t) },
      {
        role: 'tool' as const,
        toolCallId: call.id,
        content: JSON.stringify({ id: `INV-${t}`, lines: Array.from({ length: 60 }, (_, k) => ({ sku: `S-${t}-${k}`, qty: k })) }),
        createdAt: at(2 * t + 1),
      },
      { role: 'assistant' as const, content: `Invoice INV-${t} has 60 lines.`, createdAt: at(2 * t + 1) },
    ];
  }).flat();
}

describe('a stale history', () => {
  it('is planned again when another compaction cleared its tool outputs meanwhile, even with nothing of its own to clear', async () => {
    const settings = { contextWindow: 8_000, keepToolUses: 2 };
    const memfold = await createMemfold({ store: 'memory', env: {}, compaction: settings });
    try {
      const appended = await memfold.append('invoices', [...chat(1, 0), ...lookups(2, 1), ...chat(20, 3)]);
      // Read now: its two tool uses are the most recent, so nothing in it is old enough to clear.
      const stale = await memfold.history('invoices');
      appended.push(...(await memfold.append('invoices', lookups(3, 23))));
      // Another process, tier 2 alone (its target is high): it clears the oldest outputs, those of the stale copy.
      const other = createCompactor({
        summarizer: memfold.summarizer,
        archive: memfold.archive,
        persistence: memfold.persistence,
        tokens: memfold.tokens,
        settings: { ...settings, targetTokens: 4_500 },
      });
      const clearing = await other.compactStored('invoices', { force: true });
      expect(clearing, JSON.stringify({ ...clearing, history: undefined })).toMatchObject({ status: 'compacted', tier: 2 });
      expect(clearing.toolOutputsCleared).toBeGreaterThanOrEqual(1);

      const result = await memfold.compactor.compactHistory(stale, 'invoices', { force: true });
      expect(result.status, result.error).toBe('compacted');
      // Every message archived once: the cleared outputs' entries are superseded by the segments that hold them.
      await checkInvariants(memfold, 'invoices', appended, { toolPairs: true });
    } finally {
      await memfold.close();
    }
  });

  it('read from the store before the conversation was erased and appended to again, with as many messages, is planned again', async () => {
    const settings = { contextWindow: 8_000, keepToolUses: 2 };
    const memfold = await createMemfold({ store: 'memory', env: {}, compaction: settings });
    try {
      const messages = [...chat(1, 0), ...lookups(3, 1), ...chat(30, 4)];
      await memfold.append('invoices', messages);
      let interleave = true;
      const persistence = {
        ...memfold.persistence,
        // The rows as read; then the conversation is erased and the same turns appended again under new ids.
        loadHistory: async (...args: Parameters<typeof memfold.persistence.loadHistory>) => {
          const rows = await memfold.persistence.loadHistory(...args);
          if (interleave) {
            interleave = false;
            expect((await memfold.eraseConversation('invoices')).status).toBe('erased');
            await memfold.append(
              'invoices',
              messages.map((m, i) => ({ ...m, id: `again-${i}` })),
            );
          }
          return rows;
        },
      };
      const parts = { summarizer: memfold.summarizer, archive: memfold.archive, tokens: memfold.tokens, settings };
      const result = await createCompactor({ ...parts, persistence }).compactStored('invoices', { force: true });
      expect(result.status, result.error).toBe('compacted');
      // Planned on the rows appended again: what it archived are theirs, and none of the erased ids came back.
      const archived = await memfold.archive.list({ conversationId: 'invoices', kind: 'transcript' });
      const ids = archived.flatMap((entry) => entry.sourceIds);
      expect(ids.length).toBeGreaterThan(0);
      expect(ids.every((id) => id.startsWith('again-'))).toBe(true);
    } finally {
      await memfold.close();
    }
  });
});
