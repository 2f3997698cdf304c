-- ============================================================================
-- Disclosures (disclose-claims, revoke-consent): what a merchant asked to know
-- about a person who is present, recorded in the consent ledger in the same
-- transaction that issues it; the documents disclosed behind the consent
-- token, kept only while the token can open them; revocation of a disclosure
-- or of the person's whole consent with the merchant.
-- ============================================================================

-- The birth date read from a verified document: the source of derived age claims (age_over_N), which
-- never leaves the service itself.

-- ----------------------------------------------------------------------------
-- Disclosed documents
-- ----------------------------------------------------------------------------
create table private.disclosed_documents (
  disclosure_id uuid not null references private.consent_ledger (id),
  claim_key text not null check (length(claim_key) between 1 and 64),
  document jsonb not null check (jsonb_typeof(document) = 'object'),
  expires_at timestamptz not null,
  primary key (disclosure_id, claim_key)
);
comment on table private.disclosed_documents is 'Documents a disclosure put behind its consent token, as they were disclosed (the SD-JWT carries their digest). Deleted when the token is revoked, the consent ends or the token expires (the consent-retention cron).';
comment on column private.disclosed_documents.disclosure_id is 'The disclosure (its consent ledger entry).';
comment on column private.disclosed_documents.claim_key is 'The requested field the document answers.';
comment on column private.disclosed_documents.document is 'The document record as disclosed.';
comment on column private.disclosed_documents.expires_at is 'When the consent token stops opening it.';
create index disclosed_documents_expiry_idx on private.disclosed_documents (expires_at);

create unique index consent_ledger_audit_id_idx on private.consent_ledger (merchant_id, (payload ->> 'zk_proof_audit_id'))
  where kind = 'disclosure';
