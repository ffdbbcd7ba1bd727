/**
 * memory_read's answer to a `query`: the archived messages that match, each shown with its neighbours, best
 * first, within one token budget; summaries as one line each pointing to what they cover. The archive's
 * search (BM25 leading) picks candidate transcript segments; their messages are then ranked one by one, each
 * with its neighbours' words, so the answer shows the matching message rather than the head of its segment.
 */
import type { ArchiveEntry, ConversationMessage } from '../conversation/types.js';
import { indentArchivedText, normalizeLineBreaks } from '../compaction/format/headers.js';
import { renderMessage } from '../compaction/format/transcript-format.js';
import type { Archive, SearchHit } from '../archive/archive.js';
import { bm25Scores } from '../archive/ranking/bm25.js';
import { pickWindows, withNeighbourTerms, type WindowItem } from '../archive/ranking/message-windows.js';
import { relativeTimeHints, timeHints, withinHints, type TimeHint } from '../archive/ranking/query-dates.js';
import { searchTerms } from '../archive/ranking/search-terms.js';
import { sentencesOf } from '../archive/ranking/sentences.js';
import { questionIntent, statesPreference } from '../archive/ranking/question-intent.js';
import type { MemoryReadArgs } from './memory-read-args.js';
import type { ReadStrategy } from './memory-read-strategy.js';
import { sliceWhole } from '../conversation/well-formed-text.js';

export interface SearchAnswerOptions {
  strategy: ReadStrategy;
  /** Tokens the whole answer may take. */
  budget: number;
  countTokens: (text: string) => number;
  /** When the question is asked (ISO): relative times it names ("last Saturday") resolve against it. */
  at?: string;
  /** The conversation's live history, ranked beside the archive (its messages at `strategy.liveWeight`). */
  live?: () => Promise<readonly ConversationMessage[]>;
}

/** The label of the live history's passages: not an archive label (nothing to read by it). */
export const LIVE_LABEL = 'live history';

/** A summary hit shows at most this much text; its label reads the rest. */
const SUMMARY_TEXT_CHARS = 2_000;
/** The query as the answer repeats it: enough to recognise, never a page. */
const QUERY_SHOWN_CHARS = 200;
/** Said once when a long message is shown by its sentences. */
const EXCERPT_NOTE = ` (${'…'} marks where a long message is cut: read its passage's label for the whole)`;
/** Words of the user's statements of likes and plans, searched beside a recommendation question's own. */
const PREFERENCE_WORDS = 'prefer love enjoy favorite usually like';
/** Unused budget worth a second plan of the windows. */
const SLACK_TOKENS = 40;
/** Labels named in the closing line at most. */
const LABELS_NAMED = 5;

interface PoolItem extends WindowItem {
  message: ConversationMessage;
  segment: ArchiveEntry;
  /** 1-based rank of its segment in the archive search. */
  segmentRank: number;
  /** What this item shows: its whole message, or one sentence of a long message. */
  text: string;
  /** Place of this item's sentence in its message, and the message's count of items (1: shown whole). */
  part: number;
  parts: number;
  /** The whole message's line (items shown whole only). */
  line: string;
}

const KIND_WORDS: Record<ArchiveEntry['kind'], string> = { summary: 'summary', transcript: 'transcript', tool_output: 'tool output' };

export function describeEntry(entry: ArchiveEntry): string {
  const what = entry.kind === 'summary' ? `summary depth ${entry.depth}` : KIND_WORDS[entry.kind];
  return `${what} | ${entry.label} | ${entry.start} .. ${entry.end} | ${entry.count} ${entry.kind === 'summary' && entry.depth > 0 ? 'batches' : 'messages'}`;
}

/** An entry's text under its hit line, cut to `maxChars` with a pointer to its label. */
export function entryExcerpt(entry: ArchiveEntry, maxChars: number): string {
  if (entry.content.length <= maxChars) return indentArchivedText(entry.content);
  return `${indentArchivedText(sliceWhole(entry.content, 0, maxChars))}\n[... cut; read label ${entry.label} for the full text]`;
}

