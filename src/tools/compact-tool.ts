/**
 * The compact tool: an OpenAI function tool the agent calls to compact its own conversation, with an optional `focus`
 * (what the summary must keep). Bound to one conversation when created. It answers in one of three ways: no
 * compaction needed (the context is at or under the floor), refused (too little was added since the last compaction),
 * or what the compaction did and the summary it wrote (`compact-summary.ts`). `execute` never throws.
 */
import type { z } from 'zod';
import { MAX_FOCUS_CHARS } from '../compaction/compaction-hooks.js';
import type { CompactionResult } from '../compaction/compaction-result.js';
import type { ContextUsage } from '../compaction/usage/context-usage.js';
import { requireConversationId } from '../conversation/conversation-id.js';
import { parseWithSchema } from '../conversation/schema-issues.js';
import { InvalidArgumentError } from '../errors.js';
import type { FunctionToolDefinition } from './tool-shapes.js';
import type { ToolResult } from './tool-arguments.js';
import { compactionSummaryText } from './compact-summary.js';
import { definitionOnDemand, shapedDefinitions, type ShapedDefinitions } from './tool-shapes.js';
import { argumentText, type PresentArgs, runTool, toolArgumentsObject, toolParameters } from './tool-arguments.js';
import { onDemand, zod } from '../zod-on-demand.js';

const compactArgsSchema = onDemand(() =>
  zod().strictObject(
    {
      focus: argumentText(MAX_FOCUS_CHARS)
        .describe('What the summary must keep above all (a task, names, decisions), in a sentence or two. Optional.')
        .optional(),
    },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? 'is not an argument of compact (known: focus)' : undefined) },
  ),
);

/** The compact arguments: the schema's output (`focus` trimmed by `parseCompactArgs`). */
export type CompactArgs = PresentArgs<z.output<ReturnType<typeof compactArgsSchema>>>;

/** Accepts the parsed arguments object or the JSON string a model sends; `null` means absent. */
export function parseCompactArgs(input: unknown): CompactArgs {
  const { focus } = parseWithSchema(compactArgsSchema(), toolArgumentsObject(input));
  return focus === undefined ? {} : { focus: focus.trim() };
}

export const COMPACT_DEFINITION: FunctionToolDefinition = definitionOnDemand(
  {
    name: 'compact',
    description:
      'Compact this conversation now: the oldest messages are summarized and archived (memory_read still finds them word for word), ' +
      'freeing room in the context. Call it before a long step when the context is filling up, not on every turn. ' +
      'Give `focus` to say what the summary must keep.',
  },
  () => toolParameters(compactArgsSchema()),
);

/** What the tool needs of memfold: the context's figures, a forced compaction, and what the last compaction left. */
export interface CompactToolTarget {
  usage(conversationId: string): Promise<Pick<ContextUsage, 'tokens' | 'targetTokens'>>;
  compact(conversationId: string, options: { force: true; focus?: string }): Promise<CompactionResult>;
  /** The context's tokens right after the conversation's last compaction seen by this process, if any. */
  tokensAfterLastCompaction(conversationId: string): number | undefined;
}

export interface CompactToolLimits {
  /** At or under this many tokens the tool answers that no compaction is needed (`memfold.compactTool`: the `targetTokens` setting, what a compaction comes down to). */
  floorTokens: number;
  /** Fewer tokens than this added since the last compaction, and the tool refuses (`memfold.compactTool`: the `minFreedTokens` setting); 0 never refuses. */
  minNewTokens: number;
}

/** `definition`: the Chat Completions definition, frozen; `definitionFor(format, { strict })`: each API's shape (`tool-shapes.ts`). */
export interface CompactTool extends ShapedDefinitions {
  definition: FunctionToolDefinition;
  execute(args: unknown): Promise<ToolResult>;
}

const n = (value: number) => value.toLocaleString('en-US');

function requireCount(value: unknown, field: string): number {
  if (typeof value !== 'number' || !(Number.isInteger(value) && value >= 0))
    throw new InvalidArgumentError(field, `must be an integer >= 0 (got ${String(value)})`);
  return value;
}

