-- memfold 002: find unfinished compactions fast. reconcile() runs when a store opens and looks for
-- operations still planned or archived across the whole namespace; this index keeps that a lookup.

create index compaction_operations_pending_idx
  on compaction_operations (namespace, created_at)
  where status in ('planned', 'archived');
