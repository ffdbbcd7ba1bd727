/**
 * Summarizer cost, side by side: every LoCoMo conversation replayed with an 8k window, and the ten as one stream
 * of long turns (`long-turns.ts`, over 200k tokens) with a 16k window, through memfold (its real OpenAI adapter),
 * a summarize-everything policy, and LangChain's `summarizationMiddleware`, all talking to one fake
 * OpenAI-compatible server whose summaries are short and deterministic. Tokens are chars/4 everywhere (the
 * thread, the budgets, and the request bodies the server records).
 *
 * Per policy: summarizer input tokens / raw conversation tokens; input tokens per token compacted (pushed out of
 * the thread; the floor is 1.0, each token read once); and the share of the conversation neither shown to a
 * summarizer nor left in the final thread (lost). Also the prompt-cache reuse of the assistant model's prompts
 * (src/eval/cache-reuse.ts: leading messages shared with the previous call's prompt), compactions per 100k tokens
 * appended, and the mean tokens a compaction frees from the thread. In dollars (`src/cost/`, list prices as of
 * PRICES_AS_OF): the summarizer's tokens priced as gpt-4.1-mini, and the assistant's prompts as gpt-4.1 with the
 * reused share at its cached price.
 */
import OpenAI from 'openai';
import type { BaseMessage } from '@langchain/core/messages';
import { prefixReuse, reuseShare, reuseTracker, sameMessage, type PrefixReuse, type PromptMessage } from '../../src/eval/cache-reuse.js';
import type { ConversationMessage, NewMessage } from '../../src/conversation/types.js';
import { buildFoldRequest, DEFAULT_SUMMARIZATION_PROMPT, interpolatePrompt, renderSummaryLine } from '../../src/openai/openai-prompt.js';
import { summaryLine } from '../../src/compaction/fold/fold.js';
import { renderMessage, renderTranscript } from '../../src/compaction/format/transcript-format.js';
import type { CompactionSettings } from '../../src/compaction/compaction-settings.js';
import { baselineReuse } from '../../src/eval/baselines.js';
import { costOf } from '../../src/cost/cost-of.js';
import { DEFAULT_PRICES, PRICES_AS_OF } from '../../src/cost/default-prices.js';
import { loadLocomo, type LocomoConversation } from '../../src/eval/datasets/locomo.js';
import { replayConversation } from '../../src/eval/replay.js';
import { createMemfold } from '../../src/memfold.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { fakeSummary, startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from '../support/fake-openai-server.js';
import { fmt, now, pct, table, tempHome, type BenchOptions, type BenchResult } from './bench-kit.js';
import { LONG_TURN_JOIN, longTurnStream } from './long-turns.js';
import { isLangChainSummary, replayWithLangChain } from './peers/langchain-summarization.js';
import { LOCOMO_FILE } from '../support/shared-data.js';

const LOCOMO = LOCOMO_FILE;
const tokens = createTokenCounter({ mode: 'chars4' });
/** What memfold's clipText leaves where it cuts a transcript (src/compaction/fold/chunk.ts). */
const CUT_MARKER = '[... cut for the summarizer';
/** LangChain's default `summaryPrefix`, which opens the message holding its summary. */
const LANGCHAIN_SUMMARY_PREFIX = 'Here is a summary of the conversation to date:';
const hasPreviousSummary = (request: RecordedRequest) => JSON.stringify(request.body).includes('<previous_summary>');
const countMessage = (m: Pick<ConversationMessage, 'role' | 'content' | 'name'>) => tokens.countMessage(m);
/** A text's tokens: what a changed message's opening shared with the one before counts for (cache-reuse.ts). */
const countText = (text: string) => tokens.count(text);
const countPrompt = (prompt: readonly PromptMessage[]) => prompt.reduce((sum, m) => sum + tokens.countMessage(m), 0);

/**
 * The assistant model's calls: one before each answer, i.e. each assistant turn that follows a non-assistant one
 * (LangChain's agent answers once per input; consecutive assistant turns are one answer), at its index.
 */
function answerTurns(messages: readonly NewMessage[]): Set<number> {
  return new Set(messages.flatMap((m, i) => (i > 0 && m.role === 'assistant' && messages[i - 1]!.role !== 'assistant' ? [i] : [])));
}

