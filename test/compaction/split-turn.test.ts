/**
 * Split turns: a turn larger than the verbatim tail may keep is cut at a unit boundary; its compacted opening
 * is summarized on its own, concurrently with the history before it, and no tool call is parted from its result.
 */
import { describe, expect, it } from 'vitest';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import { createCompactor } from '../../src/compaction/compactor.js';
import { splitTurnPrefix } from '../../src/compaction/plan/split-turn.js';
import type { ConversationMessage, NewMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { MemfoldError } from '../../src/errors.js';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import { createExtractiveSummarizer } from '../../src/summarizer/extractive/extractive-summarizer.js';
import type { FoldRequest, Summarizer, SummarizeRequest } from '../../src/summarizer/summarizer.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { dialogue, msg, toolCall } from '../support/messages.js';

describe('splitTurnPrefix', () => {
  const user = msg('user', 'q');
  const call = msg('assistant', '', { toolCalls: [toolCall('c1')] });
  const result = msg('tool', 'r', { toolCallId: 'c1' });
  const answer = msg('assistant', 'a');

  const ten = () => 10;

  it('leaves the compactable messages whole when the tail starts a turn', () => {
    expect(splitTurnPrefix([user, answer], [msg('user', 'next')], ten, 0)).toEqual({ history: [user, answer], turnPrefix: [] });
    expect(splitTurnPrefix([user, answer], [], ten, 0)).toEqual({ history: [user, answer], turnPrefix: [] });
  });

  it('takes the opening of a long turn the tail continues, from its user message on', () => {
    const earlier = [msg('user', 'old'), msg('assistant', 'old answer')];
    const next = msg('user', 'next');
    // The turn: user, call, result, answer = 40 tokens, over the 30 the tail keeps (the next turn is not counted).
    expect(splitTurnPrefix([...earlier, user, call, result], [answer, next], ten, 30)).toEqual({ history: earlier, turnPrefix: [user, call, result] });
  });

  it('folds a short turn’s opening with the history, although the tail starts inside it', () => {
    const earlier = [msg('user', 'old'), msg('assistant', 'old answer')];
    expect(splitTurnPrefix([...earlier, user], [answer], ten, 30)).toEqual({ history: [...earlier, user], turnPrefix: [] });
  });

  it('takes every compactable message when the turn began before them', () => {
    expect(splitTurnPrefix([call, result], [answer], ten, 0)).toEqual({ history: [], turnPrefix: [call, result] });
  });
});

/** A day of small talk, then one agent turn of `steps` tool calls whose results are long: far larger than the tail's budget. */
function longAgentTurn(steps: number): NewMessage[] {
  const at = (minute: number) => new Date(Date.UTC(2024, 3, 2, 9, minute)).toISOString();
  const turn: NewMessage[] = [{ role: 'user', content: 'Fix the failing parser test in src/parser.ts and report what you changed.', createdAt: at(0) }];
  for (let k = 1; k <= steps; k++) {
    turn.push({ role: 'assistant', content: '', toolCalls: [toolCall(`step_${k}`, 'read_file', `{"path":"src/part-${k}.ts"}`)], createdAt: at(k) });
    turn.push({ role: 'tool', toolCallId: `step_${k}`, content: `// part ${k}\n${'const value = compute(input);\n'.repeat(16)}`, createdAt: at(k) });
  }
  return [{ role: 'system', content: 'You are a coding agent.' }, ...dialogue(8), ...turn];
}

/** The extractive summarizer, recording each request and how many were in flight at once (each takes a few ms). */
function recordingSummarizer(fail?: (request: FoldRequest) => boolean) {
  const inner = createExtractiveSummarizer();
  const requests: FoldRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  // The first request answers only once a second is made: concurrent chains meet whatever the machine's speed (a
  // compaction that sent them one after another would wait here for good, and the test would time out).
  let releaseFirst: (() => void) | undefined;
  let made = 0;
  const summarizer: Summarizer = {
    ...inner,
    id: 'recording',
    async summarize(request: SummarizeRequest) {
      if (request.purpose === 'fold') requests.push(request);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        made++;
        releaseFirst?.();
        if (made === 1) await new Promise<void>((resolve) => (releaseFirst = resolve));
        else await new Promise((resolve) => setTimeout(resolve, 15));
        if (request.purpose === 'fold' && fail?.(request)) throw new MemfoldError('model_error', 'the turn prefix failed');
        return await inner.summarize(request);
      } finally {
        inFlight--;
      }
    },
  };
  return { summarizer, requests, maxInFlight: () => maxInFlight };
}