function shownQuery(query: string): string {
  return JSON.stringify(query.length > QUERY_SHOWN_CHARS ? `${sliceWhole(query, 0, QUERY_SHOWN_CHARS)}…` : query);
}

/** `2023-05-08 13:56`: the time as a line shows it (the passage header has the day in words). */
function shortTime(iso: string): string {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(iso) ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : iso;
}

/** A speaker's name inside one line of framing: no whitespace, brackets or control characters. */
function speaker(message: ConversationMessage): string {
  return (message.name ?? message.role).replace(/[\s\p{C}[\]:]+/gu, '_') || message.role;
}

/**
 * One message as a passage shows it. Compact: `[time] speaker: text` with the time only when it differs from the
 * previous line's; tool traffic keeps the transcript form. Continuation lines are indented by two spaces, and the
 * whole is indented under the passage header, so no archived text starts a line of framing.
 */
function messageLine(message: ConversationMessage, previous: ConversationMessage | undefined, style: ReadStrategy['lineStyle']): string {
  if (style === 'transcript' || message.role === 'tool' || (message.toolCalls?.length ?? 0) > 0) return indentArchivedText(renderMessage(message));
  const time = previous && previous.createdAt === message.createdAt ? '' : `[${shortTime(message.createdAt)}] `;
  return indentArchivedText(`${time}${speaker(message)}: ${normalizeLineBreaks(message.content).split('\n').join('\n  ')}`);
}

/** An excerpt's cut, at either end of the sentences shown. */
const CUT = '…';

/** The line of a long message's shown sentences (`part`..`last` of its `parts`), its cuts marked. */
function excerptLine(
  message: ConversationMessage,
  text: string,
  cutBefore: boolean,
  cutAfter: boolean,
  previous: ConversationMessage | undefined,
  style: ReadStrategy['lineStyle'],
): string {
  const content = `${cutBefore ? `${CUT} ` : ''}${text.trim()}${cutAfter ? ` ${CUT}` : ''}`;
  return messageLine({ ...message, content }, previous, style);
}

/**
 * The messages of the candidate segments, each once, in conversation order: a message shown whole is one item; a
 * long one (over `longTokens` as a line) is one item per sentence, so it is scored and shown by its matching
 * sentences and never takes the budget whole. Items follow each other by position, across messages too: a short
 * message's neighbour in a long reply is that reply's nearest sentence.
 */
function pool(hits: readonly SearchHit[], countTokens: (text: string) => number, style: ReadStrategy['lineStyle'], longTokens: number): PoolItem[] {
  const seen = new Set<string>();
  const messages: Array<{ message: ConversationMessage; segment: ArchiveEntry; segmentRank: number }> = [];
  hits.forEach((hit, rank) => {
    for (const message of hit.entry.messages ?? []) {
      if (seen.has(message.id)) continue;
      seen.add(message.id);
      messages.push({ message, segment: hit.entry, segmentRank: rank + 1 });
    }
  });
  messages.sort((a, b) => a.message.seq - b.message.seq);
  const items: PoolItem[] = [];
  let position = 0;
  messages.forEach(({ message, segment, segmentRank }, m) => {
    const before = messages[m - 1]?.message;
    const consecutive = before !== undefined && before.seq === message.seq - 1;
    // A gap between messages that are not neighbours, so no window crosses it.
    position += consecutive ? 1 : 2;
    // A line is costed as it shows after its neighbour; a passage's first line may add its time back (the header's margin covers it).
    const line = messageLine(message, consecutive ? before : undefined, style);
    const tokens = countTokens(`${line}\n`);
    const plain = message.role !== 'tool' && (message.toolCalls?.length ?? 0) === 0;
    const sentences = longTokens > 0 && tokens > longTokens && plain ? sentencesOf(message.content) : [];
    if (sentences.length < 2) {
      items.push({ position, tokens, message, segment, segmentRank, text: message.content, part: 0, parts: 1, line });
      return;
    }
    const groupTokens = countTokens(`${excerptLine(message, '', true, true, undefined, style)}\n`);
    sentences.forEach((text, part) => {
      if (part > 0) position++;
      items.push({ position, tokens: countTokens(text), group: m, groupTokens, message, segment, segmentRank, text, part, parts: sentences.length, line: '' });
    });
  });
  return items;
}

