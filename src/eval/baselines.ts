/**
 * What a prompt holds without memfold, at the same window: whole messages chosen by token budget.
 * Pure. Tokens are counted the way the data README counts them (`referenceTokens`), so these
 * baselines reproduce its figures (truncate-oldest on LoCoMo: 0.19 / 0.37 / 0.77 at 4k / 8k / 16k).
 */
import { prefixSums, runsReuse, type PrefixReuse } from './cache-reuse.js';

export type BaselineName = 'truncate-oldest' | 'head+tail' | 'no-compaction';
export const BASELINES: readonly BaselineName[] = ['truncate-oldest', 'head+tail', 'no-compaction'];

/** Share of the window `head+tail` gives the oldest messages (the data README's 2k of 8k). */
export const HEAD_SHARE = 0.25;

/**
 * chars/4 of a message printed as `speaker: text`, rounded up per message. This is the accounting that
 * reproduces the data README's truncate-oldest figures (text alone gives 0.20 / 0.39 / 0.80; with
 * memfold's per-message overhead and photo captions 0.15 / 0.31 / 0.62).
 */
export function referenceTokens(line: string): number {
  return Math.ceil(line.length / 4);
}

export interface BaselinePrompt {
  /** Indexes of the messages the prompt holds, ascending. */
  kept: number[];
  promptTokens: number;
  /** False when the messages exceed the window and nothing was cut (no-compaction): the request fails. */
  fits: boolean;
}

/** The newest messages that fit, as one contiguous run ending with the last message. */
function newest(tokens: readonly number[], budget: number, stopAt = 0): number[] {
  const kept: number[] = [];
  let used = 0;
  for (let i = tokens.length - 1; i >= stopAt; i--) {
    if (used + tokens[i]! > budget) break;
    used += tokens[i]!;
    kept.unshift(i);
  }
  return kept;
}

function sum(tokens: readonly number[], indexes: readonly number[]): number {
  return indexes.reduce((total, i) => total + tokens[i]!, 0);
}

export function truncateOldest(tokens: readonly number[], window: number): BaselinePrompt {
  const kept = newest(tokens, window);
  return { kept, promptTokens: sum(tokens, kept), fits: true };
}

/** The oldest messages within HEAD_SHARE of the window, then the newest within the rest. */
export function headAndTail(tokens: readonly number[], window: number): BaselinePrompt {
  const headBudget = Math.floor(window * HEAD_SHARE);
  const head: number[] = [];
  let used = 0;
  for (let i = 0; i < tokens.length && used + tokens[i]! <= headBudget; i++) {
    used += tokens[i]!;
    head.push(i);
  }
  const kept = [...head, ...newest(tokens, window - headBudget, head.length)];
  return { kept, promptTokens: sum(tokens, kept), fits: true };
}

/** Every message; over the window the request cannot be made, so nothing survives (`fits: false`). */
export function noCompaction(tokens: readonly number[], window: number): BaselinePrompt {
  const all = tokens.map((_, i) => i);
  const promptTokens = sum(tokens, all);
  return promptTokens <= window ? { kept: all, promptTokens, fits: true } : { kept: [], promptTokens, fits: false };
}

export function baselinePrompt(name: BaselineName, tokens: readonly number[], window: number): BaselinePrompt {
  if (name === 'truncate-oldest') return truncateOldest(tokens, window);
  if (name === 'head+tail') return headAndTail(tokens, window);
  return noCompaction(tokens, window);
}

/** A baseline's prompt before one request, as runs of message positions (see `PromptRuns`); null when it cannot be made. */
export interface BaselineRequest {
  /** Index of the message the request answers: the prompt holds the messages before it. */
  at: number;
  runs: Array<[number, number]> | null;
  promptTokens: number;
}

/**
 * The baseline's prompt before each request: the messages `baselinePrompt(name, tokens.slice(0, at), window)` keeps,
 * for every `at` of `requests` (ascending), in O(messages + requests): the tail's start only moves forward.
 */
export function baselineRequests(name: BaselineName, tokens: readonly number[], window: number, requests: readonly number[]): BaselineRequest[] {
  const prefix = prefixSums(tokens);
  const headBudget = name === 'head+tail' ? Math.floor(window * HEAD_SHARE) : 0;
  // The messages the head holds once the conversation is long enough: it stops at the first that does not fit.
  let headEnd = 0;
  while (headEnd < tokens.length && prefix[headEnd + 1]! <= headBudget) headEnd++;
  const tailBudget = window - headBudget;
  let start = 0;
  return requests.map((at) => {
    if (name === 'no-compaction') return { at, runs: prefix[at]! <= window ? [[0, at]] : null, promptTokens: prefix[at]! };
    // The newest messages within the budget, as newest() picks them.
    while (prefix[at]! - prefix[start]! > tailBudget) start++;
    const head = Math.min(at, headEnd);
    const from = Math.max(start, head);
    const runs: Array<[number, number]> =
      from === head
        ? [[0, at]]
        : [
            [0, head],
            [from, at],
          ];
    return { at, runs: runs.filter(([a, b]) => b > a), promptTokens: prefix[head]! + prefix[at]! - prefix[from]! };
  });
}

/** Prompt-cache reuse of the baseline's prompts before `requests` (see `runsReuse`). */
export function baselineReuse(name: BaselineName, tokens: readonly number[], window: number, requests: readonly number[]): PrefixReuse {
  return runsReuse(
    baselineRequests(name, tokens, window, requests).map((r) => r.runs),
    prefixSums(tokens),
  );
}
