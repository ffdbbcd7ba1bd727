-- memfold 014: each conversation's compaction settings overrides (its window, target, trigger, scope, mode...), kept in
-- the store so that every process sharing it (the application, `memfold compact`, `usage`, `memfold worker`, `memfold
-- mcp`) compacts the conversation with the same settings. `settings` holds only the keys that were set, by their
-- setting names (`compactionSettingsInputSchema`); each process resolves them over its own base settings. The
-- compactor validates them; the store keeps a JSON object. No foreign key to `conversations`: settings may be given
-- before the first message, and an erase (which removes the conversation's content) leaves them; `memfold config
-- <id> --reset` clears them.

create table conversation_settings (
  namespace        text        not null,
  conversation_id  text        not null,
  settings         jsonb       not null check (jsonb_typeof(settings) = 'object'),
  updated_at       timestamptz not null,
  primary key (namespace, conversation_id)
);
