-- memfold 004: the loop guard's state, kept in the store so that every process sees it.
-- A row holds the compactions in a row that left the conversation's context at or over the trigger (or
-- failed), the trigger they were counted against, and since when automatic compaction is paused (null while
-- it is not). No row: no streak. compaction/loop-guard.ts decides; the store only keeps what it decided.

create table compaction_pauses (
  namespace       text        not null,
  conversation_id text        not null,
  streak          integer     not null check (streak >= 1),
  trigger_tokens  integer     not null check (trigger_tokens >= 1),
  paused_at       timestamptz,
  updated_at      timestamptz not null,
  primary key (namespace, conversation_id),
  foreign key (namespace, conversation_id) references conversations (namespace, id) on delete cascade
);