/** What one replay of one conversation left behind. */
interface Replay {
  requests: RecordedRequest[];
  /** Whether turn i was in some summarizer request. */
  shown: (i: number) => boolean;
  /** Whether turn i is in the final thread. */
  kept: (i: number) => boolean;
  /** Whether a request carries the summary made before it. */
  carriesSummary: (request: RecordedRequest) => boolean;
  /** Prompt-cache reuse of the assistant model's prompts, one before each answer. */
  reuse: PrefixReuse;
  /** Times the thread was compacted, and the thread tokens those compactions freed. */
  compactions: number;
  freedTokens: number;
}

interface Figures {
  calls: number;
  inputTokens: number;
  /** The fake's answers (`fakeSummary` of each request, which the server sent), chars/4. */
  outputTokens: number;
  rawTokens: number;
  compactedTokens: number;
  lostTokens: number;
  /** Requests whose transcript memfold cut to fit the summarizer's input budget. */
  cutRequests: number;
  /** Requests after a conversation's first, and those of them that carry the previous summary. */
  laterRequests: number;
  carryingSummary: number;
  reusedTokens: number;
  comparedTokens: number;
  compactions: number;
  freedTokens: number;
}

/** The chat requests since `from`, with their text joined for searching. */
function requestsSince(server: FakeOpenAI, from: number): { requests: RecordedRequest[]; text: string } {
  const requests = server.requests.slice(from).filter((r) => r.path === '/v1/chat/completions');
  const text = requests.flatMap((r) => (r.body?.messages ?? []).map((m: { content?: unknown }) => String(m.content ?? ''))).join('\n');
  return { requests, text };
}

/** Whether memfold's adapter sent `message` in one of the requests: as its line, with its time or (after a line of the same time) without. */
function sentToSummarizer(text: string, message: ConversationMessage): boolean {
  const line = summaryLine(message);
  return text.includes(renderSummaryLine(line)) || text.includes(`\n${renderSummaryLine(line, line.time)}`);
}

function requestTokens(request: RecordedRequest): number {
  const messages: Array<{ role: ConversationMessage['role']; content?: unknown }> = request.body?.messages ?? [];
  return messages.reduce((sum, m) => sum + countMessage({ role: m.role, content: String(m.content ?? '') }), 0);
}

function measure(conversation: LocomoConversation, replay: Replay): Figures {
  const figures: Figures = {
    calls: replay.requests.length,
    inputTokens: 0,
    outputTokens: 0,
    rawTokens: 0,
    compactedTokens: 0,
    lostTokens: 0,
    cutRequests: 0,
    laterRequests: Math.max(0, replay.requests.length - 1),
    carryingSummary: replay.requests.slice(1).filter(replay.carriesSummary).length,
    reusedTokens: replay.reuse.reusedTokens,
    comparedTokens: replay.reuse.promptTokens,
    compactions: replay.compactions,
    freedTokens: replay.freedTokens,
  };
  for (const request of replay.requests) {
    figures.inputTokens += requestTokens(request);
    figures.outputTokens += tokens.count(fakeSummary(request.body));
    if (JSON.stringify(request.body).includes(CUT_MARKER)) figures.cutRequests++;
  }
  conversation.messages.forEach((message, i) => {
    const cost = countMessage(message);
    figures.rawTokens += cost;
    if (replay.kept(i)) return;
    figures.compactedTokens += cost;
    if (!replay.shown(i)) figures.lostTokens += cost;
  });
  return figures;
}

/** memfold through createMemfold and its OpenAI adapter, replayed the way an agent loop would. */
async function memfoldPolicy(server: FakeOpenAI, home: string, contextWindow: number) {
  const memfold = await createMemfold({
    env: {},
    config: { home, openaiBaseUrl: server.baseURL, summaryModel: 'fake' },
    compaction: { contextWindow },
    tokens,
  });
  let fallbacks = 0;
  return {
    settings: memfold.compactor.settings,
    fallbacks: () => fallbacks,
    close: () => memfold.close(),
    async replay(conversation: LocomoConversation): Promise<Replay> {
      const from = server.requests.length;
      const answers = answerTurns(conversation.messages);
      const reuse = reuseTracker((m: ConversationMessage) => tokens.countMessage(m), countText);
      let freedTokens = 0;
      const stats = await replayConversation(memfold, conversation.id, conversation.messages, {
        onCompaction: (result) => {
          fallbacks += result.fallbacks.length;
          if (result.status === 'compacted') freedTokens += result.tokensBefore - result.tokensAfter;
        },
        onPrompt: (prompt, at) => {
          if (answers.has(at)) reuse.add(prompt);
        },
      });
      if (stats.failures.length > 0) throw new Error(`memfold compaction failed on ${conversation.id}: ${stats.failures[0]!.error}`);
      const live = new Set((await memfold.history(conversation.id)).map((m) => m.id));
      const { requests, text } = requestsSince(server, from);
      return {
        requests,
        shown: (i) => sentToSummarizer(text, stats.appended[i]!),
        kept: (i) => live.has(stats.appended[i]!.id),
        carriesSummary: hasPreviousSummary,
        reuse: reuse.total(),
        compactions: stats.compactions,
        freedTokens,
      };
    },
  };
}

