/**
 * memory_read's answer to a `query`: the archived messages that match, each shown with its neighbours, best
 * first, within one token budget; summaries as one line each pointing to what they cover. The archive's
 * search (BM25 leading) picks candidate transcript segments; their messages are then ranked one by one, each
 * with its neighbours' words, so the answer shows the matching message rather than the head of its segment.
 */
import type { Archive, SearchHit } from '../archive/archive.js';
import { errorMessage } from '../errors.js';
import { pickWindows } from '../archive/ranking/message-windows.js';
import type { MemoryReadArgs } from './memory-read-args.js';
import { findCandidates, LIVE_LABEL, type SearchAnswerOptions } from './memory-read-candidates.js';
import { blockHeader, cutIn, describeEntry, entryExcerpt, passageLines, pool, type PoolItem } from './memory-read-passages.js';
import { messageScores } from './memory-read-scores.js';
import { semanticScores } from './memory-read-semantic.js';
import type { ReadStrategy } from './memory-read-strategy.js';
import { sliceWhole } from '../conversation/well-formed-text.js';

export { LIVE_LABEL, type SearchAnswerOptions } from './memory-read-candidates.js';
export { describeEntry, entryExcerpt, spokenSpan } from './memory-read-passages.js';

/** A summary hit shows at most this much text; its label reads the rest. */
const SUMMARY_TEXT_CHARS = 2_000;

/** The query as the answer repeats it: enough to recognise, never a page. */
const QUERY_SHOWN_CHARS = 200;

/** Said once when a long message is shown by its sentences. */
const EXCERPT_NOTE = ` (${'…'} marks where a long message is cut: read its passage's label for the whole)`;

/** Unused budget worth a second plan of the windows. */
const SLACK_TOKENS = 40;

/** Labels named in the closing line at most. */
const LABELS_NAMED = 5;

function shownQuery(query: string): string {
  return JSON.stringify(query.length > QUERY_SHOWN_CHARS ? `${sliceWhole(query, 0, QUERY_SHOWN_CHARS)}…` : query);
}

function leftOutLine(labels: readonly string[], count: number, what: string, next?: string): string {
  const named = labels.length === 0 ? LIVE_LABEL : labels.slice(0, LABELS_NAMED).join(', ');
  const more = labels.length > LABELS_NAMED ? ` and ${labels.length - LABELS_NAMED} more` : '';
  const ways = next === undefined ? 'Read one in full with {"label": "<label>"}' : `Read the next best with ${next}, one in full with {"label": "<label>"}`;
  return `Left out for the token budget: ${count} more ${what} (in ${named}${more}). ${ways}, or ask again with a larger max_tokens, a narrower query, or from/to.`;
}

/** The call that shows the next page of the same search: what a second look asks. */
function nextPageCall(args: MemoryReadArgs): string {
  const { limit: _limit, page, ...rest } = args;
  const call: Record<string, unknown> = { ...rest, page: (page ?? 1) + 1 };
  if (call.maxTokens !== undefined) {
    call.max_tokens = call.maxTokens;
    delete call.maxTokens;
  }
  return JSON.stringify(call);
}

/** The passages of one window plan: sections numbered from `firstPassage`, the left-out note, the items shown. */
interface WindowAnswer {
  sections: string[];
  note: string | undefined;
  excerpted: boolean;
  /** Matching messages the plan left out. */
  leftOut: number;
  /** The items of each passage, as indexes into the pool, in the order the passages are shown. */
  blocks: number[][];
  shown: number[];
  tokens: number;
}

interface WindowContext {
  items: readonly PoolItem[];
  scores: readonly number[];
  /** Items an earlier page showed: left out of this one. */
  hidden: ReadonlySet<number>;
  strategy: ReadStrategy;
  blockOverhead: number;
  firstPassage: number;
  nextCall: string;
}

function windowAnswer(context: WindowContext, room: number): WindowAnswer {
  const { strategy } = context;
  const visible = context.items.map((_, i) => i).filter((i) => !context.hidden.has(i));
  const items = visible.map((i) => context.items[i]!);
  const plan = pickWindows(
    items,
    visible.map((i) => context.scores[i]!),
    { radius: strategy.radius, budget: room, blockOverhead: context.blockOverhead },
  );
  let excerpted = false;
  const sections = plan.blocks.map((block, b) => {
    const shown = block.map((i) => items[i]!);
    excerpted ||= cutIn(shown);
    return [blockHeader(shown, context.firstPassage + b, strategy), ...passageLines(shown, strategy)].join('\n');
  });
  let note: string | undefined;
  const leftOut = new Set(plan.leftOut.map((i) => items[i]!.message.id)).size;
  if (leftOut > 0) {
    const labels = [...new Set(plan.leftOut.map((i) => items[i]!.segment.label))].filter((label) => label !== LIVE_LABEL);
    note = leftOutLine(labels, leftOut, 'matching messages', context.nextCall);
  }
  const blocks = plan.blocks.map((block) => block.map((i) => visible[i]!));
  return { sections, note, excerpted, blocks, shown: blocks.flat(), leftOut, tokens: plan.tokens };
}

