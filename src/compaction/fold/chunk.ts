/**
 * Step 3, pure: cut messages into chunks by a token budget, in transcript order, never splitting a
 * unit (a tool call and its results). A unit larger than the budget becomes a chunk of its own.
 * `countMessage` gets the message before it in the same chunk (undefined for a chunk's first).
 *
 * `stretch` (at least `budget`) lets the last chunk take in a small remainder: when what is left after it is
 * under half the budget and both fit `stretch` together, they are one chunk. Each chunk is one summarizer
 * request, and a request re-sends the instructions and the summary so far: 11k tokens over an 8k budget
 * made two requests where one does.
 */
import type { ConversationMessage } from '../../conversation/types.js';
import { splitAt, unitStarts } from '../../conversation/turns.js';
import { sliceWhole } from '../../conversation/well-formed-text.js';

/** How far past its budget the last chunk (or transcript segment) may go to take in a remainder under half a budget. */
export const REMAINDER_STRETCH = 1.5;

export function chunkByTokens<T extends ConversationMessage>(
  messages: readonly T[],
  budget: number,
  countMessage: (message: T, previous: T | undefined) => number,
  stretch = budget,
): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let used = 0;
  /** What the chunk before `current` holds: a remainder is measured against it. */
  let usedBefore = 0;
  // A message may cost less after another (a summarizer line leaves out a time it repeats), so a unit is
  // measured after the chunk's last message, and again from scratch when it opens a new chunk.
  const unitCost = (unit: readonly T[], previous: T | undefined) =>
    unit.reduce((sum, message, k) => sum + countMessage(message, k === 0 ? previous : unit[k - 1]), 0);
  for (const unit of splitAt(messages, unitStarts(messages))) {
    let cost = unitCost(unit, current.at(-1));
    if (current.length > 0 && used + cost > budget) {
      chunks.push(current);
      usedBefore = used;
      current = [];
      used = 0;
      cost = unitCost(unit, undefined);
    }
    current.push(...unit);
    used += cost;
  }
  if (current.length === 0) return chunks;
  const before = chunks.at(-1);
  if (before && used < budget / 2 && usedBefore + unitCost(current, before.at(-1)) <= stretch) before.push(...current);
  else chunks.push(current);
  return chunks;
}

/** Cut a text to about `maxTokens` (chars/4 when no counter applies), marking the cut. */
export function clipText(text: string, maxTokens: number, count: (text: string) => number): string {
  if (count(text) <= maxTokens) return text;
  let low = 0;
  let high = text.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (count(text.slice(0, mid)) <= maxTokens) low = mid;
    else high = mid - 1;
  }
  return `${sliceWhole(text, 0, low)}\n[... cut for the summarizer; the full text is archived verbatim]`;
}
