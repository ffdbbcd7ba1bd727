/**
 * Hooks around a compaction, set by the application: `beforeCompact` sees what is about to run and may cancel it or
 * supply the summary; `afterCompact` hears every result of a compaction that ran. Types and the two small pieces of
 * logic they need; the compactor calls them.
 */
import { InvalidArgumentError } from '../errors.js';
import type { Summarizer } from '../summarizer/summarizer.js';
import type { CompactionResult, CompactionTier } from './compaction-result.js';
import type { RunnableTierPlan } from './plan/plan-tiers.js';

/** What `beforeCompact` is told: the plan made on the history as read, before the conversation is locked. */
export interface BeforeCompactInfo {
  conversationId: string;
  /** 2: only old tool outputs will be cleared (no summary is written, so a supplied one is not used); 3: summarized. */
  tier: CompactionTier;
  /** The context's tokens now, and the trigger and target it is judged against. */
  tokensBefore: number;
  trigger: number;
  target: number;
  /** Messages the summary would cover (0 for tier 2), and tool outputs tier 2 would clear. */
  messagesToSummarize: number;
  toolOutputsToClear: number;
  /** True when the caller forced the compaction. */
  force: boolean;
  /** What the summary must keep, when the caller said (the `compact` tool's `focus`). */
  focus?: string;
}

/**
 * What `beforeCompact` may answer. Nothing (or `undefined`): run as planned. `{ cancel: true, reason? }`: skip it
 * (`skipReason: 'cancelled'`, the reason in `hook.reason`). `{ summary }`: the text of the one depth-0 batch that
 * covers every message the compaction summarizes, instead of the summarizer's (cut to `maxSummaryTokens` as any
 * summary is); re-summarization into higher depths still asks the summarizer.
 */
export type BeforeCompactDecision = { cancel: true; reason?: string } | { summary: string } | undefined | void;

export interface CompactionHooks {
  /** Called once per compaction that is about to run (not for skips); awaited. A throw fails the compaction (`hook_failed`). */
  beforeCompact?: (info: BeforeCompactInfo) => BeforeCompactDecision | Promise<BeforeCompactDecision>;
  /** Called with the result of every compaction that ran (compacted or failed), after its events; awaited. A throw is reported as a `hook_failed` event. */
  afterCompact?: (result: CompactionResult) => void | Promise<void>;
}

/** What the hook decided, checked: a decision that is none of the shapes above is refused naming the field. */
export type CheckedDecision = { kind: 'run' } | { kind: 'cancel'; reason?: string } | { kind: 'supply'; summary: string };

export function checkDecision(decision: unknown): CheckedDecision {
  if (decision === undefined || decision === null) return { kind: 'run' };
  if (typeof decision !== 'object' || Array.isArray(decision)) {
    throw new InvalidArgumentError('beforeCompact', 'must return nothing, { cancel: true, reason? } or { summary }');
  }
  const d = decision as { cancel?: unknown; reason?: unknown; summary?: unknown };
  if (d.cancel !== undefined) {
    if (d.cancel !== true) throw new InvalidArgumentError('beforeCompact.cancel', 'must be true when given');
    if (d.reason !== undefined && typeof d.reason !== 'string') throw new InvalidArgumentError('beforeCompact.reason', 'must be a string');
    return d.reason === undefined ? { kind: 'cancel' } : { kind: 'cancel', reason: d.reason };
  }
  if (d.summary !== undefined) {
    if (typeof d.summary !== 'string' || d.summary.trim() === '') throw new InvalidArgumentError('beforeCompact.summary', 'must be a non-empty string');
    return { kind: 'supply', summary: d.summary };
  }
  throw new InvalidArgumentError('beforeCompact', 'must return nothing, { cancel: true, reason? } or { summary }');
}

/** The hook's view of a tier plan. */
export function beforeCompactInfo(
  tiers: RunnableTierPlan,
  context: { conversationId: string; trigger: number; target: number; force: boolean; focus?: string },
): BeforeCompactInfo {
  const { focus, ...rest } = context;
  return {
    ...rest,
    tier: tiers.kind === 'compact' ? 3 : 2,
    tokensBefore: tiers.tokensBefore,
    messagesToSummarize: tiers.kind === 'compact' ? tiers.plan.compactable.length : 0,
    toolOutputsToClear: tiers.clearing.outputs.length,
    ...(focus !== undefined ? { focus } : {}),
  };
}

/** The id a supplied summary's batch records as its model. */
export const HOOK_SUMMARIZER_ID = 'hook';

/**
 * A summarizer that answers the fold with the supplied text (the compaction folds its messages as one chunk then) and
 * leaves re-summarization to `summarizer`. No model reads anything for the fold: its usage is 0.
 */
export function suppliedSummarizer(summarizer: Summarizer, text: string): Summarizer {
  return {
    id: HOOK_SUMMARIZER_ID,
    contextWindow: Number.POSITIVE_INFINITY,
    estimatesUsage: true,
    async summarize(request) {
      if (request.purpose === 'resummarize') return summarizer.summarize(request);
      return { text, usage: { inputTokens: 0, outputTokens: 0 }, model: HOOK_SUMMARIZER_ID };
    },
  };
}

/** The most characters a `focus` may hold: it rides in every request of the compaction, within the requests' slack. */
export const MAX_FOCUS_CHARS = 400;

/** A focus checked: a non-empty string of at most MAX_FOCUS_CHARS, trimmed; refused naming `field`. */
export function checkFocus(focus: unknown, field = 'focus'): string | undefined {
  if (focus === undefined) return undefined;
  if (typeof focus !== 'string' || focus.trim() === '') throw new InvalidArgumentError(field, 'must be a non-empty string');
  if (focus.trim().length > MAX_FOCUS_CHARS)
    throw new InvalidArgumentError(field, `must be at most ${MAX_FOCUS_CHARS} characters (got ${focus.trim().length})`);
  return focus.trim();
}

/** `summarizer` with `focus` on every request it is given. */
export function focusedSummarizer(summarizer: Summarizer, focus: string): Summarizer {
  return {
    id: summarizer.id,
    contextWindow: summarizer.contextWindow,
    ...(summarizer.estimatesUsage !== undefined ? { estimatesUsage: summarizer.estimatesUsage } : {}),
    ...(summarizer.promptOverhead ? { promptOverhead: (max: number) => summarizer.promptOverhead!(max) } : {}),
    summarize: (request) => summarizer.summarize({ ...request, focus }),
  };
}
