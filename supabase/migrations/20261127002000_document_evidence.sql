-- ============================================================================
-- Document evidence (issue 15): identity documents are eMRTDs whose chip data
-- the server verified by passive authentication (docs/documents.md), never a
-- device's say-so. The trust list holds the Country Signing CAs a Document
-- Signer must chain to, per environment: sandbox CSCAs the CLI makes, and the
-- CSCAs of ICAO master lists the operator imports. The self-attested document
-- records of before are dropped: they proved nothing, and nothing may count
-- them (they existed in the sandbox only).
-- ============================================================================

create table private.document_trust_anchors (
  environment text not null check (environment in ('test', 'live')),
  fingerprint text not null check (fingerprint ~ '^[0-9a-f]{64}$'),
  subject text not null,
  key_identifier text check (key_identifier ~ '^[0-9a-f]+$'),
  country text,
  certificate bytea not null,
  not_before timestamptz not null,
  not_after timestamptz not null,
  source text not null check (source in ('sandbox', 'master_list')),
  added_at timestamptz not null,
  primary key (environment, fingerprint),
  check (source <> 'sandbox' or environment = 'test')
);
comment on table private.document_trust_anchors is 'The trust list: Country Signing CA certificates a document''s Document Signer must chain to, per environment.';
comment on column private.document_trust_anchors.environment is 'test (sandbox) or live: a document is verified against its own environment''s list only.';
comment on column private.document_trust_anchors.fingerprint is 'SHA-256 of the certificate (DER), hex.';
comment on column private.document_trust_anchors.subject is 'The certificate''s subject as RFC 4514 text; a Document Signer names it as issuer.';
comment on column private.document_trust_anchors.key_identifier is 'Subject key identifier (hex), which a Document Signer names as authority key identifier; null when absent.';
comment on column private.document_trust_anchors.country is 'The subject''s country (C=), for the operator.';
comment on column private.document_trust_anchors.certificate is 'The CSCA certificate, DER.';
comment on column private.document_trust_anchors.not_before is 'Start of the certificate''s validity.';
comment on column private.document_trust_anchors.not_after is 'End of the certificate''s validity.';
comment on column private.document_trust_anchors.source is 'sandbox (made by the CLI, test only) or master_list (imported from an ICAO master list).';
comment on column private.document_trust_anchors.added_at is 'When the operator added it.';
create index document_trust_anchors_key_idx on private.document_trust_anchors (environment, key_identifier);
create index document_trust_anchors_subject_idx on private.document_trust_anchors (environment, subject);

drop table private.identity_documents;
create table private.identity_documents (
  id uuid primary key default gen_random_uuid(),
  identity_id uuid not null references private.identities (id),
  capture_id uuid not null references private.captures (id),
  document_type text not null check (document_type in ('passport', 'national_id', 'residence_permit')),
  issuing_country text not null check (issuing_country ~ '^[A-Z]{1,3}$'),
  expires_on date not null,
  date_of_birth date,
  portrait_similarity real not null check (portrait_similarity between 0.75 and 1),
  signer_fingerprint text not null check (signer_fingerprint ~ '^[0-9a-f]{64}$'),
  csca_fingerprint text not null check (csca_fingerprint ~ '^[0-9a-f]{64}$'),
  lds_sha256 text not null check (lds_sha256 ~ '^[0-9a-f]{64}$'),
  verified_at timestamptz not null
);
comment on table private.identity_documents is 'Identity documents verified by passive authentication of their chip data, kept without image, number or name.';
comment on column private.identity_documents.id is 'Document record id.';
comment on column private.identity_documents.identity_id is 'The identity the document belongs to.';
comment on column private.identity_documents.capture_id is 'The capture that carried the evidence: the portrait match is that capture''s.';
comment on column private.identity_documents.document_type is 'passport, national_id or residence_permit (from the MRZ document code).';
comment on column private.identity_documents.issuing_country is 'Issuing state as the MRZ writes it (ICAO code, fillers removed).';
comment on column private.identity_documents.expires_on is 'Document expiry from the MRZ; an expired document is not valid.';
comment on column private.identity_documents.date_of_birth is 'Holder''s date of birth from the MRZ (for derived claims such as age), null when the document leaves it unknown.';
comment on column private.identity_documents.portrait_similarity is 'The device''s match of the chip portrait (DG2) to the live face of the capture (>= 0.75): a claim of the device.';
comment on column private.identity_documents.signer_fingerprint is 'SHA-256 of the Document Signer certificate that signed the SOD.';
comment on column private.identity_documents.csca_fingerprint is 'SHA-256 of the trust list''s Country Signing CA it chained to.';
comment on column private.identity_documents.lds_sha256 is 'SHA-256 of the LDSSecurityObject the SOD signs: names the document (every copy of the chip shares it), so it belongs to one identity.';
comment on column private.identity_documents.verified_at is 'When passive authentication succeeded (the capture''s time).';
create index identity_documents_identity_idx on private.identity_documents (identity_id, expires_on);
create index identity_documents_capture_idx on private.identity_documents (capture_id);
create index identity_documents_lds_idx on private.identity_documents (lds_sha256);
