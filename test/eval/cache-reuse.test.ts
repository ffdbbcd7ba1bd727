/**
 * Prompt-cache reuse on hand-built prompt sequences (a message's tokens are its content's length, so every
 * expected sum is worked out by hand), and the baselines' per-request prompts against the baselines themselves.
 */
import { describe, expect, it } from 'vitest';
import { baselinePrompt, baselineRequests, baselineReuse, BASELINES } from '../../src/eval/baselines.js';
import {
  assistantTurns,
  commonTextPrefix,
  prefixReuse,
  prefixSums,
  reuseShare,
  reuseTracker,
  runsReuse,
  sameMessage,
  sharedPrefix,
  sharedRuns,
  type PromptMessage,
} from '../../src/eval/cache-reuse.js';

const length = (m: PromptMessage) => m.content.length;
/** A message of `tokens` tokens (content length), told apart by its letter. */
const msg = (role: PromptMessage['role'], letter: string, tokens: number, extra: Partial<PromptMessage> = {}): PromptMessage => ({
  role,
  content: letter.repeat(tokens),
  ...extra,
});

const system = msg('system', 's', 10);
const u1 = msg('user', 'a', 5);
const a1 = msg('assistant', 'b', 5);
const u2 = msg('user', 'c', 5);
const a2 = msg('assistant', 'd', 5);
const u3 = msg('user', 'e', 5);
const a3 = msg('assistant', 'f', 5);
const u4 = msg('user', 'g', 5);

describe('prompt-cache reuse', () => {
  it('identical prompts reuse everything; a single prompt has nothing to compare', () => {
    const prompt = [system, u1, a1, u2];
    expect(reuseShare(prefixReuse([prompt, prompt, [...prompt]], length))).toBe(1);
    expect(prefixReuse([prompt], length)).toEqual({ reusedTokens: 0, promptTokens: 0 });
    expect(reuseShare(prefixReuse([prompt], length))).toBeNull();
  });

  it('with a text counter, the first changed message adds the opening it shares, when only its text changed', () => {
    const chars = (text: string) => text.length;
    const clip = msg('system', '', 0, { content: 'HEAD:oldtail' });
    const newClip = msg('system', '', 0, { content: 'HEAD:newer tail' });
    // System prompt (10) whole, then "HEAD:" (5) of the changed clip-archive; nothing after it.
    expect(
      prefixReuse(
        [
          [system, clip, u2],
          [system, newClip, u2],
        ],
        length,
        chars,
      ),
    ).toEqual({ reusedTokens: 15, promptTokens: 30 });
    // Another role (or name, tool call id, tool calls) at that place is another message: no opening is shared.
    const asUser = { ...newClip, role: 'user' as const };
    expect(
      prefixReuse(
        [
          [system, clip, u2],
          [system, asUser, u2],
        ],
        length,
        chars,
      ).reusedTokens,
    ).toBe(10);
    const named = { ...newClip, name: 'other' };
    expect(
      prefixReuse(
        [
          [system, clip, u2],
          [system, named, u2],
        ],
        length,
        chars,
      ).reusedTokens,
    ).toBe(10);
    // Never more than the message itself, and without a counter whole messages only.
    expect(
      prefixReuse(
        [
          [system, clip, u2],
          [system, newClip, u2],
        ],
        length,
      ).reusedTokens,
    ).toBe(10);
    expect(commonTextPrefix('😀a', '😀b')).toBe('😀');
    expect(commonTextPrefix('\ud83d\ude00', '\ud83d\ude01')).toBe('');
  });

  it('a prompt whose first message changed reuses nothing; one whose second changed reuses the first alone', () => {
    const changedFirst = [msg('system', 't', 10), u1, a1, u2];
    expect(prefixReuse([[system, u1, a1, u2], changedFirst], length)).toEqual({ reusedTokens: 0, promptTokens: 25 });
    const clip = msg('system', 'c', 8);
    const newClip = msg('system', 'C', 8);
    // System prompt (10) reused; the clip-archive changed, so nothing after it counts, though u2 is the same.
    expect(
      prefixReuse(
        [
          [system, clip, u2],
          [system, newClip, u2],
        ],
        length,
      ),
    ).toEqual({ reusedTokens: 10, promptTokens: 23 });
  });

  it('a growing prompt reuses the whole previous one; a compaction in the middle resets it to the system prompt', () => {
    const clip = msg('system', 'x', 8);
    const prompts = [
      [system, u1], // first request: not compared
      [system, u1, a1, u2], // reuses system + u1 = 15 of 25
      [system, clip, u2, a2, u3], // compacted: the clip-archive replaces u1, a1; reuses system = 10 of 33
      [system, clip, u2, a2, u3, a3, u4], // reuses all 33 of 43
    ];
    const reuse = prefixReuse(prompts, length);
    expect(reuse).toEqual({ reusedTokens: 15 + 10 + 33, promptTokens: 25 + 33 + 43 });
    expect(reuseShare(reuse)).toBeCloseTo(58 / 101, 12);
  });

  it('compares role, name, content, tool calls and tool call id', () => {
    const call = { id: 'c1', type: 'function' as const, function: { name: 'lookup', arguments: '{"id":1}' } };
    const withCall = msg('assistant', 'q', 3, { toolCalls: [call] });
    expect(sameMessage(withCall, { ...withCall, toolCalls: [{ ...call }] })).toBe(true);
    expect(sameMessage(withCall, { ...withCall, toolCalls: [{ ...call, function: { ...call.function, arguments: '{"id":2}' } }] })).toBe(false);
    expect(sameMessage(withCall, { ...withCall, toolCalls: [] })).toBe(false);
    expect(sameMessage(u1, { ...u1, role: 'assistant' })).toBe(false);
    expect(sameMessage(u1, { ...u1, name: 'Ana' })).toBe(false);
    expect(sameMessage(msg('tool', 'r', 2, { toolCallId: 'c1' }), msg('tool', 'r', 2, { toolCallId: 'c2' }))).toBe(false);
    expect(sharedPrefix([system, u1, a1], [system, u1, { ...a1, content: 'changed' }])).toBe(2);
  });

  it('the tracker keeps its own copy of the previous prompt', () => {
    const tracker = reuseTracker(length);
    const context = [system, u1];
    tracker.add(context);
    context.push(a1, u2); // the replay grows its array in place
    tracker.add(context);
    expect(tracker.total()).toEqual({ reusedTokens: 15, promptTokens: 25 });
  });

  it('runs of positions: adjacent runs are one prefix, a moved start shares nothing', () => {
    expect(
      sharedRuns(
        [
          [0, 3],
          [3, 5],
        ],
        [[0, 7]],
      ),
    ).toEqual([[0, 5]]);
    expect(
      sharedRuns(
        [
          [0, 2],
          [5, 8],
        ],
        [
          [0, 2],
          [6, 9],
        ],
      ),
    ).toEqual([[0, 2]]);
    expect(sharedRuns([[2, 6]], [[3, 7]])).toEqual([]);
    expect(
      sharedRuns(
        [
          [0, 2],
          [5, 8],
        ],
        [
          [0, 2],
          [5, 9],
        ],
      ),
    ).toEqual([
      [0, 2],
      [5, 8],
    ]);
  });

  it('a request that cannot be made is not counted and leaves the previous prompt in place', () => {
    const prefix = prefixSums([4, 4, 4, 4]);
    expect(runsReuse([[[0, 1]], null, [[0, 3]]], prefix)).toEqual({ reusedTokens: 4, promptTokens: 12 });
  });
});

