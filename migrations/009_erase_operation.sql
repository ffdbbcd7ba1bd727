-- memfold 009: erasing a conversation is journaled like a compaction. An operation of kind 'erase' is recorded
-- (status 'planned') before anything is removed; the archive is purged, then one transaction deletes every row of
-- the conversation, this operation row included. A crash in between leaves the row pending, and reconcile finishes
-- the erase (rolls it forward) instead of undoing it.

alter table compaction_operations drop constraint if exists compaction_operations_kind_check;

alter table compaction_operations
  add constraint compaction_operations_kind_check check (kind in ('compaction', 'clear_tool_outputs', 'erase'));
