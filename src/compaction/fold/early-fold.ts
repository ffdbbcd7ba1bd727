/**
 * The fold's model requests, started before the compaction's own writes. Under the conversation's lock, tier 2's
 * clearing, the journal and the archive reads take a few hundred milliseconds before the first summarizer request;
 * with a model behind the summarizer that time is added to every compaction. The requests depend only on what the
 * plan compacts, so they are sent at once from the compaction's one plan (its chunks, made before the lock); the
 * compaction then folds those same chunks, and a request it makes that an early one made with the same input is
 * answered by that one.
 * Nothing is written by the early fold: a wrong prediction (the rows changed before the lock and were planned anew)
 * costs the early requests not taken, which are stopped, and the compaction's own requests go to the model as usual.
 */
import type { Summarizer, SummarizeRequest, Summary } from '../../summarizer/summarizer.js';
import { listFrontier } from '../batches/list-frontier.js';
import type { CompactionDeps } from '../compaction-deps.js';
import { foldChunked, type ChunkedCompactable } from './fold-compactable.js';
import { newestSummary } from './fold-context.js';
import { promptOverhead } from './fold.js';

export interface EarlyFold {
  /** The summarizer the compaction folds with: the inner one, answering from an early request made with the same input. */
  summarizer: Summarizer;
  /** Stop the early requests not taken. Call it once the compaction is over. */
  stop(): void;
}

export interface EarlyFoldInput {
  /** The chunks the compaction's one plan folds (`plan/plan-run.ts`): the requests are the ones its fold will make. */
  chunks: ChunkedCompactable | undefined;
  conversationId: string;
  deps: CompactionDeps;
  /** Stops the early requests too. */
  signal?: AbortSignal;
  /**
   * The newest frontier batch's summary as the history's clip-archive shows it (`newestShownSummary`), when it says:
   * the first requests then go out at once, on it, while the archive's frontier is read beside them to confirm it
   * (a different one stops the early fold). Without it the frontier is read first.
   */
  shownPrevious?: { summary: string | undefined };
}

/**
 * Start folding the plan's chunks, for a summarizer that calls a model (one that sends instructions with each request,
 * `promptOverhead`); the offline summarizer answers at once, so for it, and when there is no tier 3, this returns
 * undefined (also when the archive cannot be read: the compaction will say why). Returns once the first requests are
 * on their way: after two turns of the event loop, so that the client has written them before the caller's next steps
 * hold the thread (PGlite runs in it): a request merely started waited for them (measured on a loaded machine: 30-180 ms
 * from the call to the server, against 5-40 ms).
 */
export async function startEarlyFold(input: EarlyFoldInput): Promise<EarlyFold | undefined> {
  const { chunks: chunked, conversationId, deps, signal, shownPrevious } = input;
  const inner = deps.summarizer;
  if (!chunked || promptOverhead(inner, deps.settings.maxSummaryTokens) === '') return undefined;

  // Each early request has its own stop: stopping the early fold stops those not taken, never one the compaction took.
  const made = new Set<Made>();
  const stopped = new AbortController();
  let running = true;
  const stop = () => {
    running = false;
    stopped.abort(new Error('early fold stopped'));
    for (const early of made) early.stop.abort(new Error('early fold request not taken'));
    made.clear();
  };
  const recording: Summarizer = forward(inner, (request) => {
    if (stopped.signal.aborted) return Promise.reject(stopped.signal.reason);
    const own = new AbortController();
    const summary = inner.summarize({ ...request, signal: signal ? AbortSignal.any([signal, own.signal]) : own.signal });
    // Taken or not, a failure here is the compaction's to see only when it takes the request.
    summary.catch(() => undefined);
    made.add({ request, summary, stop: own });
    return summary;
  });
  // The fold builds on the newest frontier batch, as the compaction's will: the one the clip-archive shows, confirmed
  // beside the first requests, or read first. Before the caller goes on: its next steps hold the thread (PGlite runs
  // in it), and the first requests should be on their way meanwhile.
  const reading = listFrontier(deps, conversationId).then(
    (frontier) => ({ summary: newestSummary(frontier) }),
    () => undefined,
  );
  const previous = shownPrevious ?? (await reading);
  if (previous === undefined) return undefined;
  if (shownPrevious) void reading.then((read) => read?.summary !== previous.summary && stop());
  const fold = { summarizer: recording, tokens: deps.tokens, maxSummaryTokens: deps.settings.maxSummaryTokens, signal: stopped.signal };
  void foldChunked({ chunked, previousSummary: previous.summary, deps, fold })
    .catch(() => undefined)
    .finally(() => (running = false));
  await nextTurn();
  await nextTurn();

  const answering = forward(inner, async (request) => {
    // The early chain asks for its next request a few promise hops after the answer both chains share.
    if (!findMade(made, request) && running) await nextTurn();
    const early = findMade(made, request);
    if (early === undefined) {
      // A fold request that was not predicted: the rest of the early chain would be wasted. (Re-summarize requests
      // are never predicted; they run beside the fold.)
      if (request.purpose === 'fold') stop();
      return inner.summarize(request);
    }
    made.delete(early);
    // Taken: from now on only the compaction's signal stops it, and the rest of the early chain with it (a fold that
    // stopped, on a failed write or an abort, makes no further request).
    request.signal?.addEventListener(
      'abort',
      () => {
        early.stop.abort(request.signal!.reason);
        stop();
      },
      { once: true },
    );
    return abortable(early.summary, request.signal);
  });
  return { summarizer: answering, stop };
}

/** An early request, with its answer and its own stop. */
interface Made {
  request: SummarizeRequest;
  summary: Promise<Summary>;
  stop: AbortController;
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** The early request made with the same input as `request`, if any (`sameInput`). */
function findMade(made: ReadonlySet<Made>, request: SummarizeRequest): Made | undefined {
  for (const early of made) if (sameInput(early.request, request)) return early;
  return undefined;
}

/**
 * Whether two requests have the same input (their signals aside). A fold's lines are compared by identity first: both
 * chains fold the same chunks and share their lines (`foldInputOf`), so the JSON of a chunk's lines is written only when
 * the lines are other objects, as after a new plan.
 */
function sameInput(a: SummarizeRequest, b: SummarizeRequest): boolean {
  const rest = (r: SummarizeRequest) => JSON.stringify({ ...r, signal: undefined, lines: undefined });
  if (a.purpose !== b.purpose || rest(a) !== rest(b)) return false;
  return a.purpose !== 'fold' || b.purpose !== 'fold' || a.lines === b.lines || JSON.stringify(a.lines) === JSON.stringify(b.lines);
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
