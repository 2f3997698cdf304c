-- ============================================================================
-- Mandates: period buckets are closed on both ends and independent of the
-- session time zone; a terminal mandate keeps its bookkeeping.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- The bucket arithmetic runs on UTC wall-clock timestamps. Adding '1 day',
-- '7 days' or '1 month' to a timestamptz is calendar arithmetic in the
-- session's TimeZone, so with any zone other than UTC the reported
-- period_resets_at moved (America/New_York: the March bucket "reset" on
-- 28 March 23:00 UTC; the week across the DST change an hour early).
-- ----------------------------------------------------------------------------
create or replace function private.mandate_period(p_period text, p_at timestamptz, out period_start timestamptz, out resets_at timestamptz)
language sql immutable set search_path = '' as $$
  select s at time zone 'UTC',
         (s + case p_period when 'daily' then interval '1 day' when 'weekly' then interval '7 days' else interval '1 month' end)
           at time zone 'UTC'
  from (select case when p_period = 'lifetime' then null
                    else date_trunc(case p_period when 'daily' then 'day' when 'weekly' then 'week' else 'month' end,
                                    p_at at time zone 'UTC') end as s) b
$$;
comment on function private.mandate_period(text, timestamptz) is 'Period bucket [period_start, resets_at) of a ceiling at an instant, in UTC whatever the session time zone; weeks start on Monday (ISO); lifetime: no bounds.';

-- ----------------------------------------------------------------------------
-- A consumption belongs to the bucket of its created_at, which is the clock of
-- the request that made it, not its commit time. Two requests either side of a
-- boundary can commit in either order, so the sum must stop at resets_at:
-- without the upper bound a request stamped 23:59:59.9 counted a consumption
-- stamped 00:00:00.1 of the next day against the old day's ceiling (refusing
-- what the ceiling allowed), and reads at an earlier instant did the same.
-- ----------------------------------------------------------------------------
create or replace function private.mandate_remaining(m private.mandates, p_at timestamptz,
  out remaining_amount bigint, out remaining_count int, out period_resets_at timestamptz)
language plpgsql stable set search_path = '' as $$
declare
  v_start timestamptz;
  v_used_amount bigint;
  v_used_count int;
begin
  select period_start, resets_at into v_start, period_resets_at from private.mandate_period(m.ceiling_period, p_at);
  select coalesce(sum(c.amount), 0), count(*) into v_used_amount, v_used_count
  from private.mandate_consumptions c
  where c.mandate_id = m.id
    and (v_start is null or (c.created_at >= v_start and c.created_at < period_resets_at));
  remaining_amount := case when m.ceiling_amount is null then null else greatest(m.ceiling_amount - v_used_amount, 0) end;
  remaining_count := case when m.ceiling_count is null then null else greatest(m.ceiling_count - v_used_count, 0) end;
end $$;
comment on function private.mandate_remaining(private.mandates, timestamptz) is 'Remaining amount and count of the bucket containing p_at, summed from the consumptions stamped inside it.';

-- ----------------------------------------------------------------------------
-- Terminal means frozen: once revoked or consumed, not even revoked_at,
-- revoked_reason, revoked_by or updated_at may be rewritten (revoked_at is what
-- orders a revocation against the consumptions before it).
-- ----------------------------------------------------------------------------
create or replace function private.mandates_refuse_update() returns trigger
language plpgsql set search_path = '' as $$
declare
  v_mutable text[] := array['status', 'revoked_at', 'revoked_reason', 'revoked_by', 'updated_at'];
begin
  if (to_jsonb(new) - v_mutable) is distinct from (to_jsonb(old) - v_mutable) then
    raise exception 'a mandate cannot be changed; issue a new one' using errcode = 'HA423';
  end if;
  if old.status in ('revoked', 'consumed') and to_jsonb(new) is distinct from to_jsonb(old) then
    raise exception 'a % mandate stays as it is', old.status using errcode = 'HA423';
  end if;
  return new;
end $$;
comment on function private.mandates_refuse_update() is 'Immutability: only status and its bookkeeping may change, and a revoked or consumed mandate does not change at all.';