/**
 * Summarize everything: at each trigger, the previous summary and every message since go into one request
 * (memfold's prompt and transcript format), and the thread becomes that summary alone.
 */
async function summarizeEverything(server: FakeOpenAI, settings: CompactionSettings, conversation: LocomoConversation): Promise<Replay> {
  const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'unused', maxRetries: 0 });
  const system = interpolatePrompt(DEFAULT_SUMMARIZATION_PROMPT, { maxTokens: settings.maxSummaryTokens });
  const messages = conversation.messages.map((m) => ({ ...m, createdAt: String(m.createdAt) }));
  const from = server.requests.length;
  const answers = answerTurns(conversation.messages);
  const reuse = reuseTracker(countMessage, countText);
  let freedTokens = 0;
  let summary: string | undefined;
  let live: number[] = [];
  let liveTokens = 0;
  for (let i = 0; i < messages.length; i++) {
    if (answers.has(i)) reuse.add([...(summary === undefined ? [] : [{ role: 'system' as const, content: summary }]), ...live.map((j) => messages[j]!)]);
    live.push(i);
    liveTokens += countMessage(messages[i]!);
    if (liveTokens < settings.trigger) continue;
    const user = buildFoldRequest(renderTranscript(live.map((j) => messages[j]!)), summary);
    const answer = await client.chat.completions.create({
      model: 'fake',
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
    });
    summary = answer.choices[0]?.message.content ?? '';
    live = [];
    const before = liveTokens;
    liveTokens = countMessage({ role: 'system', content: summary });
    freedTokens += before - liveTokens;
  }
  const kept = new Set(live);
  const { requests, text } = requestsSince(server, from);
  return {
    requests,
    shown: (i) => text.includes(renderMessage(messages[i]!)),
    kept: (i) => kept.has(i),
    carriesSummary: hasPreviousSummary,
    reuse: reuse.total(),
    compactions: requests.length,
    freedTokens,
  };
}

/** LangChain's middleware with memfold's trigger and recent budget; `trim` undefined = its default trim. */
async function langChainPolicy(server: FakeOpenAI, settings: CompactionSettings, conversation: LocomoConversation, trim?: number): Promise<Replay> {
  const countTokens = (messages: BaseMessage[]) =>
    messages.reduce((sum, m) => sum + countMessage({ role: 'user', content: String(m.content), ...(m.name ? { name: m.name } : {}) }), 0);
  const from = server.requests.length;
  const { thread, turnIds, calls } = await replayWithLangChain(conversation.messages, {
    baseURL: server.baseURL,
    triggerTokens: settings.trigger,
    keepTokens: settings.keepRecentTokens,
    countTokens,
    ...(trim === undefined ? {} : { trimTokensToSummarize: trim }),
  });
  const live = new Set(thread.filter((m) => !isLangChainSummary(m)).map((m) => m.id));
  const { requests, text } = requestsSince(server, from);
  const turns: readonly NewMessage[] = conversation.messages;
  // getBufferString writes `Human: {name}, {content}` (`AI: {content}` unnamed); a second assistant turn in one answer starts a line.
  const shown = (i: number) => [', ', ': ', '\n'].some((before) => text.includes(`${before}${turns[i]!.content}`));
  const carriesSummary = (request: RecordedRequest) => JSON.stringify(request.body).includes(LANGCHAIN_SUMMARY_PREFIX);
  // The calls that answer a turn (the last input, if no turn answers it, is left out: memfold makes no request there).
  const answering = calls.filter((call) => call.answerAt < conversation.messages.length);
  // A call whose prompt is not the thread it was invoked with: the middleware summarized it first.
  const compacted = calls.filter(
    (call) => call.prompt.length !== call.thread.length || call.prompt.some((m, k) => !sameMessage(promptMessage(m), promptMessage(call.thread[k]!))),
  );
  return {
    requests,
    shown,
    kept: (i) => live.has(turnIds[i]),
    carriesSummary,
    reuse: prefixReuse(
      answering.map((call) => call.prompt.map(promptMessage)),
      (m) => tokens.countMessage(m),
      countText,
    ),
    compactions: compacted.length,
    freedTokens: compacted.reduce((sum, call) => sum + langChainTokens(call.thread) - langChainTokens(call.prompt), 0),
  };
}

