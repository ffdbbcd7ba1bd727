-- memfold 003: every message id a conversation ever accepted, so an id is never used twice.
-- Rows stay when their message is archived (commit deletes only from messages): append checks here,
-- not in messages, and refuses an id that is live, archived or covered by a pending operation.
-- digest: sha256 of the message's role, text, tool calls, tool call id and name (agent/message-digest.ts);
-- null for ids recorded before this migration.

create table message_ids (
  namespace       text not null,
  conversation_id text not null,
  id              text not null,
  digest          text,
  primary key (namespace, conversation_id, id),
  foreign key (namespace, conversation_id) references conversations (namespace, id) on delete cascade
);

insert into message_ids (namespace, conversation_id, id)
  select namespace, conversation_id, id from messages where kind = 'message'
  on conflict do nothing;

-- Archived ids: the messages committed operations removed from the live table.
insert into message_ids (namespace, conversation_id, id)
  select o.namespace, o.conversation_id, archived.id
  from compaction_operations o
  cross join lateral jsonb_array_elements_text(o.message_ids) as archived(id)
  join conversations c on c.namespace = o.namespace and c.id = o.conversation_id
  where o.status = 'committed'
  on conflict do nothing;
