/**
 * memory_read's answer to a `query`: the archived messages that match, each shown with its neighbours, best
 * first, within one token budget; summaries as one line each pointing to what they cover. The archive's
 * search (BM25 leading) picks candidate transcript segments; their messages are then ranked one by one, each
 * with its neighbours' words, so the answer shows the matching message rather than the head of its segment.
 */
import type { ArchiveEntry, ConversationMessage } from '../conversation/types.js';
import { indentArchivedText, normalizeLineBreaks } from '../compaction/headers.js';
import { renderMessage } from '../compaction/transcript-format.js';
import type { Archive, SearchHit } from '../archive/archive.js';
import { bm25Scores } from '../archive/ranking/bm25.js';
import { pickWindows, withNeighbourTerms, type WindowItem } from '../archive/ranking/message-windows.js';
import { timeHints, withinHints, type TimeHint } from '../archive/ranking/query-dates.js';
import { searchTerms } from '../archive/ranking/search-terms.js';
import type { MemoryReadArgs } from './memory-read-args.js';
import type { ReadStrategy } from './memory-read-strategy.js';
import { sliceWhole } from '../conversation/well-formed-text.js';

export interface SearchAnswerOptions {
  strategy: ReadStrategy;
  /** Tokens the whole answer may take. */
  budget: number;
  countTokens: (text: string) => number;
}

/** A summary hit shows at most this much text; its label reads the rest. */
const SUMMARY_TEXT_CHARS = 2_000;
/** The query as the answer repeats it: enough to recognise, never a page. */
const QUERY_SHOWN_CHARS = 200;
/** Labels named in the closing line at most. */
const LABELS_NAMED = 5;

