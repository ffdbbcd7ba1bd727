-- memfold 011: memfold's tables live in their own schema (`memfold` by default, MEMFOLD_DATABASE_SCHEMA), where an
-- application's own `conversations` or `messages` in `public` can neither block nor be mistaken for them. Every
-- connection of the store resolves names in that schema alone (search_path), so the migrations before this one create
-- their tables there on a new database, and this one finds nothing to do.
-- A store made before this migration has its tables and its `memfold_migrations` record in `public`: the runner
-- applies this migration first, before the schema has a record of its own, and it moves them (ALTER TABLE ... SET
-- SCHEMA keeps rows, indexes, constraints and foreign keys). Only the tables whose creating migration the public
-- record lists are moved: a same-named table memfold never created belongs to the application and stays.
-- Like every migration it runs in the one transaction of the run: a failure moves nothing.

do $$
declare
  target text := current_schema();
  owned record;
begin
  if target is null or target = 'public' or to_regclass('public.memfold_migrations') is null
     or to_regclass(format('%I.memfold_migrations', target)) is not null then
    return;
  end if;
  for owned in
    select t.name
    from (values ('001_init.sql', 'conversations'), ('001_init.sql', 'messages'), ('001_init.sql', 'compaction_operations'),
                 ('003_message_ids.sql', 'message_ids'), ('004_compaction_pause.sql', 'compaction_pauses'),
                 ('005_token_calibration.sql', 'token_calibrations'), ('010_rate_slots.sql', 'memfold_rate_slots'))
         as t(migration, name)
    where exists (select 1 from public.memfold_migrations m where m.name = t.migration)
      and to_regclass(format('public.%I', t.name)) is not null
  loop
    execute format('alter table public.%I set schema %I', owned.name, target);
  end loop;
  execute format('alter table public.memfold_migrations set schema %I', target);
end $$;
