/**
 * The two built-in summary prompts side by side (`promptMode: 'structured'` and `'update'`): every LoCoMo conversation
 * replayed at an 8k window through `createMemfold` (in-memory stores, the real OpenAI adapter) against the fake
 * server's `structured` behaviour, a deterministic model that answers in the prompt's seven sections from the
 * transcript lines and, when the system prompt asks for an updated summary, merges the previous summary's items with
 * the new ones (the oldest of the fullest section goes first when room runs out). Tokens are chars/4 everywhere.
 *
 * Per mode: summarizer calls, input tokens per token compacted (from the request bodies), output tokens (the answers'
 * usage), and answer-token retention of the non-adversarial questions (`answerTokenRetention`) in (a) the depth-0
 * batches whose sources hold the question's evidence, and (b) the final clip-archive and the whole final context.
 */
import type { ConversationMessage } from '../../src/conversation/types.js';
import { CLIP_ARCHIVE_PREFIX } from '../../src/compaction/view/clip-archive.js';
import { batchBody } from '../../src/compaction/format/headers.js';
import { answerTokenRetention } from '../../src/eval/answer-tokens.js';
import { loadLocomo, type LocomoConversation } from '../../src/eval/datasets/locomo.js';
import { locomoDataset } from '../../src/eval/datasets/locomo-dataset.js';
import type { EvalQuestion } from '../../src/eval/eval-types.js';
import { replayConversation } from '../../src/eval/replay.js';
import { createMemfold } from '../../src/memfold.js';
import type { SummaryPromptMode } from '../../src/openai/openai-prompt-mode.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { behaviors, startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from '../support/fake-openai-server.js';
import { fmt, mean, now, pct, sized, table, type BenchOptions, type BenchResult } from './bench-kit.js';
import { LOCOMO_FILE } from '../support/shared-data.js';

const LOCOMO = LOCOMO_FILE;
const CONTEXT_WINDOW = 8_000;
const MODES: readonly SummaryPromptMode[] = ['structured', 'update'];
/**
 * The default chunks (up to the trigger's share: one request per compaction, so few merges), and smaller ones,
 * where a compaction folds several chunks in a row and the update prompt merges at every step.
 */
const CHUNKINGS: ReadonlyArray<{ name: string; chunkTokens?: number }> = [{ name: 'default chunks' }, { name: '2,000-token chunks', chunkTokens: 2_000 }];
const tokens = createTokenCounter({ mode: 'chars4' });

/** Tokens of a request as sent: its messages, counted as the thread is. */
function requestTokens(request: RecordedRequest): number {
  const messages: Array<{ role: ConversationMessage['role']; content?: unknown }> = request.body?.messages ?? [];
  return messages.reduce((sum, m) => sum + tokens.countMessage({ role: m.role, content: String(m.content ?? '') }), 0);
}

interface Figures {
  conversations: number;
  calls: number;
  /** Calls that carried a summary so far (`<previous_summary>`). */
  carryingSummary: number;
  /** Calls that merged archived summaries into a higher depth. */
  resummarizeCalls: number;
  inputTokens: number;
  outputTokens: number;
  rawTokens: number;
  compactedTokens: number;
  /** Tokens of the final clip-archive, summed over the conversations. */
  clipTokens: number;
  /** Item lines (`- ...`) of the final clip-archives, and those that repeat an earlier line of the same clip-archive. */
  clipItems: number;
  clipRepeats: number;
  /** Retention per question: in the evidence batches (questions whose evidence some batch covers), in the clip-archive, in the context. */
  evidenceBatches: number[];
  clipArchive: number[];
  context: number[];
  /** Questions whose evidence no depth-0 batch covers (kept verbatim: the first turn, or the recent tail). */
  uncovered: number;
}

const emptyFigures = (): Figures => ({
  conversations: 0,
  calls: 0,
  carryingSummary: 0,
  resummarizeCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  rawTokens: 0,
  compactedTokens: 0,
  clipTokens: 0,
  clipItems: 0,
  clipRepeats: 0,
  evidenceBatches: [],
  clipArchive: [],
  context: [],
  uncovered: 0,
});

