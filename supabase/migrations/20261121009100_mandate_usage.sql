-- ============================================================================
-- Mandate usage: a running total per mandate and period bucket, so a consume
-- costs the same on its first use as on its ten-thousandth.
-- Until now what remained was summed from private.mandate_consumptions under
-- the mandate's row lock; for a lifetime ceiling that was every consumption
-- the mandate ever had. The ledger stays the truth and stays append-only;
-- the total of a bucket is added to by the insert of each consumption (a
-- trigger, so it runs inside whatever RPC appends the row: mandate_consume,
-- and mandate_transaction through it, while they hold the mandate's row lock
-- taken `for update`), and reads take it by primary key.
-- It stays its own migration, after every other topic, as the in-place
-- upgrade of a database that already holds consumptions: it locks the ledger,
-- installs the trigger and backfills the totals in one transaction
-- (tests/sql/mandate-usage.test.ts upgrades such a database and compares every
-- answer). What it creates gets its grants from the rule in the platform
-- migration, like everything else.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- Totals
-- ----------------------------------------------------------------------------
create table private.mandate_usage (
  mandate_id uuid not null references private.mandates (id),
  period_start timestamptz not null,
  used_amount numeric not null default 0 check (used_amount >= 0),
  used_count int not null default 0 check (used_count >= 0),
  primary key (mandate_id, period_start)
);
comment on table private.mandate_usage is 'What each mandate has used in each period bucket: the sum of amount and the count of its consumptions stamped inside the bucket. Added to by the insert of every consumption (trigger mandate_consumptions_usage), in the same transaction and under the mandate''s row lock in the consume RPC; never written otherwise.';
comment on column private.mandate_usage.mandate_id is 'The mandate.';
comment on column private.mandate_usage.period_start is 'Start of the bucket, as private.mandate_period gives it (UTC); -infinity for a lifetime ceiling, whose one bucket has no bounds.';
comment on column private.mandate_usage.used_amount is 'Sum of the amounts (minor unit) of the bucket''s consumptions; a consumption without amount adds 0. Numeric, not bigint: a mandate without an amount ceiling takes any number of amounts of up to 2^53 - 1 each, and 1,025 of them pass bigint.';
comment on column private.mandate_usage.used_count is 'Number of consumptions in the bucket.';

-- The key of the bucket containing p_at: its start, or -infinity for lifetime.
create or replace function private.mandate_usage_bucket(p_period text, p_at timestamptz) returns timestamptz
language sql immutable set search_path = '' as $$
  select coalesce((private.mandate_period(p_period, p_at)).period_start, '-infinity'::timestamptz)
$$;
comment on function private.mandate_usage_bucket(text, timestamptz) is 'private.mandate_usage.period_start of the bucket containing p_at: the bucket''s UTC start, -infinity for lifetime.';

-- Adds a new consumption to its bucket's total. The consume RPC holds the mandate's row lock
-- (`for update`) when it appends, so totals of one mandate change one consume at a time; the upsert
-- itself is atomic for any other writer too.
create or replace function private.mandate_usage_add() returns trigger
language plpgsql set search_path = '' as $$
begin
  insert into private.mandate_usage as u (mandate_id, period_start, used_amount, used_count)
  select new.mandate_id, private.mandate_usage_bucket(m.ceiling_period, new.created_at), coalesce(new.amount, 0), 1
  from private.mandates m
  where m.id = new.mandate_id
  on conflict (mandate_id, period_start) do update
    set used_amount = u.used_amount + excluded.used_amount, used_count = u.used_count + 1;
  return null;
end $$;
comment on function private.mandate_usage_add() is 'Trigger body: adds the inserted consumption''s amount and one use to the total of its mandate''s bucket.';

-- Recomputes the totals of the given mandates (null: every mandate) from the ledger. The migration
-- backfills with it; it also repairs, since it sets each bucket to the ledger's sums.
create or replace function private.mandate_usage_backfill(p_mandate_ids uuid[]) returns int
language plpgsql set search_path = '' as $$
declare v_rows int;
begin
  insert into private.mandate_usage as u (mandate_id, period_start, used_amount, used_count)
  select c.mandate_id, private.mandate_usage_bucket(m.ceiling_period, c.created_at), coalesce(sum(c.amount), 0), count(*)
  from private.mandate_consumptions c
  join private.mandates m on m.id = c.mandate_id
  where p_mandate_ids is null or c.mandate_id = any (p_mandate_ids)
  group by 1, 2
  on conflict (mandate_id, period_start) do update
    set used_amount = excluded.used_amount, used_count = excluded.used_count;
  get diagnostics v_rows = row_count;
  return v_rows;
end $$;
comment on function private.mandate_usage_backfill(uuid[]) is 'Sets the totals of the given mandates (null: all) to the sums of their consumptions per bucket; returns the buckets written.';

-- ----------------------------------------------------------------------------
-- Maintenance and backfill
-- No consumption may be appended between the backfill's snapshot and the
-- trigger taking over: the ledger is locked against writes until this
-- migration commits (a consume waiting on it then fires the trigger).
-- ----------------------------------------------------------------------------
lock table private.mandate_consumptions in share row exclusive mode;

create trigger mandate_consumptions_usage after insert on private.mandate_consumptions
  for each row execute function private.mandate_usage_add();
comment on trigger mandate_consumptions_usage on private.mandate_consumptions is 'Adds each new consumption to its bucket''s total in private.mandate_usage (private.mandate_usage_add).';

select private.mandate_usage_backfill(null);

comment on table private.mandate_consumptions is 'Every use of a mandate; append-only (a trigger refuses update and delete). Each insert adds to its bucket''s total in private.mandate_usage, which is what remaining ceilings are computed from.';

-- ----------------------------------------------------------------------------
-- Reads: what remains comes from the bucket's total
-- ----------------------------------------------------------------------------
-- What remains of a mandate's ceiling in the bucket containing p_at (before any new consumption).
create or replace function private.mandate_remaining(m private.mandates, p_at timestamptz,
  out remaining_amount bigint, out remaining_count int, out period_resets_at timestamptz)
language plpgsql stable set search_path = '' as $$
declare
  v_start timestamptz;
  v_used_amount numeric;
  v_used_count int;
begin
  select period_start, resets_at into v_start, period_resets_at from private.mandate_period(m.ceiling_period, p_at);
  select u.used_amount, u.used_count into v_used_amount, v_used_count
  from private.mandate_usage u
  where u.mandate_id = m.id and u.period_start = coalesce(v_start, '-infinity'::timestamptz);
  remaining_amount := case when m.ceiling_amount is null then null else greatest(m.ceiling_amount - coalesce(v_used_amount, 0), 0) end;
  remaining_count := case when m.ceiling_count is null then null else greatest(m.ceiling_count - coalesce(v_used_count, 0), 0) end;
end $$;
comment on function private.mandate_remaining(private.mandates, timestamptz) is 'Remaining amount and count of the bucket containing p_at, from the bucket''s running total (one primary-key read).';
