-- memfold 012: the archive this live store belongs to. Every process sharing the store must archive to the same place:
-- a process that archived elsewhere would leave clip-archives pointing at batches the others cannot open, and their
-- memory_read would find nothing. The first process to open the store with its archive records the archive here: its
-- location as that process saw it (an absolute folder, or the object-store URI), and the random id the archive keeps
-- inside itself (archive/lancedb/lancedb-archive-identity.ts), which is what is compared: the same archive reached
-- through another path (a symlink, another mount) has the same id; another archive at the same path has not.
-- One row: `singleton` is always true. Replaced only when an operator adopts a moved archive.

create table archive_binding (
  singleton  boolean     primary key default true check (singleton),
  location   text        not null,
  archive_id text        not null,
  bound_at   timestamptz not null default now()
);
