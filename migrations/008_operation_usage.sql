-- memfold 008: what a compaction's summarizer calls took, written by its commit: per model that answered, calls and
-- tokens, and what they cost at the prices of the time ({"byModel": {...}, "costUsd": n | null}). A conversation's
-- summarizer cost is then the sum over its committed operations. Null on operations before this migration, on
-- tier-2 clearings and on those reconcile finished.

alter table compaction_operations add column usage jsonb;