const LANGCHAIN_ROLES: Record<string, PromptMessage['role']> = { human: 'user', ai: 'assistant', system: 'system', tool: 'tool' };

/** A LangChain message as the fields the reuse compares (LangChain's scripted answers carry no tool calls). */
function promptMessage(m: BaseMessage): PromptMessage {
  const role = LANGCHAIN_ROLES[m.getType()];
  if (!role) throw new Error(`unexpected LangChain message type ${m.getType()}`);
  return { role, content: String(m.content), ...(m.name ? { name: m.name } : {}) };
}

const langChainTokens = (messages: readonly BaseMessage[]) => countPrompt(messages.map(promptMessage));

const POLICIES = ['memfold', 'summarize everything', 'LangChain (default trim)', 'LangChain (trim off)'] as const;
type Policy = (typeof POLICIES)[number];

function add(a: Figures | undefined, b: Figures): Figures {
  if (!a) return { ...b };
  const total = { ...a };
  for (const key of Object.keys(total) as Array<keyof Figures>) total[key] += b[key];
  return total;
}

/** One comparison: a set of conversations at one window. */
interface Section {
  title: string;
  describe: string;
  contextWindow: number;
  conversations: LocomoConversation[];
}

/** Truncate-oldest and head+tail have no summarizer: only their prompt-cache reuse is compared. */
const BASELINE_POLICIES = ['truncate-oldest', 'head+tail'] as const;

function baselineReuseOf(name: (typeof BASELINE_POLICIES)[number], conversations: readonly LocomoConversation[], window: number): PrefixReuse {
  const total = { reusedTokens: 0, promptTokens: 0 };
  for (const conversation of conversations) {
    const messageTokens = conversation.messages.map((m) => countMessage(m));
    const reuse = baselineReuse(
      name,
      messageTokens,
      window,
      [...answerTurns(conversation.messages)].sort((a, b) => a - b),
    );
    total.reusedTokens += reuse.reusedTokens;
    total.promptTokens += reuse.promptTokens;
  }
  return total;
}

/** Models the dollar columns are priced as: a cheap summary model, and an assistant model with a prompt cache. */
const SUMMARY_PRICED_AS = 'gpt-4.1-mini';
const ASSISTANT_PRICED_AS = 'gpt-4.1';
const dollars = (usd: number | null) => (usd === null ? '—' : `$${usd.toFixed(4)}`);
/** The assistant's prompts: prompt tokens x (1 - reuse) at the input price + prompt tokens x reuse at the cached price. */
const promptUsd = (reuse: PrefixReuse) =>
  costOf({ inputTokens: reuse.promptTokens, cachedInputTokens: reuse.reusedTokens, outputTokens: 0 }, ASSISTANT_PRICED_AS, DEFAULT_PRICES).usd;

