-- ============================================================================
-- Helpers every domain uses: public ids, the append-only guard, keyset pages.
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

-- What the minute cron's sweeps (device_challenges_sweep, person_passkey_sweep, owner_console_sweep,
-- agent_sign_in_sweep) delete stopped counting before this: a day before now, which keeps a recent row
-- readable for support (D-350, D-610, D-702, D-730, D-751).
create or replace function private.sweep_cutoff(p_now timestamptz) returns timestamptz
language sql stable set search_path = '' as $$ select p_now - interval '1 day' $$;
comment on function private.sweep_cutoff(timestamptz) is 'A day before now: what stopped counting before it, the minute cron''s sweeps delete.';

-- keyset_page(rows, limit) -> {data, more, last}: every list's page (shared/kernel/cursor.ts). `rows`
-- is a jsonb array of {item, at, id} in page order, read with limit + 1 rows so that the extra one says
-- whether another page follows; `last` is then the (at, id) the next page starts after. `at` keeps
-- the instant's whole precision, so no row that shares the last row's millisecond is skipped.
create or replace function private.keyset_page(p_rows jsonb, p_limit int) returns jsonb
language sql immutable parallel safe set search_path = '' as $$
  select jsonb_build_object(
    'data', coalesce((select jsonb_agg(r -> 'item' order by n) from jsonb_array_elements(p_rows) with ordinality as e(r, n)
                      where n <= p_limit), '[]'::jsonb),
    'more', jsonb_array_length(p_rows) > p_limit,
    'last', case when jsonb_array_length(p_rows) > p_limit
                 then jsonb_build_object('at', p_rows -> (p_limit - 1) -> 'at', 'id', p_rows -> (p_limit - 1) -> 'id') end)
$$;
comment on function private.keyset_page(jsonb, int) is 'One page of limit + 1 rows {item, at, id}, newest first: its items, whether more follow, and the cursor row.';
