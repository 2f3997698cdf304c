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


comment on table private.mandate_consumptions is 'Every use of a mandate; append-only (a trigger refuses update and delete). Each insert adds to its bucket''s total in private.mandate_usage, which is what remaining ceilings are computed from.';
