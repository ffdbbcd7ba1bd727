/** The fields of a `commitCompaction`, checked the same way by every adapter; errors name `commit.<field>`. */
import { requireKey, requireText, requireTextArray } from '../conversation/text.js';
import { optionalCompactionMode } from './compaction-mode.js';
import type { CommitCompaction, CompactionMode } from './persistence-provider.js';

export interface CheckedCommit {
  conversationId: string;
  operationId: string;
  deleteIds: string[];
  clipArchive: string;
  labels: string[];
  /** `delete` when the commit names none. */
  mode: CompactionMode;
}

export function checkCommit(commit: CommitCompaction): CheckedCommit {
  const conversationId = requireKey(commit?.conversationId, 'commit.conversationId');
  const operationId = requireKey(commit.operationId, 'commit.operationId');
  const deleteIds = requireTextArray(commit.deleteIds, 'commit.deleteIds');
  const clipArchive = requireText(commit.clipArchive, 'commit.clipArchive');
  const labels = requireTextArray(commit.labels, 'commit.labels');
  const mode = optionalCompactionMode(commit.mode, 'commit.mode') ?? 'delete';
  return { conversationId, operationId, deleteIds, clipArchive, labels, mode };
}
