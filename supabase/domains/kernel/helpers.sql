-- ============================================================================
-- Helpers every domain uses: public ids, the append-only guard.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

create or replace function private.refuse_change() returns trigger
language plpgsql set search_path = '' as $$
begin
  raise exception '% rows are append-only', tg_table_name using errcode = 'HA423';
end $$;
comment on function private.refuse_change() is 'Trigger body for append-only tables.';

-- ----------------------------------------------------------------------------
-- Helpers
-- ----------------------------------------------------------------------------
create or replace function private.public_id(p_prefix text, p_id uuid) returns text
language sql immutable set search_path = '' as $$ select p_prefix || replace(p_id::text, '-', '') $$;
comment on function private.public_id(text, uuid) is 'Opaque prefixed id as responses show it (mdt_…, cns_…).';