/**
 * The windows of one page: a first plan, and, when it came out well under the budget with matches left out, a second
 * with what it left unused (each line's cost is an estimate from above; `fits` keeps the budget a promise).
 */
function fittedWindows(context: WindowContext, room: number, size: (answer: WindowAnswer) => number, budget: number): WindowAnswer {
  const first = windowAnswer(context, room);
  const slack = budget - size(first);
  if (first.leftOut === 0 || slack <= SLACK_TOKENS) return first;
  const second = windowAnswer(context, room + slack);
  return size(second) > budget ? first : second;
}

/** Each item's closeness to the query by meaning, when a semantic embedder is given; none when it fails (words then rank alone). */
async function closeness(options: SearchAnswerOptions, query: string, items: readonly PoolItem[]): Promise<number[]> {
  const { semantic, strategy } = options;
  if (!semantic || strategy.semanticWeight <= 0) return [];
  try {
    return await semanticScores(
      semantic.embedder,
      query,
      items.map((item) => item.text),
      semantic.cache,
    );
  } catch (error) {
    semantic.onWarning?.(`Embedder ${semantic.embedder.id} failed; ranking messages by their words only: ${errorMessage(error)}`, error);
    return [];
  }
}

/** The hits with their whole entries (a `messagesOnly` hit has its messages alone); one no longer archived, or live, as it was. */
async function described(archive: Archive, conversationId: string, hits: readonly SearchHit[]): Promise<SearchHit[]> {
  const labels = hits.map((hit) => hit.entry.label).filter((label) => label !== LIVE_LABEL);
  const entries = new Map((labels.length > 0 ? await archive.read(conversationId, labels) : []).map((entry) => [entry.label, entry]));
  return hits.map((hit) => ({ ...hit, entry: entries.get(hit.entry.label) ?? hit.entry }));
}

/** One page's answer, and the pool items it shows; `shown` is absent when the answer does not depend on the page. */
interface PageAnswer {
  text: string;
  shown?: readonly number[];
  /** Matching items the page's budget left out. */
  leftOut?: number;
}

/** A page that shows no message: the earlier pages showed every match, or what is left does not fit the budget. */
function noMoreText(query: string, leftOut: number): string {
  return leftOut === 0
    ? `No more archived messages match ${shownQuery(query)}: the earlier pages showed them all.`
    : `No more archived messages for ${shownQuery(query)} fit this page: ${leftOut} matching messages the earlier pages did not show need a larger max_tokens (ask again with it from page 1).`;
}

/**
 * The answer to a query, page `args.page`. Pages partition what they show: page k is planned after pages 1..k-1
 * exactly as they were shown (each with its own framing, budget and last-passage cuts), and leaves out every item
 * they showed, so no item shows on two pages and a match one page leaves out is shown by a later one.
 */
export async function searchAnswer(archive: Archive, conversationId: string, args: MemoryReadArgs, options: SearchAnswerOptions): Promise<string> {
  const query = args.query!;
  const page = args.page ?? 1;
  const found = await findCandidates(archive, conversationId, args, options);
  const summaries = found.early ?? (found.transcripts.length === 0 ? await found.searchSummaries() : []);
  if (found.transcripts.length === 0 && summaries.length === 0) return `No archived entry matches ${shownQuery(query)}.`;
  let ranked: Promise<{ items: PoolItem[]; scores: number[] }> | undefined;
  const rank = () => {
    ranked ??= (async () => {
      const { strategy, countTokens } = options;
      const items = pool(found.transcripts, countTokens, strategy, strategy.longMessageTokens);
      const meaning = await closeness(options, query, items);
      return { items, scores: messageScores(items, query, strategy, found.hints, { kinds: found.kinds, meaning }) };
    })();
    return ranked;
  };
  const hidden = new Set<number>();
  for (let p = 1; ; p++) {
    const answer = await pageAnswer({ archive, conversationId, args, options, found, summaries, rank }, p, hidden);
    if (p >= page) return answer.text;
    if (answer.shown === undefined) return (await pageAnswer({ archive, conversationId, args, options, found, summaries, rank }, page, hidden)).text;
    if (answer.shown.length === 0) return p > 1 ? answer.text : noMoreText(query, answer.leftOut ?? 0);
    for (const i of answer.shown) hidden.add(i);
  }
}

interface PageInputs {
  archive: Archive;
  conversationId: string;
  args: MemoryReadArgs;
  options: SearchAnswerOptions;
  found: Awaited<ReturnType<typeof findCandidates>>;
  summaries: readonly SearchHit[];
  /** The candidate messages as pool items and their scores, computed once for all pages. */
  rank: () => Promise<{ items: PoolItem[]; scores: number[] }>;
}

/**
 * Vector search found entries, but no archived message shares a word with the query: say so, and point to them. Each
 * named by its line: the candidates' hits carry their messages only, so their entries are read (beside the summaries' search).
 */