/** Replay one conversation in `mode` on a fresh in-memory memfold, adding its figures to `figures`. */
async function replayOne(
  server: FakeOpenAI,
  mode: SummaryPromptMode,
  chunkTokens: number | undefined,
  conversation: LocomoConversation,
  questions: readonly EvalQuestion[],
  figures: Figures,
) {
  const memfold = await createMemfold({
    env: {},
    store: 'memory',
    config: { openaiBaseUrl: server.baseURL, summaryModel: 'fake', modelMaxRetries: 0 },
    compaction: { contextWindow: CONTEXT_WINDOW, ...(chunkTokens === undefined ? {} : { chunkTokens }) },
    promptMode: mode,
    tokens,
  });
  try {
    const from = server.requests.length;
    let outputTokens = 0;
    let fallbacks = 0;
    const reasons = new Set<string>();
    const stats = await replayConversation(memfold, conversation.id, conversation.messages, {
      onCompaction: (result) => {
        outputTokens += result.summarizerOutputTokens;
        fallbacks += result.fallbacks.length;
        for (const fallback of result.fallbacks) reasons.add(fallback.reason);
      },
    });
    if (stats.failures.length > 0) throw new Error(`${mode}: compaction failed on ${conversation.id}: ${stats.failures[0]!.error}`);
    if (fallbacks > 0)
      throw new Error(
        `${mode}: ${fallbacks} summaries came from the fallback on ${conversation.id} (${[...reasons].join(', ')}): the figures would not be the fake model's`,
      );
    const requests = server.requests.slice(from).filter((r) => r.path === '/v1/chat/completions');
    const live = new Set((await memfold.history(conversation.id)).map((m) => m.id));
    const context = await memfold.context(conversation.id);
    const clip = context.find((m) => m.role === 'system' && m.content.startsWith(CLIP_ARCHIVE_PREFIX))?.content ?? '';
    const contextText = context.map((m) => m.content).join('\n');
    const batches = await memfold.archive.list({ conversationId: conversation.id, kind: 'summary', depth: 0 });

    figures.conversations++;
    figures.calls += requests.length;
    figures.carryingSummary += requests.filter((r) => String(r.body?.messages?.at(-1)?.content ?? '').includes('<previous_summary>')).length;
    figures.resummarizeCalls += requests.filter((r) => /<transcript>\n\[depth:\d+\|/.test(String(r.body?.messages?.at(-1)?.content ?? ''))).length;
    figures.inputTokens += requests.reduce((sum, r) => sum + requestTokens(r), 0);
    figures.outputTokens += outputTokens;
    figures.clipTokens += clip === '' ? 0 : tokens.count(clip);
    const items = clip.split('\n').filter((line) => /^\s*- /.test(line));
    figures.clipItems += items.length;
    figures.clipRepeats += items.length - new Set(items.map((line) => line.trim())).size;
    stats.appended.forEach((message) => {
      const cost = tokens.countMessage(message);
      figures.rawTokens += cost;
      if (!live.has(message.id)) figures.compactedTokens += cost;
    });

    const idOf = new Map(conversation.turnIds.map((turnId, i) => [turnId, stats.appended[i]!.id]));
    for (const question of questions) {
      if (question.adversarial || question.answer === undefined) continue;
      const evidence = new Set(question.evidence.map((turnId) => idOf.get(turnId)));
      const covering = batches.filter((batch) => batch.sourceIds.some((id) => evidence.has(id)));
      const inBatches = covering.length === 0 ? null : answerTokenRetention(question.answer, covering.map((b) => batchBody(b.content)).join('\n'));
      const inClip = answerTokenRetention(question.answer, clip);
      const inContext = answerTokenRetention(question.answer, contextText);
      if (inClip === null || inContext === null) continue; // an answer with no word to look for
      if (inBatches === null) figures.uncovered++;
      else figures.evidenceBatches.push(inBatches);
      figures.clipArchive.push(inClip);
      figures.context.push(inContext);
    }
  } finally {
    await memfold.close();
  }
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const conversations = (await loadLocomo(LOCOMO)).slice(0, sized(options, { smoke: 1, quick: 2, full: undefined }));
  const questionsOf = new Map(locomoDataset(conversations).conversations.map((c) => [c.id, c.questions]));
  const server = await startFakeOpenAI({ behavior: behaviors.structured() });
  const cases = CHUNKINGS.flatMap((chunking) => MODES.map((mode) => ({ key: `${mode}, ${chunking.name}`, mode, chunkTokens: chunking.chunkTokens })));
  const totals = new Map<string, Figures>(cases.map((c) => [c.key, emptyFigures()]));
  try {
    for (const conversation of conversations) {
      for (const c of cases) {
        const t0 = now();
        await replayOne(server, c.mode, c.chunkTokens, conversation, questionsOf.get(conversation.id) ?? [], totals.get(c.key)!);
        options.log(`${conversation.id} ${c.key}: ${fmt((now() - t0) / 1000, 1)} s`);
      }
    }
  } finally {
    await server.close();
  }

  const rows = cases.map(({ key }) => {
    const t = totals.get(key)!;
    return [
      key,
      t.calls,
      t.carryingSummary,
      t.resummarizeCalls,
      fmt(t.inputTokens / t.compactedTokens, 2),
      t.outputTokens,
      fmt(t.outputTokens / t.calls),
      fmt(t.clipTokens / t.conversations),
      pct(t.clipRepeats / t.clipItems),
      `${pct(mean(t.evidenceBatches))} (${t.evidenceBatches.length})`,
      pct(mean(t.clipArchive)),
      pct(mean(t.context)),
    ];
  });
  const first = totals.get(cases[0]!.key)!;
  const markdown = [
    `${first.conversations} LoCoMo conversations (${fmt(first.rawTokens)} raw tokens, chars/4), window ${fmt(CONTEXT_WINDOW)} (default chunks of up to 6,400 tokens, summaries of up to 640), default settings otherwise; ` +
      `${first.clipArchive.length} non-adversarial questions with an answer. One fake OpenAI-compatible server answers every summary with its \`structured\` behaviour.`,
    '',
    table(
      [
        'prompt mode, chunks',
        '>summarizer calls',
        '>with a previous summary',
        '>of them re-summarize',
        '>input per token compacted',
        '>output tokens',
        '>output per call',
        '>final clip-archive tokens',
        '>its items repeated',
        '>answer kept: evidence batches (questions)',
        '>answer kept: final clip-archive',
        '>answer kept: final context',
      ],
      rows,
    ),
    '',
    "Input per token compacted: the chat requests' tokens (system prompt, previous summary, transcript) over the raw tokens of the turns no longer live at the end (the floor is 1.0). " +
      "Output tokens: the answers, as the fake reports them (chars/4). Final clip-archive tokens: mean per conversation; its items repeated: item lines that repeat an earlier line of the same clip-archive. Answer kept: mean share of the answer's words (`answerTokenRetention`) present in the text: " +
      '(a) the depth-0 batches whose sources include an evidence turn, over the questions some batch covers (the others were kept verbatim); ' +
      '(b) the clip-archive of the final context, and the whole final context (clip-archive, first turn, recent tail), over every question.',
    "What the figures can show: the cost of each request shape (the update prompt re-sends a summary as long as the answer it asks for, and its answers fill their budget), and how a model that keeps what it is given and cuts the oldest to fit trades each stretch's room for older material. " +
      'What they cannot show: how a real model writes, merges or forgets; the fake copies transcript lines that carry a cue word (a number, a name, a request, a plan) and never rewrites them, so a higher or lower figure here says what the request shape allows, not what a model would keep.',
  ].join('\n');
  return {
    name: 'summary-prompts',
    title: 'Summary prompts: structured against update (LoCoMo at 8k, structure-echoing fake model)',
    markdown,
    json: Object.fromEntries(totals),
  };
}
