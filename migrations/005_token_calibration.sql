-- memfold 005: each conversation's token calibration by the assistant's reported usage (observeUsage), kept in the
-- store so that every process, and a restarted one, counts the conversation the same way. A row holds the factor
-- memfold's counts of the conversation are multiplied by (the provider's prompt tokens over memfold's own count of the
-- context the request was built from, clamped by the compactor), and the two counts it came from. No row: factor 1.
-- A committed compaction deletes the row in its own transaction (the context it was measured on is gone).

create table token_calibrations (
  namespace        text             not null,
  conversation_id  text             not null,
  factor           double precision not null check (factor >= 1),
  prompt_tokens    integer          not null check (prompt_tokens >= 1),
  estimated_tokens integer          not null check (estimated_tokens >= 1),
  observed_at      timestamptz      not null,
  primary key (namespace, conversation_id),
  foreign key (namespace, conversation_id) references conversations (namespace, id) on delete cascade
);
