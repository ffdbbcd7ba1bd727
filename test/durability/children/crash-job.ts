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
  | { point: 'timer'; ms: number }
  /** Tier 2: its operation is recorded `planned` (the `clear` stage starts), nothing written yet. */
  | { point: 'clear' }
  /** `ms` into the transaction that replaces the cleared outputs by placeholders (the test database makes it sleep). */
  | { point: 'clear-commit'; ms: number }
  /** Right after that transaction, before tier 3 plans. */
  | { point: 'after-clear-commit' };

export interface CrashJob {
  databaseUrl: string;
  lanceDir: string;
  conversationId: string;
  settings: Partial<CompactionSettings>;
  killAt: KillPoint;
}
