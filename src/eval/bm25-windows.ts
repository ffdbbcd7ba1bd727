/**
 * The retrieval baseline `bm25-windows`, pure: BM25 over the raw messages of the whole conversation, each
 * message scored with its neighbours' words, answered as ±1-message windows best first until the same token
 * budget memory_read has. No prompt, no compaction: what a plain search over everything said can show.
 */
import type { NewMessage } from '../conversation/types.js';
import { bm25Scores } from '../archive/ranking/bm25.js';
import { pickWindows, withNeighbourTerms, type WindowItem } from '../archive/ranking/message-windows.js';
import { searchTerms } from '../archive/ranking/search-terms.js';
import { toolTokens } from './readable.js';

/** One message a line, as `[time] speaker: text` (line breaks kept; the readable check ignores whitespace). */
export function baselineLine(message: Pick<NewMessage, 'name' | 'role' | 'content' | 'createdAt'>): string {
  return `[${message.createdAt ?? ''}] ${message.name ?? message.role}: ${message.content}`;
}

export interface Bm25WindowsIndex {
  lines: string[];
  items: WindowItem[];
  docs: string[][];
}

/** Terms and costs of a conversation's messages, computed once for all its questions. */
export function bm25WindowsIndex(messages: readonly Pick<NewMessage, 'name' | 'role' | 'content' | 'createdAt'>[], radius = 1): Bm25WindowsIndex {
  const lines = messages.map(baselineLine);
  const items = lines.map((line, position) => ({ position, tokens: toolTokens(`${line}\n`) }));
  const terms = messages.map((m) => searchTerms(`${m.name ?? ''} ${m.content}`));
  return { lines, items, docs: withNeighbourTerms(items, terms, radius) };
}

/** The baseline's answer to a question: windows best first, blocks separated by `---`, within `budget` tokens. */
export function bm25WindowsAnswer(index: Bm25WindowsIndex, question: string, budget: number, radius = 1): string {
  const scores = bm25Scores(index.docs, searchTerms(question));
  const plan = pickWindows(index.items, scores, { radius, budget, blockOverhead: 1 });
  return plan.blocks.map((block) => block.map((i) => index.lines[i]).join('\n')).join('\n---\n');
}