/** Whether a passage shows part of a long message only. */
function cutIn(shown: readonly PoolItem[]): boolean {
  const count = new Map<string, number>();
  for (const item of shown) if (item.parts > 1) count.set(item.message.id, (count.get(item.message.id) ?? 0) + 1);
  return shown.some((item) => item.parts > 1 && count.get(item.message.id)! < item.parts);
}

/** The lines of one passage: a message shown whole as its line, a long one as its shown sentences; the first line always says its time. */
function passageLines(shown: readonly PoolItem[], style: ReadStrategy['lineStyle']): string[] {
  const lines: string[] = [];
  let previous: ConversationMessage | undefined;
  for (let i = 0; i < shown.length; ) {
    const item = shown[i]!;
    let j = i + 1;
    while (j < shown.length && shown[j]!.message.id === item.message.id) j++;
    const run = shown.slice(i, j);
    const last = run[run.length - 1]!;
    if (item.parts === 1) lines.push(previous === undefined ? messageLine(item.message, undefined, style) : item.line);
    else lines.push(excerptLine(item.message, run.map((r) => r.text).join(''), item.part > 0, last.part < last.parts - 1, previous, style));
    previous = item.message;
    i = j;
  }
  return lines;
}

/** The session a message belongs to: the caller's, or else its day. */
function sessionOf(message: ConversationMessage): string {
  return message.sessionId ?? message.createdAt.slice(0, 10);
}

/**
 * Each item's BM25 with its neighbours' words (normalized to the best), plus its segment's rank prior and the date
 * boost; then shaped by what the question asks (`questionIntent`): the user's own statements of likes and plans
 * for a recommendation, later messages for the value as it stands now, and for a count, each session's items
 * after its best one discounted, so the answer reaches across sessions.
 */
function messageScores(items: readonly PoolItem[], query: string, strategy: ReadStrategy, hints: readonly TimeHint[]): number[] {
  const terms = items.map((item) => searchTerms(`${item.message.name ?? ''} ${item.text}`));
  const wanted = searchTerms(query);
  const raw = bm25Scores(withNeighbourTerms(items, terms, strategy.radius), wanted);
  const best = Math.max(0, ...raw);
  const intent = questionIntent(query);
  const preference = intent.preference ? strategy.preferenceBoost : 0;
  const recency = intent.latest ? strategy.recencyBoost : 0;
  const own = intent.self ? strategy.selfBoost : 0;
  const firstSeq = items[0]?.message.seq ?? 0;
  const span = Math.max(1, (items[items.length - 1]?.message.seq ?? 0) - firstSeq);
  const scores = raw.map((score, i) => {
    const item = items[i]!;
    const stated = preference > 0 && item.message.role === 'user' && statesPreference(item.text) ? preference : 0;
    if (score <= 0) return stated;
    const dated = hints.length > 0 && withinHints(item.message.createdAt, hints) ? strategy.dateBoost : 0;
    const later = recency * ((item.message.seq - firstSeq) / span);
    // The user's own words must match: a neighbour's words alone do not make a message theirs.
    const said = own > 0 && item.message.role === 'user' && terms[i]!.some((t) => wanted.includes(t)) ? own : 0;
    const weight = item.segment.label === LIVE_LABEL ? strategy.liveWeight : 1;
    return weight * (score / best + strategy.segmentWeight / item.segmentRank + dated + stated + later + said);
  });
  return intent.aggregate && strategy.sessionSpread > 0 ? spreadAcrossSessions(items, scores, strategy.sessionSpread) : scores;
}