describe("the baselines' prompt before each request", () => {
  // A deterministic spread of message sizes, some larger than the head's share of the window.
  const tokens = Array.from({ length: 120 }, (_, i) => 1 + ((i * 37) % 23) + (i % 17 === 5 ? 40 : 0));
  const every = tokens.map((_, i) => i).concat(tokens.length);

  it.each(BASELINES)('%s keeps, before every message, what it keeps of the conversation cut there', (name) => {
    for (const window of [30, 100, 256, 10_000]) {
      for (const request of baselineRequests(name, tokens, window, every)) {
        const expected = baselinePrompt(name, tokens.slice(0, request.at), window);
        const kept = request.runs?.flatMap(([start, end]) => Array.from({ length: end - start }, (_, k) => start + k)) ?? [];
        expect(kept, `${name} at ${request.at}, window ${window}`).toEqual(expected.fits ? expected.kept : []);
        expect(request.runs === null).toBe(!expected.fits);
        expect(request.promptTokens).toBe(expected.promptTokens);
      }
    }
  });

  it.each(BASELINES)('%s: reuse over runs is reuse over the messages themselves', (name) => {
    const messages: PromptMessage[] = tokens.map((_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: String(i) }));
    const count = (m: PromptMessage) => tokens[Number(m.content)]!;
    const asked = assistantTurns(messages);
    for (const window of [100, 256]) {
      const prompts = baselineRequests(name, tokens, window, asked).flatMap((r) =>
        r.runs ? [r.runs.flatMap(([start, end]) => messages.slice(start, end))] : [],
      );
      expect(baselineReuse(name, tokens, window, asked)).toEqual(prefixReuse(prompts, count));
    }
  });

  it('no-compaction reuses all of the previous prompt while it fits; truncate-oldest, once full, nothing', () => {
    const even = Array.from({ length: 40 }, () => 5);
    const asked = even.map((_, i) => i).filter((i) => i % 2 === 1);
    // Fits up to 100 tokens (20 messages): requests at 1, 3, ..., 19 are made, the rest cannot be.
    const none = baselineReuse('no-compaction', even, 100, asked);
    expect(none).toEqual({ reusedTokens: 5 * (1 + 3 + 5 + 7 + 9 + 11 + 13 + 15 + 17), promptTokens: 5 * (3 + 5 + 7 + 9 + 11 + 13 + 15 + 17 + 19) });
    // Once the window is full every request drops the oldest message: the prompt's first message changes.
    const truncate = baselineReuse('truncate-oldest', even, 50, asked);
    expect(truncate.reusedTokens).toBe(5 * (1 + 3 + 5 + 7)); // requests at 3, 5, 7, 9 extend the previous prompt
  });
});
