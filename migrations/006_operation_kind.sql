-- memfold 006: what an operation does. 'compaction' summarizes and archives messages, then deletes them from the
-- live table; 'clear_tool_outputs' archives old tool outputs verbatim, then replaces each live row's text by a
-- placeholder naming its archive label (the row stays). Reconcile finishes or undoes each kind its own way.
-- Every operation recorded before this migration was a compaction.

alter table compaction_operations
  add column kind text not null default 'compaction' check (kind in ('compaction', 'clear_tool_outputs'));
