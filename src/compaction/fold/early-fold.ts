/**
 * The fold's model requests, started before the compaction's own writes. Under the conversation's lock, tier 2's
 * clearing, the journal and the archive reads take a few hundred milliseconds before the first summarizer request;
 * with a model behind the summarizer that time is added to every compaction. The requests depend only on what the
 * plan compacts, so they are predicted from the plan made before the lock and sent at once; the compaction then folds
 * as always, and a request it makes that an early one made with the same input is answered by that one.
 * Nothing is written by the early fold: a wrong prediction (the rows changed, a label was taken) costs the early
 * requests not taken, which are stopped, and the compaction's own requests go to the model as usual.
 */
import type { ConversationMessage } from '../../conversation/types.js';
import type { Summarizer, SummarizeRequest, Summary } from '../../summarizer/summarizer.js';
import { clearedOutputs, toolOutputEntries, withClearedOutputs } from '../clearing/clear-tool-outputs.js';
import { listFrontier, newestSummary, type CompactionDeps, type ConversationCounts } from '../compaction-deps.js';
import { chunkCompactable, foldChunked, type ChunkedCompactable } from './fold-compactable.js';
import { promptOverhead } from './fold.js';
import { clearingOf, planAfterClearing, type RunnableTierPlan } from '../plan/plan-tiers.js';

export interface EarlyFold {
  /** The summarizer the compaction folds with: the inner one, answering from an early request made with the same input. */
  summarizer: Summarizer;
  /** Stop the early requests not taken. Call it once the compaction is over. */
  stop(): void;
}

/**
 * The chunks tier 3 will fold when `tiers` runs on `history`, pure: its plan, or after tier 2 the plan made again on
 * the history with each cleared output's placeholder (labels as chosen when none is taken) and each output tier 3
 * folds uncleared read as its fold placeholder. Undefined when no tier 3.
 */
export function predictFoldChunks(
  tiers: RunnableTierPlan,
  history: readonly ConversationMessage[],
  conversationId: string,
  deps: Pick<CompactionDeps, 'tokens' | 'inputBudget' | 'stretchBudget' | 'settings'>,
  counts: ConversationCounts,
): ChunkedCompactable | undefined {
  if (tiers.kind !== 'compact') return undefined;
  let plan = tiers.plan;
  if (tiers.clearing.outputs.length > 0) {
    const { kept, folded } = clearingOf(tiers);
    const outputs = kept.outputs.map((o) => o.message);
    const entries = toolOutputEntries(outputs, { conversationId, operationId: '' });
    const tokensOf = new Map(outputs.map((m) => [m.id, counts.message(m)]));
    const cleared = withClearedOutputs(
      history,
      clearedOutputs(entries, (id) => tokensOf.get(id)!),
    );
    const replanned = planAfterClearing(cleared, folded, deps.settings, counts);
    if (replanned.kind === 'skip') return undefined;
    plan = replanned;
  }
  return chunkCompactable(plan.compactable, plan.recent, deps, counts.context);
}

/**
 * Start folding `tiers`'s predicted chunks, for a summarizer that calls a model (one that sends instructions with
 * each request, `promptOverhead`); the offline summarizer answers at once, so for it, and when there is no tier 3,
 * this returns undefined (also when the archive cannot be read: the compaction will say why). `signal` stops the early
 * requests too. Returns once the first requests are sent.
 */
export async function startEarlyFold(
  tiers: RunnableTierPlan,
  history: readonly ConversationMessage[],
  conversationId: string,
  deps: CompactionDeps,
  counts: ConversationCounts,
  signal?: AbortSignal,
): Promise<EarlyFold | undefined> {
  const inner = deps.summarizer;
  if (promptOverhead(inner, deps.settings.maxSummaryTokens) === '') return undefined;
  // Only a speedup: a prediction that cannot be made leaves the compaction to fold as usual (and to fail, if it must).
  let chunked: ChunkedCompactable | undefined;
  try {
    chunked = predictFoldChunks(tiers, history, conversationId, deps, counts);
  } catch {
    return undefined;
  }
  if (!chunked) return undefined;

  // Each early request has its own stop: stopping the early fold stops those not taken, never one the compaction took.
  const made = new Map<string, { summary: Promise<Summary>; stop: AbortController }>();
  const stopped = new AbortController();
  let running = true;
  const stop = () => {
    running = false;
    stopped.abort(new Error('early fold stopped'));
    for (const early of made.values()) early.stop.abort(new Error('early fold request not taken'));
    made.clear();
  };
  const recording: Summarizer = forward(inner, (request) => {
    if (stopped.signal.aborted) return Promise.reject(stopped.signal.reason);
    const own = new AbortController();
    const summary = inner.summarize({ ...request, signal: signal ? AbortSignal.any([signal, own.signal]) : own.signal });
    // Taken or not, a failure here is the compaction's to see only when it takes the request.
    summary.catch(() => undefined);
    made.set(requestKey(request), { summary, stop: own });
    return summary;
  });
  // The fold builds on the newest frontier batch, as the compaction's will. Read before the caller goes on: its
  // next steps hold the thread (PGlite runs in it), and the first requests should be on their way meanwhile.
  const before = await listFrontier(deps, conversationId).catch(() => undefined);
  if (!before) return undefined;
  const previous = newestSummary(before);
  const fold = { summarizer: recording, tokens: deps.tokens, maxSummaryTokens: deps.settings.maxSummaryTokens, signal: stopped.signal };
  void foldChunked(chunked, previous, deps, fold)
    .catch(() => undefined)
    .finally(() => (running = false));

  const answering = forward(inner, async (request) => {
    const key = requestKey(request);
    // The early chain asks for its next request a few promise hops after the answer both chains share.
    if (!made.has(key) && running) await new Promise((resolve) => setImmediate(resolve));
    const early = made.get(key);
    if (early === undefined) {
      // A fold request that was not predicted: the rest of the early chain would be wasted. (Re-summarize requests
      // are never predicted; they run beside the fold.)
      if (request.purpose === 'fold') stop();
      return inner.summarize(request);
    }
    made.delete(key);
    // Taken: from now on only the compaction's signal stops it.
    request.signal?.addEventListener('abort', () => early.stop.abort(request.signal!.reason), { once: true });
    return abortable(early.summary, request.signal);
  });
  return { summarizer: answering, stop };
}

/** A request's input, without its signal: what makes two requests the same. */
function requestKey(request: SummarizeRequest): string {
  return JSON.stringify({ ...request, signal: undefined });
}

/** `inner` with another `summarize`. */
function forward(inner: Summarizer, summarize: Summarizer['summarize']): Summarizer {
  return {
    id: inner.id,
    contextWindow: inner.contextWindow,
    ...(inner.estimatesUsage !== undefined ? { estimatesUsage: inner.estimatesUsage } : {}),
    ...(inner.promptOverhead ? { promptOverhead: (maxOutputTokens: number) => inner.promptOverhead!(maxOutputTokens) } : {}),
    summarize,
  };
}

/** `promise`, or the signal's reason as soon as it aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
