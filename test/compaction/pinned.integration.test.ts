/**
 * Pinned messages through whole compactions on real stores (LanceDB, the extractive summarizer, chars/4 tokens): a
 * message appended with `pinned: true`, and a pinned tool call with its result, stay in `context()` in their places
 * through 10 compactions, are never in a transcript segment nor cleared by tier 2, and count in `usage`; once
 * unpinned, the next compaction takes them. And a history ending with an assistant question keeps it live however
 * small the tail.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ConversationMessage, NewMessage } from '../../src/conversation/types.js';
import { persistenceBackends } from '../support/backends.js';
import { checkInvariants } from '../support/invariants.js';
import { dialogue } from '../support/messages.js';
import { openStack, type Stack } from '../support/stack.js';

const settings = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300, toolOutputMaxLines: 10 };
/** 60 lines, about 600 tokens: over `toolOutputMaxLines`, and far larger than a cleared output's placeholder. */
const BIG_OUTPUT = Array.from({ length: 60 }, (_, i) => `line ${i}: vault inventory row ${i} holds crate ${4000 + i}`).join('\n');

/** Message times a minute apart, in append order. */
let minute = 0;
const nextAt = () => new Date(Date.UTC(2024, 1, 1, 8, minute++)).toISOString();

/** `turns` user/assistant pairs with distinctive words, from pair `from` on. */
function talk(turns: number, from: number): NewMessage[] {
  return Array.from({ length: turns }, (_, i) => [
    { role: 'user' as const, content: `Turn ${from + i}: tell me about topic-${from + i}. ${'filler words here '.repeat(8)}`, createdAt: nextAt() },
    { role: 'assistant' as const, content: `About topic-${from + i}: item ${2000 + from + i}. ${'more filler text '.repeat(8)}`, createdAt: nextAt() },
  ]).flat();
}

function toolTurn(n: number, options: { pinned?: boolean; output?: string } = {}): NewMessage[] {
  const at = (_k: number) => nextAt();
  return [
    { role: 'user', content: `Look up crate batch ${n}.`, createdAt: at(0) },
    {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: `call_${n}`, type: 'function', function: { name: 'lookup', arguments: `{"batch":${n}}` } }],
      createdAt: at(1),
      ...(options.pinned ? { pinned: true } : {}),
    },
    { role: 'tool', toolCallId: `call_${n}`, name: 'lookup', content: options.output ?? `batch ${n}: ${'crate row '.repeat(60)}`, createdAt: at(2) },
    { role: 'assistant', content: `Batch ${n} looked up.`, createdAt: at(3) },
  ];
}

/** The ids every transcript segment holds, and those of the tool outputs tier 2 archived. */
async function archivedIds(stack: Stack, conversationId: string): Promise<{ transcribed: Set<string>; cleared: Set<string> }> {
  const entries = await stack.archive.list({ conversationId });
  const ids = (kind: string) => new Set(entries.filter((e) => e.kind === kind).flatMap((e) => (e.messages ?? []).map((m) => m.id)));
  return { transcribed: ids('transcript'), cleared: ids('tool_output') };
}

