/** What the crash test tells its child: where the stores are and where to die. */
import type { CompactionSettings } from '../../../src/compaction/compaction-settings.js';

export type KillPoint =
  /** After planning: the operation is recorded `planned`, nothing written yet. */
  | { point: 'plan' }
  /** After the n-th summarizer call returned (between fold calls, or between re-summarization folds). */
  | { point: 'fold'; n: number }
  /** After the n-th archive write (depth-0 batches with transcripts, then each re-summarized parent). */
  | { point: 'write'; n: number }
  /** After the n-th mark of children under a new parent. */
  | { point: 'mark'; n: number }
  /** `ms` into the commit transaction (the test database makes the commit sleep). */
  | { point: 'commit'; ms: number }
  /** Right after the commit, before the result is returned. */
  | { point: 'after-commit' }
  /** At a random moment, `ms` after the compaction started. */
  | { point: 'timer'; ms: number };

export interface CrashJob {
  databaseUrl: string;
  lanceDir: string;
  conversationId: string;
  settings: Partial<CompactionSettings>;
  killAt: KillPoint;
}
