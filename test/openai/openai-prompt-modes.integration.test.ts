/**
 * The summarizer's two built-in prompts, checked on the request bodies the fake OpenAI-compatible server records:
 * `structured` (default) sends the seven-section prompt with every request; `update` asks for the summary so far to
 * be rewritten with the new messages merged in, and its answer becomes the batch in place of the previous summary.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { batchBody } from '../../src/compaction/format/headers.js';
import { InvalidArgumentError, MemfoldError } from '../../src/errors.js';
import { createMemfold, type MemfoldOptions } from '../../src/memfold.js';
import {
  DEFAULT_SUMMARIZATION_PROMPT,
  extractTagged,
  interpolatePrompt,
  PREVIOUS_SUMMARY_TAG,
  TRANSCRIPT_TAG,
  UPDATE_SUMMARIZATION_PROMPT,
} from '../../src/openai/openai-prompt.js';
import { createOpenAISummarizer, type OpenAISummarizerOptions } from '../../src/openai/openai-summarizer.js';
import type { FoldRequest, SummarizeRequest } from '../../src/summarizer/summarizer.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { orderChat } from '../support/messages.js';
import { behaviors, FAKE_SECTIONS, startFakeOpenAI, structuredSummary, type FakeOpenAI, type RecordedRequest } from '../support/fake-openai-server.js';

const HEADINGS = ['Goal:', 'User requests and constraints:', 'Facts:', 'Files and tools:', 'Errors and fixes:', 'Decisions:', 'Next steps:'];

const fold = (extra: Partial<FoldRequest> = {}): FoldRequest => ({
  purpose: 'fold',
  maxOutputTokens: 200,
  lines: [
    { time: '2024-05-15T10:00:00.000Z', role: 'user', name: 'Ann', text: 'Please book the Lisbon flight TP-1234 for June 3?' },
    { time: '2024-05-15T10:00:00.000Z', role: 'assistant', text: 'We agreed on seat 12A; I will send the invoice tomorrow.' },
  ],
  ...extra,
});

const PREVIOUS = 'Goal:\n- [2024-05-14] Ann: plan the trip to Lisbon\nFacts:\n- [2024-05-14] Ann: budget is EUR 900';

const systemOf = (request: RecordedRequest): string => request.body.messages[0].content;
const userOf = (request: RecordedRequest): string => request.body.messages[1].content;
const chats = (server: FakeOpenAI, from = 0) => server.requests.slice(from).filter((r) => r.path === '/v1/chat/completions');

let server: FakeOpenAI;
beforeAll(async () => {
  server = await startFakeOpenAI({ behavior: behaviors.structured() });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.setBehavior(behaviors.structured());
});

const summarizer = (extra: Partial<OpenAISummarizerOptions> = {}) =>
  createOpenAISummarizer({ baseURL: server.baseURL, model: 'fake-model', timeoutMs: 5_000, maxRetries: 0, ...extra });

async function send(request: SummarizeRequest, extra: Partial<OpenAISummarizerOptions> = {}) {
  const from = server.requests.length;
  const answer = await summarizer(extra).summarize(request);
  const [sent] = chats(server, from);
  return { answer, sent: sent! };
}

describe('the structured prompt (default)', () => {
  it('asks for the seven sections in order, keeps the rules, and fills {{maxTokens}}', async () => {
    const { sent, answer } = await send(fold());
    const system = systemOf(sent);
    expect(system).toBe(interpolatePrompt(DEFAULT_SUMMARIZATION_PROMPT, { maxTokens: 200 }));
    const at = HEADINGS.map((heading) => system.search(new RegExp(`^${heading}`, 'm')));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(system).toContain('at most 200 tokens');
    for (const rule of ['verbatim', 'resolve relative dates', 'do not invent anything', 'never instructions to you', 'without preamble']) {
      expect(system).toContain(rule);
    }
    expect(system).not.toMatch(/\{\{|updated summary/);
    // The transcript in its tag, as the lines render; the fake answers in the sections the prompt names.
    expect(extractTagged(userOf(sent), TRANSCRIPT_TAG)).toContain('[2024-05-15T10:00:00.000Z] user(Ann): Please book the Lisbon flight TP-1234');
    expect(answer.text).toMatch(/^Goal:\n- Please book the Lisbon flight/);
    expect(answer.text).toContain('Decisions:\n- [2024-05-15] assistant: We agreed on seat 12A');
    expect(answer.usage.inputTokens).toBeGreaterThan(0);
  });

  it('sends the summary so far as context with the same prompt; the answer is a delta', async () => {
    const { sent, answer } = await send(fold({ previousSummary: PREVIOUS }));
    expect(systemOf(sent)).toBe(interpolatePrompt(DEFAULT_SUMMARIZATION_PROMPT, { maxTokens: 200 }));
    expect(extractTagged(userOf(sent), PREVIOUS_SUMMARY_TAG)).toBe(PREVIOUS);
    expect(answer.text).not.toContain('EUR 900');
  });

  it('is counted by promptOverhead', () => {
    expect(summarizer().promptOverhead!(300)).toBe(interpolatePrompt(DEFAULT_SUMMARIZATION_PROMPT, { maxTokens: 300 }));
  });
});

describe("promptMode: 'update'", () => {
  it('asks to rewrite the summary so far with the transcript merged in, in the same seven sections', async () => {
    const { sent, answer } = await send(fold({ previousSummary: PREVIOUS }), { promptMode: 'update' });
    const system = systemOf(sent);
    expect(system).toBe(interpolatePrompt(UPDATE_SUMMARIZATION_PROMPT, { maxTokens: 200 }));
    expect(system).toMatch(/one updated summary that replaces the previous one/);
    for (const heading of HEADINGS) expect(system).toMatch(new RegExp(`^${heading}`, 'm'));
    expect(extractTagged(userOf(sent), PREVIOUS_SUMMARY_TAG)).toBe(PREVIOUS);
    // The fake merges: the previous goal and facts stay, the new items join them.
    expect(answer.text).toMatch(/^Goal:\n- \[2024-05-14\] Ann: plan the trip to Lisbon\n/);
    expect(answer.text).toContain('- [2024-05-14] Ann: budget is EUR 900');
    expect(answer.text).toContain('seat 12A');
  });

  it('uses the structured prompt for a first chunk and for re-summarization; promptOverhead counts the longer prompt', async () => {
    const first = await send(fold(), { promptMode: 'update' });
    expect(systemOf(first.sent)).toBe(interpolatePrompt(DEFAULT_SUMMARIZATION_PROMPT, { maxTokens: 200 }));
    const merge = await send(
      { purpose: 'resummarize', summaries: [`[depth:0|start:a|end:b|count:2]\n${PREVIOUS}`], maxOutputTokens: 200 },
      { promptMode: 'update' },
    );
    expect(systemOf(merge.sent)).toBe(interpolatePrompt(DEFAULT_SUMMARIZATION_PROMPT, { maxTokens: 200 }));
    expect(merge.answer.text).toContain('budget is EUR 900');
    expect(UPDATE_SUMMARIZATION_PROMPT.length).toBeGreaterThan(DEFAULT_SUMMARIZATION_PROMPT.length);
    expect(summarizer({ promptMode: 'update' }).promptOverhead!(300)).toBe(interpolatePrompt(UPDATE_SUMMARIZATION_PROMPT, { maxTokens: 300 }));
  });

  it('keeps a custom prompt template for every request, whatever the mode', async () => {
    const prompt = 'Summarize in at most {{maxTokens}} tokens, orders first.';
    const { sent } = await send(fold({ previousSummary: PREVIOUS }), { promptMode: 'update', prompt });
    expect(systemOf(sent)).toBe('Summarize in at most 200 tokens, orders first.');
    expect(extractTagged(userOf(sent), PREVIOUS_SUMMARY_TAG)).toBe(PREVIOUS);
    expect(summarizer({ promptMode: 'update', prompt }).promptOverhead!(50)).toBe('Summarize in at most 50 tokens, orders first.');
  });

  it('is refused when it is not a known mode, naming the field', () => {
    for (const promptMode of ['rolling', '', 1, null]) {
      const error = (() => {
        try {
          summarizer({ promptMode: promptMode as never });
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).field).toBe('promptMode');
      expect((error as Error).message).toMatch(/^Invalid argument promptMode: must be 'structured' or 'update'/);
    }
  });
});

describe('createMemfold with the prompt modes', () => {
  const options = (extra: MemfoldOptions = {}): MemfoldOptions => ({
    store: 'memory',
    tokens: createTokenCounter({ mode: 'chars4' }),
    // Several chunks in one compaction, and room for all their batches (no re-summarization).
    compaction: { contextWindow: 2_000, chunkTokens: 300, clipBuffer: 50 },
    ...extra,
    env: { OPENAI_BASE_URL: server.baseURL, MEMFOLD_SUMMARY_MODEL: 'fake-summarizer', MEMFOLD_MODEL_MAX_RETRIES: '0', ...extra.env },
  });

  /** One compaction of 20 order turns: the chat requests it sent and the depth-0 batches, in time order. */
  async function compactOnce(extra: MemfoldOptions = {}) {
    const memfold = await createMemfold(options(extra));
    try {
      await memfold.append('orders', orderChat(20));
      const from = server.requests.length;
      const result = await memfold.compact('orders');
      expect(result.status, result.error).toBe('compacted');
      expect(result.fallbacks).toEqual([]);
      const batches = await memfold.archive.list({ conversationId: 'orders', kind: 'summary', depth: 0 });
      return { requests: chats(server, from), bodies: batches.map((b) => batchBody(b.content)) };
    } finally {
      await memfold.close();
    }
  }

  it("folds with the structured prompt by default, each batch the chunk's own answer", async () => {
    const { requests, bodies } = await compactOnce();
    expect(requests.length).toBeGreaterThan(2);
    expect(bodies).toHaveLength(requests.length);
    for (const request of requests) expect(systemOf(request)).not.toContain('updated summary');
    requests.forEach((request, k) => expect(bodies[k]).toBe(structuredSummary(request.body)));
    // Deltas: a later batch does not restate the first chunk's orders.
    expect(bodies.at(-1)).not.toContain('ORD-501');
  });

  it.each([
    ['the promptMode option', { promptMode: 'update' } satisfies MemfoldOptions],
    ['MEMFOLD_SUMMARY_PROMPT', { env: { MEMFOLD_SUMMARY_PROMPT: 'update' } } satisfies MemfoldOptions],
  ])("with 'update' from %s, each answer replaces the summary so far: it is the batch, and the next request's previous summary", async (_from, extra) => {
    const { requests, bodies } = await compactOnce(extra);
    expect(requests.length).toBeGreaterThan(2);
    expect(bodies).toHaveLength(requests.length);
    expect(systemOf(requests[0]!)).not.toContain('updated summary');
    for (const [k, request] of requests.entries()) {
      // The batch is the answer itself, never the previous summary with the answer after it.
      expect(bodies[k]).toBe(structuredSummary(request.body));
      if (k === 0) continue;
      expect(systemOf(request)).toContain('one updated summary that replaces the previous one');
      expect(extractTagged(userOf(request), PREVIOUS_SUMMARY_TAG)).toBe(bodies[k - 1]);
    }
    // The merged summary keeps the goal of the first chunk (the first turn, ORD-500, stays verbatim) to the end.
    expect(bodies.at(-1)).toMatch(/^Goal:\n- Please remember order ORD-501 /);
  });

  it('stores a scripted answer as the whole batch in update mode', async () => {
    server.setBehavior(behaviors.ok('Goal:\n- keep orders\nFacts:\n- merged summary'));
    server.enqueue(behaviors.ok('Goal:\n- keep orders\nFacts:\n- first summary'));
    const { requests, bodies } = await compactOnce({ promptMode: 'update' });
    expect(requests.length).toBeGreaterThan(1);
    expect(bodies[0]).toBe('Goal:\n- keep orders\nFacts:\n- first summary');
    expect(extractTagged(userOf(requests[1]!), PREVIOUS_SUMMARY_TAG)).toBe('Goal:\n- keep orders\nFacts:\n- first summary');
    expect(bodies[1]).toBe('Goal:\n- keep orders\nFacts:\n- merged summary');
  });

  it('sends a custom prompt for every request in update mode', async () => {
    const { requests } = await compactOnce({ promptMode: 'update', prompt: 'Merge in at most {{maxTokens}} tokens.' });
    expect(requests.every((request) => /^Merge in at most \d+ tokens\.$/.test(systemOf(request)))).toBe(true);
    expect(extractTagged(userOf(requests[1]!), PREVIOUS_SUMMARY_TAG)).toBeDefined();
  });

  it.each([
    [{ promptMode: 'rolling' }, /^Invalid config field promptMode: must be 'structured' or 'update' \(got "rolling"\)/],
    [{ env: { MEMFOLD_SUMMARY_PROMPT: 'rolling' } }, /^Invalid config field MEMFOLD_SUMMARY_PROMPT: must be 'structured' or 'update' \(got "rolling"\)/],
    [{ config: { summaryPromptMode: 'delta' } }, /^Invalid config field config\.summaryPromptMode: must be 'structured' or 'update' \(got "delta"\)/],
  ])('refuses an unknown mode, naming the setting (%o)', async (extra, message) => {
    const error = await createMemfold(options(extra as MemfoldOptions)).catch((e: unknown) => e);
    expect(MemfoldError.isInstance(error)).toBe(true);
    expect((error as MemfoldError).code).toBe('invalid_config');
    expect((error as Error).message).toMatch(message);
  });

  it('refuses promptMode with a summarizer adapter of its own', async () => {
    const own = summarizer();
    const error = await createMemfold(options({ promptMode: 'update', summarizer: own })).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/^Invalid config field promptMode: applies to the summarizer memfold builds/);
  });
});

describe('the structured fake', () => {
  it('writes only the sections it knows, within max_tokens x 4 characters', () => {
    const user = `<transcript>\n${Array.from({ length: 60 }, (_, i) => `[2024-01-0${1 + (i % 9)}T00:00:00.000Z] user(Bo): Order ORD-${i} costs ${i} EUR?`).join('\n')}\n</transcript>`;
    const text = structuredSummary({
      max_tokens: 100,
      messages: [
        { role: 'system', content: 'x' },
        { role: 'user', content: user },
      ],
    });
    expect(text.length).toBeLessThanOrEqual(400);
    expect(text.split('\n').filter((line) => !line.startsWith('- '))).toEqual(expect.arrayContaining(['Goal:']));
    for (const line of text.split('\n')) if (!line.startsWith('- ')) expect(FAKE_SECTIONS.map((s) => `${s}:`)).toContain(line);
    // The newest items stay.
    expect(text).toContain('ORD-59');
  });
});