for (const backend of persistenceBackends()) {
  describe(`${backend.name}: pinned messages through compactions`, () => {
    let stack: Stack | undefined;
    afterEach(async () => {
      await stack?.close();
      stack = undefined;
    });

    it('stay in context in their places through 10 compactions, never archived nor cleared, counted in usage; unpinned, the next compaction takes them', async () => {
      stack = await openStack(backend, { compaction: { ...settings, keepToolUses: 1, clearToolOutputMinTokens: 20 } });
      const { memfold } = stack;
      const id = 'pinned-10';
      const appended: ConversationMessage[] = [];
      const append = async (messages: NewMessage[]) => {
        const stored = await memfold.append(id, messages);
        appended.push(...stored);
        return stored;
      };
      await append([{ role: 'system', content: 'You are terse.' }, ...talk(3, 0)]);
      const [fact] = await append([{ role: 'user', content: 'Remember: the vault code is 4417.', pinned: true, createdAt: nextAt() }]);
      await append([{ role: 'assistant', content: 'Noted.', createdAt: nextAt() }]);
      const pinnedTurn = await append(toolTurn(1, { pinned: true, output: BIG_OUTPUT }));
      const pinnedIds = [fact!.id, pinnedTurn[1]!.id, pinnedTurn[2]!.id];
      await append(toolTurn(2));
      await append(talk(3, 3));

      for (let round = 0; round < 10; round++) {
        await append([...toolTurn(10 + round), ...talk(3, 10 + 3 * round)]);
        const result = await memfold.compact(id, { force: true });
        expect(result.status, `round ${round}: ${result.error ?? ''}`).toBe('compacted');

        const context = await memfold.context(id);
        const where = `round ${round}`;
        for (const pinned of pinnedIds)
          expect(
            context.map((m) => m.id),
            where,
          ).toContain(pinned);
        // In their places: the context after the system prompt and the clip-archive is in seq order.
        const body = context.filter((m) => m.kind === 'message' && m.role !== 'system').map((m) => m.seq);
        expect(body, where).toEqual([...body].sort((a, b) => a - b));
        // The pinned call's output is shown whole, past toolOutputMaxLines, and never cleared.
        expect(context.find((m) => m.id === pinnedTurn[2]!.id)?.content, where).toBe(BIG_OUTPUT);
        expect(context.find((m) => m.id === pinnedTurn[1]!.id)?.pinned, where).toBe(true);
        const { transcribed, cleared } = await archivedIds(stack, id);
        for (const pinned of pinnedIds) {
          expect(transcribed.has(pinned), `${where}: ${pinned} archived`).toBe(false);
          expect(cleared.has(pinned), `${where}: ${pinned} cleared`).toBe(false);
        }
        // Counted: the pinned output alone is about 600 tokens of the context.
        expect((await memfold.usage(id)).tokens, where).toBeGreaterThan(BIG_OUTPUT.length / 4);
        await checkInvariants(memfold, id, appended, { toolPairs: true });
      }
      // The rounds did archive around them.
      expect((await archivedIds(stack, id)).transcribed.size).toBeGreaterThan(50);

      expect(await memfold.unpin(id, [fact!.id, pinnedTurn[1]!.id, 'no-such-id'])).toBe(2);
      // Archived as they are stored now: unpinned.
      for (const m of appended) if (m.id === fact!.id || m.id === pinnedTurn[1]!.id) delete m.pinned;
      await append(talk(3, 100));
      expect((await memfold.compact(id, { force: true })).status).toBe('compacted');
      const live = new Set((await memfold.history(id)).map((m) => m.id));
      const after = await archivedIds(stack, id);
      for (const unpinned of pinnedIds) {
        expect(live.has(unpinned), `${unpinned} still live`).toBe(false);
        expect(after.transcribed.has(unpinned), `${unpinned} archived verbatim`).toBe(true);
      }
      // Archived after what came later: its batch spans time the batches before it cover.
      await checkInvariants(memfold, id, appended, { toolPairs: true, unpinned: new Set(pinnedIds) });
    });

    it('tier 2 clears the outputs around a pinned one and never it', async () => {
      stack = await openStack(backend, {
        compaction: { ...settings, contextWindow: 4_000, targetTokens: 1_500, keepFirstTurns: 0, keepToolUses: 1, clearToolOutputMinTokens: 20 },
      });
      const { memfold } = stack;
      const appended = await memfold.append('clear', [
        ...toolTurn(1, { output: BIG_OUTPUT }),
        ...toolTurn(2, { output: BIG_OUTPUT }),
        ...toolTurn(3, { output: BIG_OUTPUT }),
        ...toolTurn(4, { output: BIG_OUTPUT }),
      ]);
      const output = (turn: number) => appended[4 * (turn - 1) + 2]!;
      expect(await memfold.pin('clear', [output(2).id])).toBe(1);
      const result = await memfold.compact('clear', { force: true });
      expect(result).toMatchObject({ status: 'compacted', tier: 2 });
      const live = new Map((await memfold.history('clear')).map((m) => [m.id, m]));
      expect(live.get(output(1).id)!.clearedOutputLabel).toBeDefined();
      expect(live.get(output(3).id)!.clearedOutputLabel).toBeDefined();
      expect(live.get(output(2).id)).toMatchObject({ content: BIG_OUTPUT, pinned: true });
      expect(live.get(output(2).id)).not.toHaveProperty('clearedOutputLabel');
      expect((await archivedIds(stack, 'clear')).cleared.has(output(2).id)).toBe(false);
      const stored = appended.map((m) => (m.id === output(2).id ? { ...m, pinned: true as const } : m));
      await checkInvariants(memfold, 'clear', stored, { toolPairs: true });
    });

    it('a history ending with an assistant question keeps it live, however small the tail', async () => {
      stack = await openStack(backend, { compaction: { ...settings, keepRecentTokens: 0, keepRecentMessages: 0, keepFirstTurns: 0 } });
      const { memfold } = stack;
      const appended = await memfold.append('ask', [
        ...dialogue(12),
        { role: 'user', content: 'Deploy the release.' },
        { role: 'assistant', content: 'Staging or production?' },
      ]);
      const result = await memfold.compact('ask', { force: true });
      expect(result.status).toBe('compacted');
      expect((await memfold.context('ask')).at(-1)).toMatchObject({ id: appended.at(-1)!.id, content: 'Staging or production?' });
      await checkInvariants(memfold, 'ask', appended);
    });
  });
}
