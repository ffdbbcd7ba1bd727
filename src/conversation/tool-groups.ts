/**
 * The tool-group rule, pure, for every module that reads message order (append, `compactHistory`'s history
 * check, the planner's units). A group is a message that is not a tool result plus the tool results
 * after it; a tool result answers a call of the assistant message that opens its group (the OpenAI
 * chat contract). Call ids may repeat across turns, so a result is matched within its group only.
 * Anything between a call and its result would let a compaction archive the call and keep the result
 * live, so a result after a later user or assistant message answers nothing.
 *
 * The clip-archive (`kind: 'clip_archive'`) stands outside the order of turns: it neither opens nor
 * closes a group.
 */

/** What the rule reads of a message. */
export interface ToolGroupMember {
  role: string;
  toolCalls?: ReadonlyArray<{ id: string }> | undefined;
  kind?: string | undefined;
}

/** Whether the message is a tool result, which joins the group before it instead of opening one. */
export function isToolResult(message: Pick<ToolGroupMember, 'role'>): boolean {
  return message.role === 'tool';
}

/** The call ids the results of a group may answer: its opener's tool calls when it is an assistant message, else none. */
export function callIdsOpenedBy(opener: ToolGroupMember | undefined): ReadonlySet<string> {
  return new Set(opener?.role === 'assistant' ? (opener.toolCalls ?? []).map((call) => call.id) : []);
}

/** How a tool result stands: answers its group's call, answers none, or its group opened before the messages seen. */
export type ToolResultStanding = 'answers' | 'unanswered' | 'opener_unknown';

/**
 * A walk over messages in order. `opener` is the message opening the group the walk starts in (the
 * last stored message that is not a tool result); `'unknown'` leaves results before the first opener
 * for the caller to check against what it has stored (`callIdsOpenedBy`).
 * `standing(message, toolCallId)` must be called for every message in order; for a message that is
 * not a tool result it opens that message's group and answers undefined.
 */
export function walkToolGroups(opener: ToolGroupMember | undefined | 'unknown' = undefined) {
  let calls: ReadonlySet<string> | undefined = opener === 'unknown' ? undefined : callIdsOpenedBy(opener);
  return {
    standing(message: ToolGroupMember, toolCallId: string | undefined): ToolResultStanding | undefined {
      if (message.kind === 'clip_archive') return undefined;
      if (!isToolResult(message)) {
        calls = callIdsOpenedBy(message);
        return undefined;
      }
      if (calls === undefined) return 'opener_unknown';
      return toolCallId !== undefined && calls.has(toolCallId) ? 'answers' : 'unanswered';
    },
  };
}

/**
 * Start indices of the groups, ascending: every message that is not a tool result, and the first
 * message. A tool result always stays with the group it belongs to, so a cut at a group start never
 * separates a call from its results.
 */
export function toolGroupStarts(messages: readonly Pick<ToolGroupMember, 'role'>[]): number[] {
  const starts: number[] = [];
  messages.forEach((message, index) => {
    if (index === 0 || !isToolResult(message)) starts.push(index);
  });
  return starts;
}

/**
 * The first call of one message that repeats an earlier call's id, or undefined. A result names its
 * call by id: two calls of one message with the same id could not be told apart.
 */
export function repeatedCallId(calls: ReadonlyArray<{ id: string }>): { index: number; first: number } | undefined {
  const seen = new Map<string, number>();
  for (const [index, call] of calls.entries()) {
    const first = seen.get(call.id);
    if (first !== undefined) return { index, first };
    seen.set(call.id, index);
  }
  return undefined;
}

/** The message of the problem every caller reports for a result that answers no call of its group. */
export const UNANSWERED_TOOL_RESULT_RULE =
  'answers no tool call of the assistant message it follows (only tool results may stand between a call and its result)';
