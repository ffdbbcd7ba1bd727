-- memfold 007: overlay (non-destructive) compaction. An overlay compaction keeps the rows it archived and marks them
-- with its operation id instead of deleting them; the live history is the unmarked rows (plus the clip-archive).
-- compaction_operations.mode records how an operation commits, so that whichever process finishes it (reconcile,
-- with its own settings) marks or deletes as the operation was planned. Operations before this migration deleted.

alter table compaction_operations
  add column mode text not null default 'delete' check (mode in ('delete', 'overlay'));

alter table messages
  -- The committed overlay operation that archived the row; an operation row with marks cannot be deleted.
  add column compacted_by text references compaction_operations (id),
  -- Only ordinary messages are compacted; the clip-archive row is replaced, never marked.
  add constraint messages_compacted_kind_check check (compacted_by is null or kind = 'message');

-- The live history in seq order: loading it, counting it and finding the last opener read only unmarked rows,
-- so a conversation's overlay rows, however many, cost nothing there.
create index messages_live_idx on messages (namespace, conversation_id, seq) where compacted_by is null;

-- The rows one operation marked: cleared when the operation is undone.
create index messages_compacted_by_idx on messages (namespace, conversation_id, compacted_by) where compacted_by is not null;