async function runSection(section: Section, server: FakeOpenAI, options: BenchOptions) {
  const home = await tempHome('summarizer-cost');
  const memfold = await memfoldPolicy(server, home.dir, section.contextWindow);
  const { settings } = memfold;
  const totals = new Map<Policy, Figures>();
  const perConversation: Array<{ id: string; policy: Policy; figures: Figures; seconds: number }> = [];
  try {
    for (const conversation of section.conversations) {
      const replays: Record<Policy, () => Promise<Replay>> = {
        memfold: () => memfold.replay(conversation),
        'summarize everything': () => summarizeEverything(server, settings, conversation),
        'LangChain (default trim)': () => langChainPolicy(server, settings, conversation),
        'LangChain (trim off)': () => langChainPolicy(server, settings, conversation, Infinity),
      };
      for (const policy of POLICIES) {
        const t0 = now();
        const figures = measure(conversation, await replays[policy]());
        const seconds = (now() - t0) / 1000;
        perConversation.push({ id: conversation.id, policy, figures, seconds });
        totals.set(policy, add(totals.get(policy), figures));
        options.log(
          `${conversation.id} ${policy}: ${figures.calls} calls, input/raw ${fmt(figures.inputTokens / figures.rawTokens, 2)}, lost ${pct(figures.lostTokens / figures.rawTokens)} (${fmt(seconds, 1)} s)`,
        );
      }
    }
  } finally {
    await memfold.close();
    await home.remove();
  }
  if (memfold.fallbacks() > 0)
    throw new Error(`memfold fell back to the extractive summarizer ${memfold.fallbacks()} times: the figures would not be the fake model's`);

  const rows = POLICIES.map((policy) => {
    const t = totals.get(policy)!;
    return [
      policy,
      t.calls,
      t.inputTokens,
      fmt(t.inputTokens / t.rawTokens, 2),
      t.compactedTokens,
      fmt(t.inputTokens / t.compactedTokens, 2),
      pct(t.lostTokens / t.rawTokens),
      `${t.carryingSummary} / ${t.laterRequests}`,
      fmt(reuseShare({ reusedTokens: t.reusedTokens, promptTokens: t.comparedTokens }) ?? undefined, 3),
      fmt((t.compactions / t.rawTokens) * 100_000, 1),
      fmt(t.compactions > 0 ? t.freedTokens / t.compactions : undefined),
      dollars(costOf({ inputTokens: t.inputTokens, outputTokens: t.outputTokens }, SUMMARY_PRICED_AS, DEFAULT_PRICES).usd),
      dollars(promptUsd({ reusedTokens: t.reusedTokens, promptTokens: t.comparedTokens })),
    ];
  });
  const baselineTotals = Object.fromEntries(BASELINE_POLICIES.map((name) => [name, baselineReuseOf(name, section.conversations, section.contextWindow)]));
  const baselineReuses = Object.fromEntries(BASELINE_POLICIES.map((name) => [name, reuseShare(baselineTotals[name]!)]));
  for (const name of BASELINE_POLICIES) {
    rows.push([name, '—', '—', '—', '—', '—', '—', '—', fmt(baselineReuses[name] ?? undefined, 3), '—', '—', '—', dollars(promptUsd(baselineTotals[name]!))]);
  }
  const mf = totals.get('memfold')!;
  const cutNote =
    mf.cutRequests > 0
      ? `memfold cut ${mf.cutRequests} of its ${mf.calls} summarizer requests to its input budget: the turns past the cut were archived verbatim (memory_read finds them) but no summary covers them; that is its "lost" share. `
      : '';
  const markdown = [
    `### ${section.title}`,
    '',
    `${section.describe} (${fmt(mf.rawTokens)} raw tokens, chars/4), window ${fmt(section.contextWindow)}: trigger ${fmt(settings.trigger)}, target ${fmt(settings.targetTokens)}, ` +
      `recent ${fmt(settings.keepRecentTokens)} tokens kept (memfold also keeps ${settings.keepRecentMessages} messages and the first turn; LangChain \`keep: { tokens }\`), ` +
      `memfold chunks of ${fmt(settings.chunkTokens)} tokens.`,
    '',
    table(
      [
        'policy',
        '>summarizer calls',
        '>input tokens',
        '>input / raw',
        '>tokens compacted',
        '>input per token compacted',
        '>lost',
        '>previous summary carried',
        '>prompt cache reuse',
        '>compactions per 100k appended',
        '>mean tokens freed',
        `>summarizer USD (as ${SUMMARY_PRICED_AS})`,
        `>assistant prompt USD (as ${ASSISTANT_PRICED_AS}, cached share at its cached price)`,
      ],
      rows,
    ),
    ...(cutNote ? ['', cutNote] : []),
  ].join('\n');
  return {
    markdown,
    json: { contextWindow: section.contextWindow, settings, totals: Object.fromEntries(totals), baselineReuses, baselineTotals, perConversation },
  };
}

const SMOKE_TURNS = 300;