interface PoolItem extends WindowItem {
  message: ConversationMessage;
  segment: ArchiveEntry;
  /** 1-based rank of its segment in the archive search. */
  segmentRank: number;
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

/** The messages of the candidate segments, each once, in conversation order. */
function pool(hits: readonly SearchHit[], countTokens: (text: string) => number, style: ReadStrategy['lineStyle']): PoolItem[] {
  const seen = new Set<string>();
  const items: PoolItem[] = [];
  hits.forEach((hit, rank) => {
    for (const message of hit.entry.messages ?? []) {
      if (seen.has(message.id)) continue;
      seen.add(message.id);
      items.push({ position: message.seq, tokens: 0, message, segment: hit.entry, segmentRank: rank + 1, line: '' });
    }
  });
  items.sort((a, b) => a.position - b.position);
  // A line is costed as it shows after its neighbour; a passage's first line may add its time back (the header's margin covers it).
  items.forEach((item, i) => {
    const previous = i > 0 && items[i - 1]!.position === item.position - 1 ? items[i - 1]!.message : undefined;
    item.line = messageLine(item.message, previous, style);
    item.tokens = countTokens(`${item.line}\n`);
  });
  return items;
}

/** The lines of one passage: its first message always says its time. */
function passageLines(shown: readonly PoolItem[], style: ReadStrategy['lineStyle']): string[] {
  return shown.map((item, i) => (i === 0 ? messageLine(item.message, undefined, style) : item.line));
}

/** Each message's BM25 with its neighbours' words (normalized to the best), plus its segment's rank prior and the date boost. */
function messageScores(items: readonly PoolItem[], query: string, strategy: ReadStrategy, hints: readonly TimeHint[]): number[] {
  const terms = items.map((item) => searchTerms(`${item.message.name ?? ''} ${item.message.content}`));
  const raw = bm25Scores(withNeighbourTerms(items, terms, strategy.radius), searchTerms(query));
  const best = Math.max(0, ...raw);
  return raw.map((score, i) => {
    if (score <= 0) return 0;
    const item = items[i]!;
    const dated = hints.length > 0 && withinHints(item.message.createdAt, hints) ? strategy.dateBoost : 0;
    return score / best + strategy.segmentWeight / item.segmentRank + dated;
  });
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
  return `#${index} transcript | ${labels.join(', ')} | ${spoken ? spokenSpan(first, last) : `${first} .. ${last}`} | ${items.length} messages`;
}

function leftOutLine(labels: readonly string[], count: number, what: string): string {
  const named = labels.slice(0, LABELS_NAMED).join(', ');
  const more = labels.length > LABELS_NAMED ? ` and ${labels.length - LABELS_NAMED} more` : '';
  return `Left out for the token budget: ${count} more ${what} (in ${named}${more}). Read one in full with {"label": "<label>"}, or ask again with a larger max_tokens, a narrower query, or from/to.`;
}

export async function searchAnswer(archive: Archive, conversationId: string, args: MemoryReadArgs, options: SearchAnswerOptions): Promise<string> {
  const { strategy, budget, countTokens } = options;
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
  const hints = strategy.dateBoost > 0 ? timeHints(query) : [];
  const candidates = Math.max(strategy.candidateSegments, args.limit);
  const searchSummaries = async (): Promise<SearchHit[]> =>
    args.kind !== 'transcript' ? archive.search({ ...filter, kind: 'summary', query: archiveQuery, limit: args.limit }) : [];
  // With summaries left out beside matching messages, their search runs only when no transcript matched.
  const summariesUpFront = !wantTranscripts || strategy.summaries !== 'none';
  const [plain, outputs, dated, early] = await Promise.all([
    wantTranscripts ? archive.search({ ...filter, kind: 'transcript', query: archiveQuery, limit: candidates }) : [],
    wantTranscripts ? clearedOutputs(archive, filter, archiveQuery, candidates) : [],
    wantTranscripts && hints.length > 0 ? datedCandidates(archive, filter, archiveQuery, hints, Math.ceil(candidates / 2)) : [],
    summariesUpFront ? searchSummaries() : undefined,
  ]);
  const transcripts = uniqueByLabel([...byScore(plain, outputs), ...dated]);
  let summaries = early ?? (transcripts.length === 0 ? await searchSummaries() : []);
  if (transcripts.length === 0 && summaries.length === 0) return `No archived entry matches ${shownQuery(query)}.`;

  const intro = (shown: number) => `Archived messages and summaries for ${shownQuery(query)}, best first (${shown} passages):`;
  const reserve =
    countTokens(intro(99)) +
    countTokens(leftOutLine(Array(LABELS_NAMED + 1).fill(transcripts[0]?.entry.label ?? summaries[0]?.entry.label ?? ''), 999, 'matching messages')) +
    4;
  let left = budget - reserve;
  const sections: string[] = [];
  const notes: string[] = [];
  let passages = 0;

  /** Whole entries (summaries, or segments in the earlier display) from their head, as many as the budget holds. */
  const entryBlocks = (hits: readonly SearchHit[], what: string) => {
    for (const hit of hits) {
      const head = `#${passages + 1} ${describeEntry(hit.entry)}`;
      const room = (left - countTokens(head) - 2) * 4;
      if (room < 200) {
        const rest = hits.slice(hits.indexOf(hit)).map((h) => h.entry.label);
        notes.push(leftOutLine(rest, rest.length, what));
        break;
      }
      const block = `${head}\n${entryExcerpt(hit.entry, Math.min(SUMMARY_TEXT_CHARS, room - 80))}`;
      left -= countTokens(block) + 1;
      sections.push(block);
      passages++;
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

  if (transcripts.length > 0) {
    if (strategy.display === 'segment-head') {
      entryBlocks(transcripts, 'transcript segments');
    } else {
      const items = pool(transcripts, countTokens, strategy.lineStyle);
      const scores = messageScores(items, query, strategy, hints);
      if (scores.every((score) => score === 0) && passages === 0) {
        // Vector search found entries, but no archived message shares a word with the query: say so, and point to them.
        summaries = early ?? (await searchSummaries());
        const nearest = [...transcripts.slice(0, args.limit), ...summaries].map((hit) => `- ${describeEntry(hit.entry)}`);
        return [
          `No archived message matches the words of ${shownQuery(query)}. Nearest archived entries by meaning (read one with {"label": "<label>"}):`,
          ...nearest,
        ].join('\n');
      }
      const plan = pickWindows(items, scores, {
        radius: strategy.radius,
        budget: left,
        blockOverhead: countTokens(blockHeader(items.slice(0, 1), 99, strategy.spokenDates)) + 14,
      });
      for (const block of plan.blocks) {
        const shown = block.map((i) => items[i]!);
        sections.push([blockHeader(shown, ++passages, strategy.spokenDates), ...passageLines(shown, strategy.lineStyle)].join('\n'));
      }
      left -= plan.tokens;
      if (plan.leftOut.length > 0) {
        const labels = [...new Set(plan.leftOut.map((i) => items[i]!.segment.label))];
        notes.push(leftOutLine(labels, plan.leftOut.length, 'matching messages'));
      }
    }
  }
  if (transcripts.length > 0 && strategy.summaries === 'excerpt') entryBlocks(summaries, 'summaries');
  const answer = (n: number) => [intro(n), ...sections.slice(0, n), ...(pointers ? [pointers] : []), ...notes.slice(0, 1)].join('\n\n');
  // The costs above are estimates of each line; the budget is a promise, so the last passages go if they overshoot.
  let shown = sections.length;
  while (shown > 0 && countTokens(answer(shown)) > budget) shown--;
  return answer(shown);
}
