-- ============================================================================
-- Anchors are recorded when their root is published, and confirmed later (issue 29, D-515).
-- An anchor row is written before its transaction is sent, so no root reaches a chain that no
-- anchor holds (no orphan roots); it reads pending until the publication has its confirmations,
-- and again pending while a reorg is repaired. A live grant's mandate.granted is sent when the
-- anchor holding its capture's receipt is first confirmed (supabase/domains/receipts.sql).
-- ============================================================================
alter table private.receipt_anchors
  add column confirmed_at timestamptz,
  add column first_confirmed_at timestamptz,
  add column publication jsonb,
  add constraint receipt_anchors_publication_check check (publication is null or jsonb_typeof(publication) = 'object'),
  add constraint receipt_anchors_confirmed_check check (confirmed_at is null or first_confirmed_at is not null);
-- Every anchor written before was recorded only once confirmed (D-339).
update private.receipt_anchors set confirmed_at = created_at, first_confirmed_at = created_at;
comment on column private.receipt_anchors.confirmed_at is
  'When the root''s publication last reached its confirmations; null while pending (not yet confirmed, or taken out by a reorg and being repaired).';
comment on column private.receipt_anchors.first_confirmed_at is
  'When the root was first confirmed: mandate.granted of the grants it holds was sent then, once.';
comment on column private.receipt_anchors.publication is
  'What the sink needs to follow its publication up (a chain: nonce, fees, every transaction hash sent, the block hash); null locally.';
create index receipt_anchors_open_idx on private.receipt_anchors (created_at) where confirmed_at is null;
create index receipt_anchors_confirmed_idx on private.receipt_anchors (confirmed_at) where confirmed_at is not null;
