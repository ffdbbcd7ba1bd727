/**
 * Prompt-cache reuse, pure: how many of each request's leading tokens are the previous request's. A provider
 * caches the longest token prefix it has seen: the leading messages both prompts share whole, then, given a
 * `countText`, the opening both share of the first message that differs (same role, name, tool call id and tool
 * calls, its text changed past some point: a clip-archive whose oldest batches stayed). Without `countText`, and
 * for prompts given as runs of positions (the baselines, whose prompts only ever hold whole original messages),
 * whole messages only.
 */
import type { NewMessage } from '../conversation/types.js';
import { sliceWhole } from '../conversation/well-formed-text.js';

/** What a request sends of a message: the fields compared. */
export type PromptMessage = Pick<NewMessage, 'role' | 'content' | 'name' | 'toolCalls' | 'toolCallId'>;

export interface PrefixReuse {
  /** Tokens of the leading messages each compared prompt shares with the prompt before it, summed. */
  reusedTokens: number;
  /** Tokens of the compared prompts: every request's after the first (the first has nothing to reuse). */
  promptTokens: number;
}

/** The requests of a replay: one before each assistant message, at its index (the prompt holds what came before). */
export function assistantTurns(messages: ReadonlyArray<Pick<NewMessage, 'role'>>): number[] {
  return messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : []));
}

/** Same role, name, content, tool calls and tool call id. */
export function sameMessage(a: PromptMessage, b: PromptMessage): boolean {
  if (a.role !== b.role || a.content !== b.content || a.name !== b.name || a.toolCallId !== b.toolCallId) return false;
  const calls = a.toolCalls ?? [];
  const others = b.toolCalls ?? [];
  return (
    calls.length === others.length &&
    calls.every((call, i) => {
      const other = others[i]!;
      return (
        call.id === other.id && call.type === other.type && call.function.name === other.function.name && call.function.arguments === other.function.arguments
      );
    })
  );
}

/** The opening two texts share. */
export function commonTextPrefix(a: string, b: string): string {
  let n = 0;
  while (n < a.length && n < b.length && a.charCodeAt(n) === b.charCodeAt(n)) n++;
  // Never split a surrogate pair: a counter may read half a character differently.
  return sliceWhole(a, 0, n);
}

/** The tokens the first differing messages share at their start: 0 unless only their texts differ. */
function sharedOpening(previous: PromptMessage | undefined, current: PromptMessage | undefined, countText: (text: string) => number): number {
  if (!previous || !current) return 0;
  if (!sameMessage(previous, { ...current, content: previous.content })) return 0;
  const opening = commonTextPrefix(previous.content, current.content);
  return opening.length > 0 ? countText(opening) : 0;
}

/** How many leading messages `current` shares with `previous`. */
export function sharedPrefix(previous: readonly PromptMessage[], current: readonly PromptMessage[]): number {
  let n = 0;
  while (n < previous.length && n < current.length && sameMessage(previous[n]!, current[n]!)) n++;
  return n;
}

/** The share of prompt tokens reused; null when no prompt was compared. */
export function reuseShare(reuse: PrefixReuse): number | null {
  return reuse.promptTokens > 0 ? reuse.reusedTokens / reuse.promptTokens : null;
}

export interface ReuseTracker<M extends PromptMessage> {
  /** The prompt of the next request; kept as a copy, so the caller may change its array afterwards. */
  add(prompt: readonly M[]): void;
  total(): PrefixReuse;
}

/**
 * Reuse over requests given one at a time, each compared with the one before; `count` gives a message's tokens,
 * `countText` (optional) a text's, for the shared opening of the first message that differs.
 */
export function reuseTracker<M extends PromptMessage>(count: (message: M) => number, countText?: (text: string) => number): ReuseTracker<M> {
  let previous: readonly M[] | undefined;
  const total: PrefixReuse = { reusedTokens: 0, promptTokens: 0 };
  return {
    add(prompt) {
      if (previous) {
        const shared = sharedPrefix(previous, prompt);
        prompt.forEach((m, i) => {
          const tokens = count(m);
          total.promptTokens += tokens;
          if (i < shared) total.reusedTokens += tokens;
          else if (i === shared && countText) total.reusedTokens += Math.min(tokens, sharedOpening(previous![i], m, countText));
        });
      }
      previous = [...prompt];
    },
    total: () => ({ ...total }),
  };
}

/** Reuse over a sequence of prompts. */
export function prefixReuse<M extends PromptMessage>(
  prompts: Iterable<readonly M[]>,
  count: (message: M) => number,
  countText?: (text: string) => number,
): PrefixReuse {
  const tracker = reuseTracker(count, countText);
  for (const prompt of prompts) tracker.add(prompt);
  return tracker.total();
}

/**
 * A prompt made of the conversation's own messages, as runs of positions: `[start, end)`, in prompt order. The
 * baselines' prompts take this shape (at most two runs), which makes comparing them O(runs) instead of O(messages).
 */
export type PromptRuns = ReadonlyArray<readonly [start: number, end: number]>;

/** The runs of positions `current` shares with `previous` from their start (the same position is the same message). */
export function sharedRuns(previous: PromptRuns, current: PromptRuns): Array<[number, number]> {
  const shared: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  let a = previous[0]?.[0] ?? 0;
  let b = current[0]?.[0] ?? 0;
  while (i < previous.length && j < current.length) {
    if (a >= previous[i]![1]) {
      i++;
      a = previous[i]?.[0] ?? 0;
      continue;
    }
    if (b >= current[j]![1]) {
      j++;
      b = current[j]?.[0] ?? 0;
      continue;
    }
    if (a !== b) break;
    const end = Math.min(previous[i]![1], current[j]![1]);
    const last = shared.at(-1);
    if (last && last[1] === a) last[1] = end;
    else shared.push([a, end]);
    a = end;
    b = end;
  }
  return shared;
}

/**
 * Reuse over prompts given as runs of positions; `prefix[k]` is the tokens of the first k messages. A null
 * prompt is a request that cannot be made (over the window): it is not counted and leaves the cache as it was.
 */
export function runsReuse(prompts: Iterable<PromptRuns | null>, prefix: readonly number[]): PrefixReuse {
  const tokens = (runs: PromptRuns) => runs.reduce((sum, [start, end]) => sum + prefix[end]! - prefix[start]!, 0);
  const total: PrefixReuse = { reusedTokens: 0, promptTokens: 0 };
  let previous: PromptRuns | undefined;
  for (const prompt of prompts) {
    if (!prompt) continue;
    if (previous) {
      total.promptTokens += tokens(prompt);
      total.reusedTokens += tokens(sharedRuns(previous, prompt));
    }
    previous = prompt;
  }
  return total;
}

/** Running sums: `prefix[k]` = tokens of messages 0..k-1. */
export function prefixSums(tokens: readonly number[]): number[] {
  const prefix = [0];
  for (const t of tokens) prefix.push(prefix.at(-1)! + t);
  return prefix;
}
