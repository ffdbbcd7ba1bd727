-- memfold 010: a model rate limit shared by every memfold process on this database. A provider's requests-per-minute
-- limit counts all of them (app processes and `memfold worker`s alike), so per-process spacing either wastes the
-- limit (each process given a share) or meets 429s (their unsynchronized starts collide). Each row is one limit,
-- keyed by the endpoint and a hash of its API key: `next_at` is the earliest time, by the database's clock, at which
-- the next request may start. A process reserves a start in one statement (insert or update this row to
-- greatest(next_at, now()) + the spacing) and waits until it; the machines' own clocks are never compared.

create table memfold_rate_slots (
  key     text        primary key,
  next_at timestamptz not null
);
