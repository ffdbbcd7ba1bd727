/**
 * The compactor on the in-memory adapters: its core behaviours in milliseconds, no database, no files.
 * The same behaviours on PGlite, PostgreSQL and LanceDB are in compactor.integration.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createCompactor } from '../../src/compaction/compactor.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { MemfoldError } from '../../src/errors.js';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import type { Archive } from '../../src/archive/archive.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import type { Summarizer } from '../../src/summarizer/summarizer.js';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { dialogue } from '../support/messages.js';

const settings = { contextWindow: 2_000, keepRecentTokens: 400, keepRecentMessages: 4, chunkTokens: 300 };

function setup(wrapMemory: (memory: Archive) => Archive = (memory) => memory, summarizer: Summarizer = createExtractiveSummarizer()) {
  const persistence = createInMemoryPersistence();
  const memory = createInMemoryArchive({ embedder: createHashingEmbedder() });
  const compactor = createCompactor({
    summarizer,
    archive: wrapMemory(memory),
    persistence,
    tokens: createTokenCounter(),
    settings,
  });
  return { persistence, memory, compactor };
}

async function seed(persistence: ReturnType<typeof setup>['persistence'], id: string, turns: number): Promise<ConversationMessage[]> {
  return persistence.append(id, [{ role: 'system', content: 'You are terse.' }, ...dialogue(turns)]);
}

describe('compactor on the in-memory adapters', () => {
  it('leaves a history below the trigger alone', async () => {
    const { persistence, memory, compactor } = setup();
    await seed(persistence, 'short', 2);
    const before = await persistence.loadHistory('short');
    const result = await compactor.compactHistory(before, 'short');
    expect(result).toMatchObject({ status: 'skipped', skipReason: 'below_trigger' });
    expect(await persistence.loadHistory('short')).toEqual(before);
    expect(await memory.list({ conversationId: 'short' })).toEqual([]);
  });

  it('archives the middle: every removed message is in a transcript, the clip-archive is stored, the operation committed', async () => {
    const { persistence, memory, compactor } = setup();
    const appended = await seed(persistence, 'long', 30);
    const result = await compactor.compactHistory(await persistence.loadHistory('long'), 'long');
    expect(result.status).toBe('compacted');
    expect(result.tokensAfter).toBeLessThan(compactor.settings.trigger);

    const live = await persistence.loadHistory('long');
    expect(live[0]).toMatchObject({ seq: 0, kind: 'clip_archive' });
    expect(live[0]!.content.startsWith('[Context Summary')).toBe(true);
    const liveIds = new Set(live.map((m) => m.id));
    const removed = appended.filter((m) => !liveIds.has(m.id)).map((m) => m.id);
    expect(removed).toHaveLength(result.archivedMessages);
    const transcripts = await memory.list({ conversationId: 'long', kind: 'transcript' });
    expect(transcripts.flatMap((t) => t.sourceIds).sort()).toEqual([...removed].sort());
    expect(await memory.list({ conversationId: 'long', kind: 'summary' })).not.toEqual([]);
    expect(await persistence.listOperations('long')).toMatchObject([{ status: 'committed', messageIds: expect.arrayContaining(removed) }]);
    expect(await persistence.listPendingOperations()).toEqual([]);
  });

  it('counts tokensAfter as tokensBefore and the trigger are: a long tool output in the kept tail whole, not as the context cuts it', async () => {
    const { persistence, compactor } = setup();
    await seed(persistence, 'tools', 30);
    const longOutput = Array.from({ length: 400 }, (_, i) => `row ${i}: status shipped`).join('\n');
    await persistence.append('tools', [
      { role: 'user', content: 'list the rows' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call-1', type: 'function', function: { name: 'rows', arguments: '{}' } }] },
      { role: 'tool', toolCallId: 'call-1', content: longOutput },
      { role: 'assistant', content: 'done' },
    ]);
    const result = await compactor.compactStored('tools', { force: true });
    expect(result.status).toBe('compacted');
    const tokens = createTokenCounter();
    const live = await persistence.loadHistory('tools');
    expect(live.some((m) => m.content === longOutput)).toBe(true);
    expect(result.tokensAfter).toBe(live.reduce((sum, m) => sum + tokens.countMessage(m), 0));
    // The history handed back is the context: the output cut to toolOutputMaxLines.
    expect(result.history.some((m) => m.content === longOutput)).toBe(false);
  });

  it('re-summarizes batches that fit one batch together by joining them, without a model call; longer ones through the model', async () => {
    /** A model whose summaries have `words` words, recording what each request was for. */
    const model = (words: number) => {
      const purposes: string[] = [];
      const extractive = createExtractiveSummarizer();
      const summarizer: Summarizer = {
        ...extractive,
        async summarize(request) {
          purposes.push(request.purpose);
          const text = `Summary: ${Array.from({ length: words }, (_, i) => `fact${purposes.length}-${i}`).join(' ')}`;
          return { text, model: 'fake', usage: { inputTokens: 0, outputTokens: 0 } };
        },
      };
      return { summarizer, purposes };
    };
    /** The parents whose text holds each of their children's whole: joined, not summarized. */
    const joinedParents = async (memory: Archive, id: string, parents: readonly { label: string; content: string }[]) => {
      const batches = await memory.list({ conversationId: id, kind: 'summary' });
      return parents.filter((parent) => {
        const children = batches.filter((b) => b.parentLabel === parent.label);
        return children.length >= 2 && children.every((child) => parent.content.includes(child.content));
      });
    };
    const short = model(3);
    const joined = setup(undefined, short.summarizer);
    await seed(joined.persistence, 'short', 60);
    const first = await joined.compactor.compactStored('short');
    expect(first.status, first.error).toBe('compacted');
    expect(first.resummarized.length, 'the frontier overflowed').toBeGreaterThan(0);
    expect(first.modelCalls).toBe(short.purposes.length);
    // Short depth-0 summaries are joined; a run of joined batches may outgrow the budget and go to the model.
    const firstJoined = await joinedParents(joined.memory, 'short', first.resummarized);
    expect(firstJoined.length).toBeGreaterThan(0);
    expect(firstJoined.length + short.purposes.filter((p) => p === 'resummarize').length).toBe(first.resummarized.length);

    // Summaries near the batch budget (160 tokens at this window) cannot be joined: the model re-summarizes them.
    const long = model(60);
    const summarized = setup(undefined, long.summarizer);
    await seed(summarized.persistence, 'long', 60);
    const second = await summarized.compactor.compactStored('long');
    expect(second.status, second.error).toBe('compacted');
    expect(second.resummarized.length).toBeGreaterThan(0);
    expect(await joinedParents(summarized.memory, 'long', second.resummarized)).toEqual([]);
    expect(long.purposes.filter((p) => p === 'resummarize')).toHaveLength(second.resummarized.length);
  });

  it('fails without losing a message when the archive refuses a write, and undoes what it archived', async () => {
    let writes = 0;
    const { persistence, memory, compactor } = setup((inner) => ({
      ...inner,
      // The second write fails: the first one's rows must be undone.
      write: async (entries) => {
        if (++writes === 2) throw new MemfoldError('archive_error', 'injected archive failure');
        return inner.write(entries);
      },
    }));
    await seed(persistence, 'fails', 30);
    const before = await persistence.loadHistory('fails');
    const result = await compactor.compactHistory(before, 'fails');
    expect(result).toMatchObject({ status: 'failed', failureCode: 'archive_failed' });
    expect(await persistence.loadHistory('fails')).toEqual(before);
    expect(await memory.list({ conversationId: 'fails' })).toEqual([]);
    expect(await persistence.listPendingOperations()).toEqual([]);
  });

  it('skips as busy while another holder has the conversation lock', async () => {
    const { persistence, compactor } = setup();
    await seed(persistence, 'held', 30);
    const history = await persistence.loadHistory('held');
    const held = await persistence.withConversationLock('held', () => compactor.compactHistory(history, 'held'));
    expect(held.acquired && held.value).toMatchObject({ status: 'skipped', skipReason: 'busy' });
    expect(await persistence.loadHistory('held')).toEqual(history);
  });
  it('compactStored compacts the stored conversation: the live history comes back, and a history below the trigger is reported with its size', async () => {
    const { persistence, compactor } = setup();
    await seed(persistence, 'stored', 30);
    const result = await compactor.compactStored('stored');
    expect(result.status).toBe('compacted');
    expect(result.history.map((m) => m.id).sort()).toEqual((await persistence.loadHistory('stored')).map((m) => m.id).sort());

    await seed(persistence, 'small', 2);
    const small = await compactor.compactStored('small');
    expect(small).toMatchObject({ status: 'skipped', skipReason: 'below_trigger', messagesBefore: 5 });
    expect(small.tokensBefore).toBeGreaterThan(0);
  });

  it('compactStored finishes or undoes an interrupted operation before it plans', async () => {
    const { persistence, memory, compactor } = setup();
    const appended = await seed(persistence, 'crashed', 30);
    await persistence.recordOperation({ id: 'op-left', conversationId: 'crashed', status: 'planned', messageIds: [appended[3]!.id], labels: [] });
    const result = await compactor.compactStored('crashed');
    expect(result.status).toBe('compacted');
    expect(await persistence.listOperations('crashed')).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 'op-left', status: 'rolled_back' }), expect.objectContaining({ status: 'committed' })]),
    );
    expect(await persistence.listPendingOperations()).toEqual([]);
    expect(await memory.list({ conversationId: 'crashed', kind: 'transcript' })).not.toEqual([]);
  });

  it('compactStored skips as busy while the lock is held, reporting the live rows, and refuses an empty conversation id as invalid_input', async () => {
    const { persistence, compactor } = setup();
    await seed(persistence, 'locked', 30);
    const live = await persistence.loadHistory('locked');
    const held = await persistence.withConversationLock('locked', () => compactor.compactStored('locked'));
    expect(held.acquired && held.value).toMatchObject({ status: 'skipped', skipReason: 'busy', messagesBefore: live.length });
    expect(await persistence.loadHistory('locked')).toEqual(live);
    expect(await compactor.compactStored('')).toMatchObject({ status: 'failed', failureCode: 'invalid_input', history: [] });
  });
});
