/**
 * The checks of `commitClearing` (tier 2 of compaction), shared by every adapter: the input's shape here, pure; the
 * rule every listed row must meet against the stored one in `clearingRowProblem`. Failures name the field
 * (`commit.cleared[2].id`).
 */
import type { ConversationMessage } from '../conversation/types.js';
import { describeValue, requireKey, requireText, requireTextArray } from '../conversation/text.js';
import { requireConversationId } from '../conversation/conversation-id.js';
import { InvalidArgumentError, MemfoldError } from '../errors.js';
import type { ClearedOutput, CommitClearing } from './persistence-provider.js';

/** The input, checked and copied: non-empty ids listed once, a placeholder text and a label for each. */
export function checkCommitClearing(commit: CommitClearing): CommitClearing {
  const conversationId = requireConversationId(commit?.conversationId, 'commit.conversationId');
  const operationId = requireKey(commit.operationId, 'commit.operationId');
  const labels = requireTextArray(commit.labels, 'commit.labels');
  if (!Array.isArray(commit.cleared)) throw new InvalidArgumentError('commit.cleared', `must be an array, got ${describeValue(commit.cleared)}`);
  const seen = new Map<string, number>();
  const cleared: ClearedOutput[] = commit.cleared.map((item, i) => {
    const at = `commit.cleared[${i}]`;
    if (typeof item !== 'object' || item === null) throw new InvalidArgumentError(at, `must be an object, got ${describeValue(item)}`);
    const id = requireKey(item.id, `${at}.id`);
    const first = seen.get(id);
    if (first !== undefined) throw new InvalidArgumentError(`${at}.id`, `duplicates commit.cleared[${first}].id (${JSON.stringify(id)})`);
    seen.set(id, i);
    return { id, content: requireText(item.content, `${at}.content`), label: requireKey(item.label, `${at}.label`) };
  });
  return { conversationId, operationId, cleared, labels };
}

/** Why a stored row cannot be cleared (the transaction then changes nothing), or undefined when it can. */
export function clearingRowProblem(row: ConversationMessage | undefined, index: number): MemfoldError | undefined {
  const field = `commit.cleared[${index}].id`;
  // A row an overlay compaction marked is archived, not live.
  if (row === undefined || row.kind === 'clip_archive' || row.role !== 'tool' || row.compactedBy !== undefined) {
    return new MemfoldError('persistence_error', `Cannot clear ${field}: not a live tool result of the conversation`, { details: { field } });
  }
  if (row.clearedOutputLabel !== undefined) {
    return new MemfoldError('persistence_error', `Cannot clear ${field}: already cleared (${row.clearedOutputLabel})`, { details: { field } });
  }
  // Pinned after the clearing planned: it stays as appended.
  if (row.pinned === true) return new MemfoldError('persistence_error', `Cannot clear ${field}: pinned`, { details: { field } });
  return undefined;
}
