/** The fields of a `commitCompaction`, checked the same way by every adapter; errors name `commit.<field>`. */
import { requireKey, requireText, requireTextArray } from '../conversation/text.js';
import { requireConversationId } from '../conversation/conversation-id.js';
import { optionalCompactionMode } from './compaction-mode.js';
import { InvalidArgumentError } from '../errors.js';
import type { CommitCompaction, CompactionMode, OperationUsage } from './persistence-provider.js';

export interface CheckedCommit {
  conversationId: string;
  operationId: string;
  deleteIds: string[];
  clipArchive: string;
  labels: string[];
  /** `delete` when the commit names none. */
  mode: CompactionMode;
  usage?: OperationUsage;
  idsRecorded: boolean;
}

const isCount = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** `{ byModel: { model: { calls, inputTokens, outputTokens } }, costUsd }`, counts integers >= 0, cost >= 0 or null. */
function checkUsage(usage: unknown): OperationUsage {
  if (typeof usage !== 'object' || usage === null || Array.isArray(usage))
    throw new InvalidArgumentError('commit.usage', 'must be an object { byModel, costUsd }');
  const { byModel, costUsd } = usage as Record<string, unknown>;
  if (typeof byModel !== 'object' || byModel === null || Array.isArray(byModel)) throw new InvalidArgumentError('commit.usage.byModel', 'must be an object');
  const checked: OperationUsage['byModel'] = {};
  for (const [model, used] of Object.entries(byModel)) {
    const { calls, inputTokens, outputTokens } = (used ?? {}) as Record<string, unknown>;
    for (const [field, value] of Object.entries({ calls, inputTokens, outputTokens })) {
      if (!isCount(value)) throw new InvalidArgumentError(`commit.usage.byModel.${model}.${field}`, 'must be an integer >= 0');
    }
    checked[model] = { calls: calls as number, inputTokens: inputTokens as number, outputTokens: outputTokens as number };
  }
  if (costUsd !== null && !(typeof costUsd === 'number' && Number.isFinite(costUsd) && costUsd >= 0)) {
    throw new InvalidArgumentError('commit.usage.costUsd', 'must be a number >= 0 or null');
  }
  return { byModel: checked, costUsd: costUsd as number | null };
}

export function checkCommit(commit: CommitCompaction): CheckedCommit {
  const conversationId = requireConversationId(commit?.conversationId, 'commit.conversationId');
  const operationId = requireKey(commit.operationId, 'commit.operationId');
  const deleteIds = requireTextArray(commit.deleteIds, 'commit.deleteIds');
  const clipArchive = requireText(commit.clipArchive, 'commit.clipArchive');
  const labels = requireTextArray(commit.labels, 'commit.labels');
  const mode = optionalCompactionMode(commit.mode, 'commit.mode') ?? 'delete';
  const usage = commit.usage === undefined ? undefined : checkUsage(commit.usage);
  const idsRecorded = commit.idsRecorded ?? false;
  if (typeof idsRecorded !== 'boolean') throw new InvalidArgumentError('commit.idsRecorded', 'must be a boolean');
  return { conversationId, operationId, deleteIds, clipArchive, labels, mode, idsRecorded, ...(usage ? { usage } : {}) };
}
