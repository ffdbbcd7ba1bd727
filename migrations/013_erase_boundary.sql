-- memfold 013: an erase removes what the conversation held when it was asked for, never a message appended after.
-- An erase operation records, when it is first journaled, the conversation's last seq (next_seq - 1; 0 when the
-- conversation has no row): the erase, and the reconcile that finishes it after a failure or a crash, delete only
-- messages at or below it, and keep the conversation row when later messages exist. Null on other kinds, and on
-- erases journaled before this migration (those remove every message, as they were recorded to do).

alter table compaction_operations add column erase_through_seq bigint;
