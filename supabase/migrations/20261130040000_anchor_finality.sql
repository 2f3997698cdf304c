-- ============================================================================
-- An anchor is followed until its publication is final, not for an hour after it was confirmed
-- (issue 29, D-650). A reorg can take a root out for as long as its block can be replaced: the pass
-- re-verifies every anchor of its sink that is not final yet (pending, confirmed, and those
-- recorded before publications were kept, D-339, which it first reads back from the chain), and
-- marks one final once its block is both the sink's finality depth deep and at or below the
-- chain's finalized block; then it is never looked at again.
-- ============================================================================
alter table private.receipt_anchors
  add column final_at timestamptz,
  add constraint receipt_anchors_final_check check (final_at is null or confirmed_at is not null);
comment on column private.receipt_anchors.final_at is
  'When the root''s publication was found final (its block deep enough and finalized by the chain): no reorg can take it out, and the pass no longer follows it. Null until then, and for the local sink, whose row is the whole record.';
-- What the pass reads every minute: the anchors of a sink that are not final yet.
create index receipt_anchors_unsettled_idx on private.receipt_anchors (sink, created_at) where final_at is null;
