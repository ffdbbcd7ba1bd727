-- memfold 015: pinned messages. A message appended with `pinned: true` (or pinned later) is never compacted, cleared
-- or archived away: the planner leaves it live in its place, and a compaction's commit refuses to take a pinned row
-- (a pin that arrives while a compaction runs fails that compaction, undone, instead of losing the pin). Unpinning
-- lets the next compaction take it. Rows before this migration are not pinned.

alter table messages add column pinned boolean not null default false;
