/**
 * The retrieval baseline `bm25-sentences`, pure: BM25 over the sentences of every raw message, each sentence
 * scored with its neighbours' words inside its message, answered best first as the sentence with one
 * neighbouring sentence of its message (the next, or the one before when it is the last), within the same token
 * budget memory_read has. Long messages (LongMemEval's assistant replies run to 900 tokens) then cost a few
 * sentences instead of a whole window. No prompt, no compaction.
 *
 * Sentences come from `Intl.Segmenter` (granularity 'sentence'): Unicode's sentence boundary rules (UAX #29),
 * built into Node through ICU, so no sentence splitter of our own and no dependency; its segments keep their
 * trailing whitespace, so adjacent sentences joined are the message's own text.
 */
import type { NewMessage } from '../conversation/types.js';
import { bm25Scores } from '../archive/ranking/bm25.js';
import { withNeighbourTerms, type WindowItem } from '../archive/ranking/message-windows.js';
import { searchTerms } from '../archive/ranking/search-terms.js';
import { sentencesOf } from '../archive/ranking/sentences.js';

export { sentencesOf };

type Shown = Pick<NewMessage, 'name' | 'role' | 'content' | 'createdAt'>;

export interface Bm25SentencesIndex {
  /** Each sentence's text, message (index) and place in its message. */
  sentences: Array<{ text: string; message: number; place: number }>;
  /** Sentence indexes of each message. */
  byMessage: number[][];
  headers: string[];
  docs: string[][];
}

/** `[time] speaker: `, the line a message's shown sentences follow. */
function header(message: Shown): string {
  return `[${message.createdAt ?? ''}] ${message.name ?? message.role}: `;
}

/** Sentences and their terms, computed once for all a conversation's questions. */
export function bm25SentencesIndex(messages: readonly Shown[]): Bm25SentencesIndex {
  const sentences: Bm25SentencesIndex['sentences'] = [];
  const byMessage: number[][] = [];
  const items: WindowItem[] = [];
  const terms: string[][] = [];
  messages.forEach((message, m) => {
    const own: number[] = [];
    sentencesOf(message.content).forEach((text, place) => {
      own.push(sentences.length);
      sentences.push({ text, message: m, place });
      // A gap of one position between messages: neighbours never cross a message's edge.
      items.push({ position: sentences.length + m, tokens: 0 });
      terms.push(searchTerms(text));
    });
    byMessage.push(own);
  });
  return { sentences, byMessage, headers: messages.map(header), docs: withNeighbourTerms(items, terms, 1) };
}

/** Tokens a shown piece may cost, rounded up with room for the ` … ` between runs and the block separator. */
const cost = (text: string, extra: number) => Math.ceil((text.length + extra) / 4);

/** The baseline's answer to a question: messages best first, blocks separated by `---`, within `budget` tokens (chars/4). */
export function bm25SentencesAnswer(index: Bm25SentencesIndex, question: string, budget: number): string {
  const scores = bm25Scores(index.docs, searchTerms(question));
  const order = scores
    .map((score, i) => ({ score, i }))
    .filter((c) => c.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i);
  const shown = new Set<number>();
  const messageRank = new Map<number, number>();
  let used = 0;
  for (const { i } of order) {
    const { message, place } = index.sentences[i]!;
    const own = index.byMessage[message]!;
    const neighbour = place + 1 < own.length ? own[place + 1]! : place > 0 ? own[place - 1]! : undefined;
    const fresh = [i, ...(neighbour === undefined ? [] : [neighbour])].filter((j) => !shown.has(j));
    if (fresh.length === 0) continue;
    const price = fresh.reduce((s, j) => s + cost(index.sentences[j]!.text, 3), 0) + (messageRank.has(message) ? 0 : cost(index.headers[message]!, 5));
    if (used + price > budget) continue;
    used += price;
    for (const j of fresh) shown.add(j);
    if (!messageRank.has(message)) messageRank.set(message, messageRank.size);
  }
  const blocks = [...messageRank.entries()].sort((a, b) => a[1] - b[1]);
  return blocks
    .map(([message]) => {
      let text = '';
      let previous = -2;
      for (const j of index.byMessage[message]!) {
        if (!shown.has(j)) continue;
        text += previous === j - 1 || text === '' ? index.sentences[j]!.text : ` … ${index.sentences[j]!.text}`;
        previous = j;
      }
      return `${index.headers[message]}${text.trim()}`;
    })
    .join('\n---\n');
}
