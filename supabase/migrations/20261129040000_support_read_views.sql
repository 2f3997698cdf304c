-- ============================================================================
-- Read views for support (issue 30; docs/management.md, "Read views"): the
-- receipts and the consent ledger's grants and disclosures are paged per
-- merchant, newest first (management_receipts_page, management_consents_page,
-- management_disclosures_page); these indexes serve those pages.
-- ============================================================================

create index receipts_merchant_page_idx on private.receipts (merchant_id, environment, issued_at desc, id desc);
create index consent_ledger_merchant_page_idx on private.consent_ledger (merchant_id, kind, recorded_at desc, id desc)
  where kind in ('consent_granted', 'disclosure');
