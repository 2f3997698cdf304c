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

-- document_trust_anchors_add({environment, source, now, anchors: [{fingerprint, subject, key_identifier, country,
--   certificate (base64 DER), not_before, not_after}]}) -> {added, already_listed}
create or replace function public.document_trust_anchors_add(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_added int;
begin
  insert into private.document_trust_anchors (environment, fingerprint, subject, key_identifier, country, certificate,
    not_before, not_after, source, added_at)
  select p ->> 'environment', a ->> 'fingerprint', a ->> 'subject', a ->> 'key_identifier', a ->> 'country',
    decode(a ->> 'certificate', 'base64'), (a ->> 'not_before')::timestamptz, (a ->> 'not_after')::timestamptz,
    p ->> 'source', (p ->> 'now')::timestamptz
  from jsonb_array_elements(p -> 'anchors') a
  on conflict (environment, fingerprint) do nothing;
  get diagnostics v_added = row_count;
  return jsonb_build_object('added', v_added, 'already_listed', jsonb_array_length(p -> 'anchors') - v_added);
end $$;
comment on function public.document_trust_anchors_add(jsonb) is 'Adds Country Signing CAs to an environment''s trust list (CLI); one already listed is left as it is.';

-- document_trust_anchors_remove({environment, fingerprint}) -> {removed}
create or replace function public.document_trust_anchors_remove(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  with gone as (
    delete from private.document_trust_anchors
    where environment = p ->> 'environment' and fingerprint = p ->> 'fingerprint'
    returning 1)
  select jsonb_build_object('removed', (select count(*) from gone))
$$;
comment on function public.document_trust_anchors_remove(jsonb) is 'Removes a Country Signing CA from an environment''s trust list (CLI): documents it signed verify no more.';

-- document_trust_anchors_list({environment}) -> {anchors: [{fingerprint, subject, key_identifier, country, not_before,
--   not_after, source, added_at}]}
create or replace function public.document_trust_anchors_list(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('anchors', coalesce(jsonb_agg(jsonb_build_object(
    'fingerprint', a.fingerprint, 'subject', a.subject, 'key_identifier', a.key_identifier, 'country', a.country,
    'not_before', a.not_before, 'not_after', a.not_after, 'source', a.source, 'added_at', a.added_at)
    order by a.country, a.not_before), '[]'::jsonb))
  from private.document_trust_anchors a
  where a.environment = p ->> 'environment'
$$;
comment on function public.document_trust_anchors_list(jsonb) is 'An environment''s trust list, without the certificates (CLI).';

-- document_trust_anchor_candidates({environment, subject, key_identifier}) -> {certificates: [base64 DER]}
-- The CSCAs that may have issued a Document Signer certificate: by key identifier, or by name; the verifier
-- checks the signature of each.
create or replace function public.document_trust_anchor_candidates(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('certificates', coalesce(jsonb_agg(encode(a.certificate, 'base64')), '[]'::jsonb))
  from (select certificate from private.document_trust_anchors
        where environment = p ->> 'environment'
          and (key_identifier = p ->> 'key_identifier' or subject = p ->> 'subject')
        limit 16) a
$$;
comment on function public.document_trust_anchor_candidates(jsonb) is 'The trust list''s CSCAs that may have issued a Document Signer certificate (by key identifier or name).';

-- capture_record({capture: {...}, receipt: {...} | null, document: {...} | null, baseline: {...} | null,
--   stored_response?: {record: {merchant_id, environment, function_name, key}, status, body}}) -> {capture_id}
-- As before, except that a document is one the server verified (passive authentication), in either environment,
-- recorded with the capture that carried it. A document (its signed LDSSecurityObject, which a copy of the chip shares) belongs to one
-- identity: another identity presenting it raises HA438, and nothing is written.
create or replace function public.capture_record(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  c jsonb := p -> 'capture';
  d jsonb := p -> 'document';
begin
  -- The capture's act (see private.capture_nonces): after at most an identification by the same merchant.
  perform private.capture_nonce_claim(c ->> 'environment', c ->> 'capture_nonce', (c ->> 'merchant_id')::uuid, 'act',
    (c ->> 'created_at')::timestamptz);
  begin
    insert into private.captures (id, merchant_id, environment, identity_id, action, service_hash, amount_minor, currency,
      capture_nonce, liveness_passed, liveness_reason, coercion_signal, assurance_level, face_similarity, engine_version,
      scenario, created_at)
    values ((c ->> 'id')::uuid, (c ->> 'merchant_id')::uuid, c ->> 'environment', (c ->> 'identity_id')::uuid, c ->> 'action',
      c ->> 'service_hash', (c ->> 'amount_minor')::bigint, c ->> 'currency', c ->> 'capture_nonce',
      (c ->> 'liveness_passed')::boolean, c ->> 'liveness_reason', (c ->> 'coercion_signal')::boolean, c ->> 'assurance_level',
      (c ->> 'face_similarity')::real, c ->> 'engine_version', c ->> 'scenario', (c ->> 'created_at')::timestamptz);
  exception when unique_violation then
    raise exception 'capture nonce already used' using errcode = 'HA411';
  end;

  if jsonb_typeof(d) = 'object' then
    -- Serialises the presentations of one document, so two identities cannot both take it at once.
    perform pg_advisory_xact_lock(hashtextextended('identity_documents:' || (d ->> 'lds_sha256'), 0));
    if exists (select 1 from private.identity_documents
               where lds_sha256 = d ->> 'lds_sha256' and identity_id <> (c ->> 'identity_id')::uuid) then
      raise exception 'this document is on record for another identity' using errcode = 'HA438';
    end if;
    insert into private.identity_documents (identity_id, capture_id, document_type, issuing_country, expires_on,
      date_of_birth, portrait_similarity, signer_fingerprint, csca_fingerprint, lds_sha256, verified_at)
    values ((c ->> 'identity_id')::uuid, (c ->> 'id')::uuid, d ->> 'document_type', d ->> 'issuing_country',
      (d ->> 'expires_on')::date, (d ->> 'date_of_birth')::date, (d ->> 'portrait_similarity')::real,
      d ->> 'signer_fingerprint', d ->> 'csca_fingerprint', d ->> 'lds_sha256', (c ->> 'created_at')::timestamptz);
  end if;

  if jsonb_typeof(p -> 'baseline') = 'object' then
    update private.identities set baseline = p -> 'baseline' where id = (c ->> 'identity_id')::uuid;
  end if;

  if jsonb_typeof(p -> 'receipt') = 'object' then
    insert into private.receipts (id, code, capture_id, merchant_id, environment, jws, seal, issued_at)
    values ((p -> 'receipt' ->> 'id')::uuid, p -> 'receipt' ->> 'code', (c ->> 'id')::uuid, (c ->> 'merchant_id')::uuid,
      c ->> 'environment', p -> 'receipt' ->> 'jws', p -> 'receipt' ->> 'seal', (c ->> 'created_at')::timestamptz);
  end if;

  perform private.idempotency_store_act(p -> 'stored_response', (p -> 'stored_response' ->> 'status')::int,
    p -> 'stored_response' -> 'body', null);
  return jsonb_build_object('capture_id', c ->> 'id');
end $$;
comment on function public.capture_record(jsonb) is 'Claims the capture''s act and writes the capture with its receipt (and any document it carried that passed passive authentication) and the answer stored under its Idempotency-Key atomically; a reused capture raises HA411, a document on record for another identity HA438.';
