-- ============================================================================
-- Grants: the RPCs are for the service's own database role only
-- Every RPC is security definer, so whoever may execute it acts with the
-- owner's rights. On a Supabase deployment PostgREST would expose public.*
-- to the anon and authenticated roles; nobody but the owner (and the
-- service_role where it exists) may execute them, now or in later migrations.
-- ============================================================================

revoke execute on all functions in schema public from public;
alter default privileges in schema public revoke execute on functions from public;
revoke all on all tables in schema private from public;

do $$
declare
  v_role text;
begin
  foreach v_role in array array['anon', 'authenticated'] loop
    if exists (select 1 from pg_roles where rolname = v_role) then
      execute format('revoke execute on all functions in schema public from %I', v_role);
      execute format('alter default privileges in schema public revoke execute on functions from %I', v_role);
    end if;
  end loop;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    execute 'grant execute on all functions in schema public to service_role';
    execute 'alter default privileges in schema public grant execute on functions to service_role';
  end if;
end $$;