async function setup(fail?: (request: FoldRequest) => boolean) {
  const persistence = createInMemoryPersistence();
  const archive = createInMemoryArchive({ embedder: createHashingEmbedder() });
  const recording = recordingSummarizer(fail);
  const compactor = createCompactor({
    summarizer: recording.summarizer,
    archive,
    persistence,
    tokens: createTokenCounter({ mode: 'chars4' }),
    // Tier 3 alone: with old tool outputs cleared first (tier 2), the turn would no longer be larger than the tail.
    settings: { contextWindow: 4_000, keepRecentMessages: 4, clearToolOutputs: false },
  });
  const appended = await persistence.append('agent', longAgentTurn(24));
  return { persistence, archive, compactor, appended, ...recording };
}

/** For every tool result, whether its call is on the same side (both live or both archived). */
function toolPairsTogether(appended: readonly ConversationMessage[], liveIds: ReadonlySet<string>): boolean {
  const callOwner = new Map<string, string>();
  for (const m of appended) for (const call of m.toolCalls ?? []) callOwner.set(call.id, m.id);
  return appended.filter((m) => m.role === 'tool').every((m) => liveIds.has(m.id) === liveIds.has(callOwner.get(m.toolCallId!)!));
}

describe('a turn larger than the tail keeps', () => {
  it('is cut at a unit boundary, its opening summarized on its own, concurrently with the history before it', async () => {
    const { persistence, archive, compactor, appended, requests, maxInFlight } = await setup();
    const result = await compactor.compactStored('agent');
    expect(result.status, result.error).toBe('compacted');

    const live = await persistence.loadHistory('agent');
    const liveIds = new Set(live.map((m) => m.id));
    const turnStart = appended.findIndex((m) => m.content.startsWith('Fix the failing parser test'));
    // Before the turn only the system prompt and the first turn stay; the tail continues the turn from a tool
    // call on, and the turn's user message was compacted.
    const turnSeq = appended[turnStart]!.seq;
    expect(live.filter((m) => m.kind !== 'clip_archive' && m.seq < turnSeq).map((m) => m.role)).toEqual(['system', 'user', 'assistant']);
    expect(live.find((m) => m.seq > turnSeq)).toMatchObject({ role: 'assistant', toolCalls: [expect.objectContaining({ type: 'function' })] });
    expect(liveIds.has(appended[turnStart]!.id)).toBe(false);
    expect(toolPairsTogether(appended, liveIds)).toBe(true);

    const prefix = appended.slice(turnStart).filter((m) => !liveIds.has(m.id));
    expect(result.turnPrefixMessages).toBe(prefix.length);
    const prefixRequests = requests.filter((r) => r.turnPrefix);
    const historyRequests = requests.filter((r) => !r.turnPrefix);
    expect(prefixRequests.flatMap((r) => r.lines.map((l) => l.text))).toEqual(prefix.map((m) => m.content));
    expect(historyRequests.length).toBeGreaterThan(0);
    expect(historyRequests.flatMap((r) => r.lines).some((l) => l.text.startsWith('Fix the failing'))).toBe(false);
    // The opening starts its own summary: it does not wait for the history's.
    expect(prefixRequests[0]!.previousSummary).toBeUndefined();
    expect(maxInFlight()).toBe(2);

    // Its batch is the newest, covering exactly the opening; every compacted message is archived verbatim.
    const batches = await archive.list({ conversationId: 'agent', kind: 'summary', depth: 0 });
    expect(batches.at(-1)!.sourceIds).toEqual(prefix.slice(-batches.at(-1)!.sourceIds.length).map((m) => m.id));
    const transcripts = await archive.list({ conversationId: 'agent', kind: 'transcript' });
    const archivedIds = transcripts.flatMap((t) => t.messages!.map((m) => m.id));
    expect(new Set([...archivedIds, ...liveIds]).size).toBe(archivedIds.length + liveIds.size);
    expect(appended.every((m) => liveIds.has(m.id) || archivedIds.includes(m.id))).toBe(true);
  });

  it('a failed opening stops the whole compaction and loses nothing', async () => {
    const { persistence, archive, compactor, appended } = await setup((request) => request.turnPrefix === true);
    const result = await compactor.compactStored('agent');
    expect(result).toMatchObject({ status: 'failed', failureCode: 'model_failed' });
    expect((await persistence.loadHistory('agent')).map((m) => m.id)).toEqual(appended.map((m) => m.id));
    expect(await archive.list({ conversationId: 'agent' })).toEqual([]);
  });
});