async function nearestByMeaning(inputs: PageInputs): Promise<string> {
  const { args, found } = inputs;
  const [summaries, named] = await Promise.all([
    found.early ?? found.searchSummaries(),
    described(inputs.archive, inputs.conversationId, found.transcripts.slice(0, args.limit)),
  ]);
  const nearest = [...named, ...summaries].map((hit) => `- ${describeEntry(hit.entry)}`);
  return [
    `No archived message matches the words of ${shownQuery(args.query!)}. Nearest archived entries by meaning (read one with {"label": "<label>"}):`,
    ...nearest,
  ].join('\n');
}

/** Page `page` of the answer, leaving out the items in `hidden` (what the earlier pages showed). */
async function pageAnswer(inputs: PageInputs, page: number, hidden: ReadonlySet<number>): Promise<PageAnswer> {
  const { args, options, found } = inputs;
  const { strategy, budget, countTokens } = options;
  const { transcripts } = found;
  const summaries = inputs.summaries;
  const query = args.query!;
  const pageNote = page > 1 ? `, page ${page}: what the earlier pages did not show` : '';
  const intro = (shown: number, cut: boolean) =>
    `Archived messages and summaries for ${shownQuery(query)}${pageNote}, best first (${shown} passages):${cut ? EXCERPT_NOTE : ''}`;
  const nextCall = nextPageCall({ ...args, page });
  const reserve =
    countTokens(intro(99, strategy.longMessageTokens > 0)) +
    countTokens(leftOutLine(Array(LABELS_NAMED + 1).fill(transcripts[0]?.entry.label ?? summaries[0]?.entry.label ?? ''), 999, 'matching messages', nextCall)) +
    4;
  let left = budget - reserve;
  const sections: string[] = [];
  const notes: string[] = [];
  let excerpted = false;

  /** Whole entries (summaries, or segments in the earlier display) from their head, as many as the budget holds. */
  const entryBlocks = (hits: readonly SearchHit[], what: string) => {
    for (const hit of hits) {
      const head = `#${sections.length + 1} ${describeEntry(hit.entry)}`;
      const room = (left - countTokens(head) - 2) * 4;
      if (room < 200) {
        const rest = hits.slice(hits.indexOf(hit)).map((h) => h.entry.label);
        notes.push(leftOutLine(rest, rest.length, what));
        break;
      }
      const block = `${head}\n${entryExcerpt(hit.entry, Math.min(SUMMARY_TEXT_CHARS, room - 80))}`;
      left -= countTokens(block) + 1;
      sections.push(block);
    }
  };
  // Summary text leads only in the earlier order, or when no transcript matched.
  if (transcripts.length === 0 || strategy.summaries === 'first') entryBlocks(summaries, 'summaries');
  // Pointers go after the windows, but their room is kept first so that they always fit.
  let pointers = '';
  if (transcripts.length > 0 && strategy.summaries === 'pointer' && summaries.length > 0) {
    pointers = [`Summaries that match (read one with {"label": "<label>"}):`, ...summaries.map((hit) => `- ${describeEntry(hit.entry)}`)].join('\n');
    left -= countTokens(pointers) + 1;
  }
  const compose = (parts: readonly string[], partNotes: readonly string[], cut: boolean) =>
    [intro(parts.length, cut), ...parts, ...(pointers ? [pointers] : []), ...partNotes.slice(0, 1)].join('\n\n');

  let windows: WindowAnswer | undefined;
  let windowsFrom = 0;
  if (transcripts.length > 0 && strategy.display === 'segment-head') entryBlocks(transcripts, 'transcript segments');
  else if (transcripts.length > 0) {
    const { items, scores } = await inputs.rank();
    if (scores.every((score) => score === 0) && sections.length === 0) return { text: await nearestByMeaning(inputs) };
    const context: WindowContext = {
      items,
      scores,
      hidden,
      strategy,
      blockOverhead: countTokens(blockHeader(items.slice(0, 1), 99, strategy)) + 14,
      firstPassage: sections.length + 1,
      nextCall,
    };
    const size = (w: WindowAnswer) => countTokens(compose([...sections, ...w.sections], [...notes, ...(w.note ? [w.note] : [])], w.excerpted));
    windows = fittedWindows(context, left, size, budget);
    if (page > 1 && windows.shown.length === 0) return { text: noMoreText(query, windows.leftOut), shown: [], leftOut: windows.leftOut };
    windowsFrom = sections.length;
    sections.push(...windows.sections);
    if (windows.note) notes.push(windows.note);
    excerpted = windows.excerpted;
    left -= windows.tokens;
  }
  if (transcripts.length > 0 && strategy.summaries === 'excerpt') entryBlocks(summaries, 'summaries');
  // The costs above are estimates of each line; the budget is a promise, so the last passages go if they overshoot.
  let shown = sections.length;
  while (shown > 0 && countTokens(compose(sections.slice(0, shown), notes, excerpted)) > budget) shown--;
  const text = compose(sections.slice(0, shown), notes, excerpted);
  // What the page shows, after its cuts: the next page leaves out exactly these items.
  return windows === undefined ? { text } : { text, shown: windows.blocks.slice(0, Math.max(0, shown - windowsFrom)).flat(), leftOut: windows.leftOut };
}
