-- memfold 001: the live message table, its conversations and the compaction operations log.
-- Every table is scoped by namespace: one database can serve several isolated stores.

create table conversations (
  namespace  text        not null,
  id         text        not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  -- The seq the next appended message receives; 1-based (seq 0 is the clip-archive row).
  next_seq   bigint      not null default 1 check (next_seq >= 1),
  primary key (namespace, id)
);

create table messages (
  namespace       text        not null,
  conversation_id text        not null,
  id              text        not null,
  seq             bigint      not null check (seq >= 0),
  role            text        not null check (role in ('system', 'user', 'assistant', 'tool')),
  kind            text        not null default 'message' check (kind in ('message', 'clip_archive')),
  -- {text, toolCalls?, toolCallId?, name?}: one column so new message fields need no migration.
  content         jsonb       not null,
  created_at      timestamptz not null,
  primary key (namespace, conversation_id, id),
  -- Also the index that loads a history in seq order.
  unique (namespace, conversation_id, seq),
  -- Only the clip-archive row sits at seq 0.
  check ((kind = 'clip_archive') = (seq = 0)),
  foreign key (namespace, conversation_id) references conversations (namespace, id) on delete cascade
);

create table compaction_operations (
  id              text        primary key,
  namespace       text        not null,
  conversation_id text        not null,
  status          text        not null check (status in ('planned', 'archived', 'committed', 'rolled_back')),
  message_ids     jsonb       not null default '[]'::jsonb,
  labels          jsonb       not null default '[]'::jsonb,
  error           text,
  created_at      timestamptz not null,
  updated_at      timestamptz not null
);

create index compaction_operations_conversation_idx
  on compaction_operations (namespace, conversation_id, created_at);