/** Scores divided by 1 + spread × (how many better items its session already has), so every session's best comes early. */
function spreadAcrossSessions(items: readonly PoolItem[], scores: readonly number[], spread: number): number[] {
  const seen = new Map<string, number>();
  const out = [...scores];
  scores
    .map((score, i) => ({ score, i }))
    .filter((c) => c.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .forEach(({ score, i }) => {
      const session = sessionOf(items[i]!.message);
      const before = seen.get(session) ?? 0;
      seen.set(session, before + 1);
      out[i] = score / (1 + spread * before);
    });
  return out;
}

/** Candidate segments from the times the query names, after the plain candidates (each segment once). */
async function datedCandidates(
  archive: Archive,
  filter: { conversationId: string; from?: string; to?: string },
  query: string,
  hints: readonly TimeHint[],
  limit: number,
): Promise<SearchHit[]> {
  const ranged = hints.filter((h) => h.month === undefined);
  const lists = await Promise.all(
    ranged.map((h) => {
      // The hint narrows the caller's own from/to, never widens it.
      const from = new Date(h.fromMs).toISOString();
      const to = new Date(h.toMs).toISOString();
      return archive.search({
        ...filter,
        kind: 'transcript',
        query,
        limit,
        from: filter.from && filter.from > from ? filter.from : from,
        to: filter.to && filter.to < to ? filter.to : to,
      });
    }),
  );
  return lists.flat();
}

/**
 * Tool outputs cleared from the live history (tier 2 of compaction) that no transcript segment holds yet: the only
 * verbatim copy of those outputs, searched beside the segments. Superseded ones are left out (their segment has them).
 */
async function clearedOutputs(archive: Archive, filter: { conversationId: string }, query: string, limit: number): Promise<SearchHit[]> {
  const hits = await archive.search({ ...filter, kind: 'tool_output', query, limit });
  return hits.filter((hit) => hit.entry.parentLabel === undefined);
}

/** Two hit lists of one query merged best first (stable: on a tie, the first list's hit leads). */
function byScore(first: readonly SearchHit[], second: readonly SearchHit[]): SearchHit[] {
  if (second.length === 0) return [...first];
  return [...first.map((hit, i) => ({ hit, i })), ...second.map((hit, i) => ({ hit, i: first.length + i }))]
    .sort((a, b) => b.hit.score - a.hit.score || a.i - b.i)
    .map((x) => x.hit);
}

function uniqueByLabel(hits: readonly SearchHit[]): SearchHit[] {
  const seen = new Set<string>();
  return hits.filter((hit) => !seen.has(hit.entry.label) && seen.add(hit.entry.label) !== undefined);
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** "Mon 8 May 2023 13:56 .. 14:10 UTC", or with both days when the span crosses midnight; ISO when a time does not parse. */
export function spokenSpan(startIso: string, endIso: string): string {
  const start = new Date(startIso);
  const end = new Date(endIso);
  if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) return `${startIso} .. ${endIso}`;
  const day = (d: Date) => `${DAYS[d.getUTCDay()]} ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
  const clock = (d: Date) => d.toISOString().slice(11, 16);
  const sameDay = startIso.slice(0, 10) === endIso.slice(0, 10);
  return `${day(start)} ${clock(start)} .. ${sameDay ? '' : `${day(end)} `}${clock(end)} UTC`;
}

function blockHeader(items: readonly PoolItem[], index: number, spoken: boolean): string {
  const labels = [...new Set(items.map((item) => item.segment.label))];
  const first = items[0]!.message.createdAt;
  const last = items[items.length - 1]!.message.createdAt;
  const messages = new Set(items.map((item) => item.message.id)).size;
  return `#${index} transcript | ${labels.join(', ')} | ${spoken ? spokenSpan(first, last) : `${first} .. ${last}`} | ${messages} messages`;
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

interface Candidates {
  transcripts: SearchHit[];
  /** Summaries searched up front (undefined: searched only when needed, by `searchSummaries`). */
  early: SearchHit[] | undefined;
  searchSummaries: () => Promise<SearchHit[]>;
  hints: TimeHint[];
}

/** The archive searches of one query: transcript segments (plain, from the times it names, cleared outputs) and summaries. */
async function findCandidates(archive: Archive, conversationId: string, args: MemoryReadArgs, options: SearchAnswerOptions): Promise<Candidates> {
  const { strategy } = options;
  const query = args.query!;
  const archiveQuery = strategy.cleanQuery ? searchTerms(query, { stem: false }).join(' ') || query : query;
  const filter = {
    conversationId,
    ...(args.depth !== undefined ? { depth: args.depth } : {}),
    ...(args.from !== undefined ? { from: args.from } : {}),
    ...(args.to !== undefined ? { to: args.to } : {}),
  };
  // Transcripts are depth 0: a depth above 0 asks for summaries only.
  const wantTranscripts = args.kind !== 'summary' && (args.depth === undefined || args.depth === 0);
  const hints =
    strategy.dateBoost > 0 ? [...timeHints(query), ...(options.at !== undefined && strategy.relativeDates ? relativeTimeHints(query, options.at) : [])] : [];
  const intent = questionIntent(query);
  const candidates = Math.max(intent.aggregate || intent.preference ? strategy.aggregateCandidates : strategy.candidateSegments, args.limit);
  // A recommendation draws candidates from where the user spoke of likes and plans on the question's topic too.
  const likesQuery = intent.preference && strategy.preferenceBoost > 0 ? `${archiveQuery} ${PREFERENCE_WORDS}` : undefined;
  const searchSummaries = async (): Promise<SearchHit[]> =>
    args.kind !== 'transcript' ? archive.search({ ...filter, kind: 'summary', query: archiveQuery, limit: args.limit }) : [];
  // With summaries left out beside matching messages, their search runs only when no transcript matched.
  const summariesUpFront = !wantTranscripts || strategy.summaries !== 'none';
  const [plain, outputs, dated, early, likes] = await Promise.all([
    wantTranscripts ? archive.search({ ...filter, kind: 'transcript', query: archiveQuery, limit: candidates }) : [],
    wantTranscripts ? clearedOutputs(archive, filter, archiveQuery, candidates) : [],
    wantTranscripts && hints.length > 0 ? datedCandidates(archive, filter, archiveQuery, hints, Math.ceil(candidates / 2)) : [],
    summariesUpFront ? searchSummaries() : undefined,
    wantTranscripts && likesQuery ? archive.search({ ...filter, kind: 'transcript', query: likesQuery, limit: Math.ceil(candidates / 2) }) : [],
  ]);
  const archived = uniqueByLabel([...byScore(plain, outputs), ...dated, ...likes]);
  const live = wantTranscripts && options.live && strategy.liveWeight > 0 ? await liveHit(options.live, conversationId, args) : undefined;
  return { transcripts: live ? [...archived, live] : archived, early, searchSummaries, hints };
}

/**
 * The live history as one more candidate, after the archive's: its conversation messages (no clip-archive, no note)
 * within the call's from/to. An agent asking memory_read gets every matching message, wherever it lives now.
 */
async function liveHit(load: () => Promise<readonly ConversationMessage[]>, conversationId: string, args: MemoryReadArgs): Promise<SearchHit | undefined> {
  const messages = (await load()).filter(
    (m) =>
      (m.kind === undefined || m.kind === 'message') &&
      (args.from === undefined || m.createdAt >= args.from) &&
      (args.to === undefined || m.createdAt <= args.to),
  );
  if (messages.length === 0) return undefined;
  const span = { start: messages[0]!.createdAt, end: messages[messages.length - 1]!.createdAt };
  const entry: ArchiveEntry = {
    kind: 'transcript',
    label: LIVE_LABEL,
    conversationId,
    depth: 0,
    ...span,
    count: messages.length,
    content: '',
    sourceIds: messages.map((m) => m.id),
    operationId: '',
    messages: [...messages],
  };
  return { entry, score: 0 };
}

/** The passages of one window plan: sections numbered from `firstPassage`, the left-out note, the items shown. */
interface WindowAnswer {
  sections: string[];
  note: string | undefined;
  excerpted: boolean;
  shown: number[];
  leftOut: number;
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
    return [blockHeader(shown, context.firstPassage + b, strategy.spokenDates), ...passageLines(shown, strategy.lineStyle)].join('\n');
  });
  let note: string | undefined;
  if (plan.leftOut.length > 0) {
    const labels = [...new Set(plan.leftOut.map((i) => items[i]!.segment.label))].filter((label) => label !== LIVE_LABEL);
    note = leftOutLine(labels, new Set(plan.leftOut.map((i) => items[i]!.message.id)).size, 'matching messages', context.nextCall);
  }
  const shown = plan.blocks.flat().map((i) => visible[i]!);
  return { sections, note, excerpted, shown, leftOut: plan.leftOut.length, tokens: plan.tokens };
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

/** The windows of page `page`: the pages before it planned in turn, each hiding what it showed from the next. */
function pagedWindows(context: WindowContext, page: number, room: number, size: (answer: WindowAnswer) => number, budget: number): WindowAnswer {
  const hidden = new Set<number>();
  for (let p = 1; ; p++) {
    const answer = fittedWindows({ ...context, hidden }, room, size, budget);
    if (p >= page || answer.shown.length === 0) return answer;
    for (const i of answer.shown) hidden.add(i);
  }
}

export async function searchAnswer(archive: Archive, conversationId: string, args: MemoryReadArgs, options: SearchAnswerOptions): Promise<string> {
  const { strategy, budget, countTokens } = options;
  const query = args.query!;
  const page = args.page ?? 1;
  const { transcripts, early, searchSummaries, hints } = await findCandidates(archive, conversationId, args, options);
  let summaries = early ?? (transcripts.length === 0 ? await searchSummaries() : []);
  if (transcripts.length === 0 && summaries.length === 0) return `No archived entry matches ${shownQuery(query)}.`;

  const pageNote = page > 1 ? `, page ${page}: what the earlier pages did not show` : '';
  const intro = (shown: number, cut: boolean) =>
    `Archived messages and summaries for ${shownQuery(query)}${pageNote}, best first (${shown} passages):${cut ? EXCERPT_NOTE : ''}`;
  const nextCall = nextPageCall(args);
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

  if (transcripts.length > 0 && strategy.display === 'segment-head') entryBlocks(transcripts, 'transcript segments');
  else if (transcripts.length > 0) {
    const items = pool(transcripts, countTokens, strategy.lineStyle, strategy.longMessageTokens);
    const scores = messageScores(items, query, strategy, hints);
    if (scores.every((score) => score === 0) && sections.length === 0) {
      // Vector search found entries, but no archived message shares a word with the query: say so, and point to them.
      summaries = early ?? (await searchSummaries());
      const nearest = [...transcripts.slice(0, args.limit), ...summaries].map((hit) => `- ${describeEntry(hit.entry)}`);
      return [
        `No archived message matches the words of ${shownQuery(query)}. Nearest archived entries by meaning (read one with {"label": "<label>"}):`,
        ...nearest,
      ].join('\n');
    }
    const context: WindowContext = {
      items,
      scores,
      hidden: new Set(),
      strategy,
      blockOverhead: countTokens(blockHeader(items.slice(0, 1), 99, strategy.spokenDates)) + 14,
      firstPassage: sections.length + 1,
      nextCall,
    };
    const size = (w: WindowAnswer) => countTokens(compose([...sections, ...w.sections], [...notes, ...(w.note ? [w.note] : [])], w.excerpted));
    const windows = pagedWindows(context, page, left, size, budget);
    if (page > 1 && windows.shown.length === 0) return `No more archived messages match ${shownQuery(query)}: the earlier pages showed them all.`;
    sections.push(...windows.sections);
    if (windows.note) notes.push(windows.note);
    excerpted = windows.excerpted;
    left -= windows.tokens;
  }
  if (transcripts.length > 0 && strategy.summaries === 'excerpt') entryBlocks(summaries, 'summaries');
  // The costs above are estimates of each line; the budget is a promise, so the last passages go if they overshoot.
  let shown = sections.length;
  while (shown > 0 && countTokens(compose(sections.slice(0, shown), notes, excerpted)) > budget) shown--;
  return compose(sections.slice(0, shown), notes, excerpted);
}