/** What a compaction did, for the model: in a sentence or two, with the way back to what was archived. */
export function describeCompaction(result: CompactionResult, focus: string | undefined): ToolResult {
  if (result.status === 'failed') {
    return {
      ok: false,
      output: `Compaction failed (${result.failureCode}); nothing was lost, the context is unchanged.`,
      error: result.error ?? String(result.failureCode),
    };
  }
  if (result.status === 'skipped') {
    const why =
      result.skipReason === 'busy'
        ? 'another compaction of this conversation is running'
        : result.skipReason === 'cancelled'
          ? `the application cancelled it${result.hook?.reason ? ` (${result.hook.reason})` : ''}`
          : result.skipReason === 'too_little_to_free' || result.skipReason === 'nothing_to_compact'
            ? 'too little of the context can be compacted: it is mostly the newest messages, which stay'
            : `it was skipped (${result.skipReason})`;
    return { ok: true, output: `No compaction: ${why}. Continue the task.` };
  }
  const done =
    result.tier === 2 && result.batches.length === 0
      ? `cleared ${n(result.toolOutputsCleared)} old tool outputs (archived word for word)`
      : `summarized ${n(result.archivedMessages)} older messages into ${result.batches.length} ${result.batches.length === 1 ? 'batch' : 'batches'}` +
        (result.toolOutputsCleared > 0 ? ` and cleared ${n(result.toolOutputsCleared)} old tool outputs` : '');
  const kept = focus !== undefined ? ` The summary was asked to keep: ${focus}.` : '';
  // The summary itself, so the agent knows what now stands for the archived messages.
  const summary = result.batches.length > 0 ? `\n\nThe summary written:\n${compactionSummaryText(result.batches)}` : '';
  return {
    ok: true,
    output:
      `Compacted: ${done}; the context went from ${n(result.tokensBefore)} to ${n(result.tokensAfter)} tokens.${kept} ` +
      `Continue the task without asking again for what was said; memory_read searches or reads the archived messages.${summary}`,
  };
}

/** `limits`, checked; a function is asked each time the tool runs, after `usage` (settings that may change meanwhile). */
function checkedLimits(limits: CompactToolLimits): CompactToolLimits {
  return { floorTokens: requireCount(limits.floorTokens, 'floorTokens'), minNewTokens: requireCount(limits.minNewTokens, 'minNewTokens') };
}

export function createCompactTool(target: CompactToolTarget, conversationId: string, limits: CompactToolLimits | (() => CompactToolLimits)): CompactTool {
  requireConversationId(conversationId);
  const fixed = typeof limits === 'function' ? undefined : checkedLimits(limits);
  // Limits refused when the tool is made, also those read again at each run.
  if (typeof limits === 'function') checkedLimits(limits());
  return {
    definition: COMPACT_DEFINITION,
    definitionFor: shapedDefinitions(COMPACT_DEFINITION),
    execute: (input) =>
      runTool('compact', input, parseCompactArgs, async (args: CompactArgs) => {
        const { tokens } = await target.usage(conversationId);
        const { floorTokens, minNewTokens } = fixed ?? checkedLimits((limits as () => CompactToolLimits)());
        if (tokens <= floorTokens) {
          return { ok: true, output: `No compaction needed: the context holds ${n(tokens)} tokens, at or under ${n(floorTokens)}. Continue the task.` };
        }
        const after = target.tokensAfterLastCompaction(conversationId);
        if (after !== undefined && tokens - after < minNewTokens) {
          const added = Math.max(0, tokens - after);
          return {
            ok: false,
            output: `Refused: ${n(added)} tokens were added since the last compaction; another compaction needs at least ${n(minNewTokens)} new tokens. Continue the task.`,
            error: 'too_soon',
          };
        }
        const result = await target.compact(conversationId, { force: true, ...(args.focus !== undefined ? { focus: args.focus } : {}) });
        return describeCompaction(result, args.focus);
      }),
  };
}