function openingTurns(conversation: LocomoConversation, turns: number): LocomoConversation {
  const { messages, turnIds, turnLines } = conversation;
  return { ...conversation, messages: messages.slice(0, turns), turnIds: turnIds.slice(0, turns), turnLines: turnLines.slice(0, turns) };
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const locomo = await loadLocomo(LOCOMO);
  // A smoke run replays the opening 300 turns of one conversation: past the 8k window's trigger, a few seconds.
  const sample = options.smoke ? [openingTurns(locomo[0]!, SMOKE_TURNS)] : locomo.slice(0, options.quick ? 2 : undefined);
  const stream = longTurnStream(sample, LONG_TURN_JOIN);
  const sections: Section[] = [
    { title: 'LoCoMo, 8k window', describe: `${sample.length} LoCoMo conversations`, contextWindow: 8_000, conversations: sample },
    {
      title: 'One long conversation of long turns, 16k window',
      describe: `The ${sample.length} LoCoMo conversations as one, every ${LONG_TURN_JOIN} turns joined into a message (${stream.messages.length} messages, about ${fmt(
        stream.messages.reduce((sum, m) => sum + countMessage(m), 0) / (stream.messages.length / 2),
      )} tokens a user and assistant turn)`,
      contextWindow: 16_000,
      conversations: [stream],
    },
  ];
  const server = await startFakeOpenAI();
  const results = [];
  try {
    for (const section of sections) results.push(await runSection(section, server, options));
  } finally {
    await server.close();
  }
  const markdown = [
    'One fake OpenAI-compatible server answers every summarizer; its summaries are about 12 words.',
    '',
    ...results.map((r) => r.markdown),
    '',
    'Tokens compacted: raw tokens of the turns no longer in the final thread. Lost: share of the conversation (by tokens) whose turns never reached a summarizer request and are not in the final thread. ' +
      "Previous summary carried: requests (after each conversation's first) that hold the summary made before them; one that does not starts the summary over. " +
      "memfold and summarize-everything send memfold's transcript (each message with its speaker, and its date unless the line before has the same), LangChain its buffer string (speaker, no date). " +
      'LangChain replays through `createAgent` with `summarizationMiddleware({ trigger: { tokens }, keep: { tokens }, tokenCounter })`; its default `trimTokensToSummarize` (4,000) keeps only the newest messages of each evicted block, previous summary included; "trim off" sets it beyond any thread.',
    "Prompt cache reuse: over the assistant model's calls (one per answer: each assistant turn after a non-assistant one) after each conversation's first, the tokens of the leading messages its prompt shares with the previous call's (same role, name, content, tool calls, tool call id), over those prompts' tokens; memfold's prompt is its context as the replay holds it, LangChain's the thread its model is sent, summarize-everything's its summary then the turns since, truncate-oldest's and head+tail's the messages they keep (`src/eval/baselines.ts`, head+tail's head a quarter of the window); whole messages make it a lower bound of a provider's token cache, and a call's new turns keep it below 1.",
    'Compactions per 100k appended: compactions / raw tokens x 100,000 (memfold: compacted results; summarize-everything: its summarizer calls; LangChain: model calls whose thread the middleware summarized first).',
    "Mean tokens freed: the thread's tokens before - after each compaction, averaged (memfold: its results' tokensBefore - tokensAfter).",
    `Dollars, at the list prices of \`src/cost/\` (as of ${PRICES_AS_OF}; check them): summarizer USD prices every policy's summarizer input tokens (as above) and output tokens (the fake's answers, chars/4) as if the summarizer were ${SUMMARY_PRICED_AS} ` +
      `($${DEFAULT_PRICES[SUMMARY_PRICED_AS]!.input} in, $${DEFAULT_PRICES[SUMMARY_PRICED_AS]!.output} out per million; the fake's short answers make output a small part). ` +
      `Assistant prompt USD prices the prompts the reuse is measured on (every call after a conversation's first) as if the assistant were ${ASSISTANT_PRICED_AS}: prompt tokens x (1 - reuse) x $${DEFAULT_PRICES[ASSISTANT_PRICED_AS]!.input} + prompt tokens x reuse x $${DEFAULT_PRICES[ASSISTANT_PRICED_AS]!.cachedInput} (its cached price) per million; a provider caches tokens, and only prefixes over its minimum (1,024 tokens at OpenAI), so this is an estimate.`,
  ].join('\n');
  return {
    name: 'summarizer-cost',
    title: 'Summarizer cost, side by side (LoCoMo at 8k; one long conversation of long turns at 16k)',
    markdown,
    json: { sections: results.map((r) => r.json) },
  };
}
