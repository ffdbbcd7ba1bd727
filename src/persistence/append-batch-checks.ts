/**
 * The checks of an `append` batch that need no store: ids unique in the batch and not the
 * clip-archive's, and every tool result answering a call of the group it belongs to (the rule of
 * `conversation/tool-groups.ts`). Pure; every
 * PersistenceProvider adapter runs them, then checks the leading tool results and the ids against
 * what it has stored. Each failure is an InvalidArgumentError naming `messages[i].<field>`.
 */
import { callIdsOpenedBy, type ToolGroupMember, UNANSWERED_TOOL_RESULT_RULE, walkToolGroups } from '../conversation/tool-groups.js';
import { InvalidArgumentError } from '../errors.js';
import type { NormalizedMessage } from './normalize-new-messages.js';

/** Duplicate ids within the batch, and the clip-archive's reserved id. */
export function checkBatchIds(rows: readonly NormalizedMessage[], clipArchiveId: string): void {
  const seen = new Map<string, number>();
  rows.forEach((row, index) => {
    if (row.id === clipArchiveId) {
      throw new InvalidArgumentError(`messages[${index}].id`, `${JSON.stringify(row.id)} is reserved for the conversation's clip-archive`);
    }
    const first = seen.get(row.id);
    if (first !== undefined) throw new InvalidArgumentError(`messages[${index}].id`, `duplicates messages[${first}].id (${JSON.stringify(row.id)})`);
    seen.set(row.id, index);
  });
}

/**
 * The tool-group rule (`conversation/tool-groups.ts`) over a batch. Results after the batch's first
 * other message are checked here; the leading ones (the batch continues a stored group, as an agent
 * loop appends results) are returned for the stored check.
 */
export function leadingToolResults(rows: readonly NormalizedMessage[]): Array<{ index: number; toolCallId: string }> {
  const leading: Array<{ index: number; toolCallId: string }> = [];
  const groups = walkToolGroups('unknown');
  rows.forEach((row, index) => {
    const toolCallId = row.content.toolCallId;
    const standing = groups.standing({ role: row.role, toolCalls: row.content.toolCalls }, toolCallId);
    // normalizeNewMessages gives every tool result a toolCallId.
    if (toolCallId === undefined) return;
    if (standing === 'opener_unknown') leading.push({ index, toolCallId });
    else if (standing === 'unanswered') throw unansweredToolResult(index, toolCallId);
  });
  return leading;
}

/**
 * The stored check of the leading results: each must answer a call of `opener`, the conversation's
 * last live message that is not a tool result (undefined when there is none).
 */
export function checkLeadingToolResults(leading: ReadonlyArray<{ index: number; toolCallId: string }>, opener: ToolGroupMember | undefined): void {
  const calls = callIdsOpenedBy(opener);
  const missing = leading.find((p) => !calls.has(p.toolCallId));
  if (missing !== undefined) throw unansweredToolResult(missing.index, missing.toolCallId);
}

/** An id the conversation ever accepted is refused, naming the message that carries it. */
export function idAlreadyUsed(index: number, id: string): InvalidArgumentError {
  return new InvalidArgumentError(
    `messages[${index}].id`,
    `${JSON.stringify(id)} is already used in this conversation (ids are never reused, also after their message was archived)`,
  );
}

export function unansweredToolResult(index: number, toolCallId: string): InvalidArgumentError {
  return new InvalidArgumentError(`messages[${index}].toolCallId`, `${JSON.stringify(toolCallId)} ${UNANSWERED_TOOL_RESULT_RULE}`);
}
