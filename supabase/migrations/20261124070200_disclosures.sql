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

-- private.consent_state(identity, merchant): 'active' while a consent of the person with the merchant
-- stands, 'revoked' when every one ended, 'missing' when there was never one.
create or replace function private.consent_state(p_identity uuid, p_merchant uuid) returns text
language sql stable set search_path = '' as $$
  select case when bool_or(c.revoked_at is null) then 'active' when count(*) > 0 then 'revoked' else 'missing' end
  from private.consents c where c.identity_id = p_identity and c.merchant_id = p_merchant
$$;
comment on function private.consent_state(uuid, uuid) is 'active, revoked or missing: the person''s enrolment consent with the merchant.';

-- private.consent_require(identity, merchant): raises HA446 (no consent) or HA442 (every consent ended).
create or replace function private.consent_require(p_identity uuid, p_merchant uuid) returns void
language plpgsql stable set search_path = '' as $$
declare
  v_state text := private.consent_state(p_identity, p_merchant);
begin
  if v_state = 'missing' then
    raise exception 'no consent with this merchant' using errcode = 'HA446';
  elsif v_state = 'revoked' then
    raise exception 'consent with this merchant was withdrawn or ran out' using errcode = 'HA442';
  end if;
end $$;
comment on function private.consent_require(uuid, uuid) is 'Raises HA446 without any consent of the person with the merchant, HA442 when all ended.';

-- ============================================================================
-- RPCs
-- ============================================================================

-- disclosure_subject({merchant_id, environment, capture_id, now, proof_max_age_seconds}) ->
--   {identity_id, subject_ref, enrolled_at, assurance_level, document | null}
-- The person a disclosure is about is the one the capture proved present: a capture of this merchant, at
-- most proof_max_age_seconds old, live and uncoerced (HA445 with its reason otherwise), of a person with
-- a standing consent with the merchant (HA446, HA442). Answers what claims are derived from.
create or replace function public.disclosure_subject(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
  v_capture private.captures;
  v_identity private.identities;
begin
  select * into v_capture from private.captures
  where id = (p ->> 'capture_id')::uuid and merchant_id = v_merchant and environment = p ->> 'environment';
  if not found then
    raise exception 'no such capture' using errcode = 'HA445', detail = jsonb_build_object('reason', 'capture_not_found')::text;
  end if;
  if v_capture.created_at < v_now - make_interval(secs => (p ->> 'proof_max_age_seconds')::int) or v_capture.created_at > v_now then
    raise exception 'capture too old' using errcode = 'HA445', detail = jsonb_build_object('reason', 'capture_expired')::text;
  end if;
  if v_capture.coercion_signal then
    raise exception 'capture coerced' using errcode = 'HA445', detail = jsonb_build_object('reason', 'coercion_detected')::text;
  end if;
  if not v_capture.liveness_passed or v_capture.assurance_level is null then
    raise exception 'capture not live' using errcode = 'HA445', detail = jsonb_build_object('reason', 'liveness_failed')::text;
  end if;
  perform private.consent_require(v_capture.identity_id, v_merchant);
  select * into v_identity from private.identities where id = v_capture.identity_id;
  if v_identity.erased_at is not null then
    raise exception 'identity erased' using errcode = 'HA442';
  end if;
  return jsonb_build_object(
    'identity_id', v_identity.id,
    'subject_ref', (select s.subject_ref from private.subject_refs s where s.merchant_id = v_merchant and s.identity_id = v_identity.id),
    'enrolled_at', v_identity.created_at,
    'assurance_level', v_capture.assurance_level,
    'document', (select jsonb_build_object('document_type', d.document_type, 'issuing_country', d.issuing_country,
                                           'expires_on', d.expires_on, 'verified_at', d.verified_at,
                                           'portrait_similarity', d.portrait_similarity, 'date_of_birth', d.date_of_birth)
                 from private.identity_documents d
                 where d.identity_id = v_identity.id and d.expires_on >= (v_now at time zone 'UTC')::date
                 order by d.verified_at desc limit 1));
end $$;
comment on function public.disclosure_subject(jsonb) is 'disclose-claims: the person a fresh live capture proved present, with a standing consent, and what claims are derived from.';

-- disclosure_record({id, identity_id, merchant_id, now, consent_token_hash, expires_at, zk_proof_audit_id,
--   transaction_type, claims, attestation, sd_jwt_digest, documents: [{key, document}]}) -> {disclosure_id, seq, row_hash, recorded_at}
-- The disclosure's ledger entry and its documents, in one transaction. The person's chain head is locked
-- first, so a withdrawal (which appends under the same lock) is either before (HA442) or after it. A
-- zk_proof_audit_id the merchant used before is HA443.
create or replace function public.disclosure_record(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_identity uuid := (p ->> 'identity_id')::uuid;
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
  v_entry private.consent_ledger;
begin
  perform 1 from private.consent_chain_heads where identity_id = v_identity for update;
  perform private.consent_require(v_identity, v_merchant);
  begin
    insert into private.consent_ledger (id, identity_id, kind, merchant_id, consent_token_hash, payload, recorded_at)
    values ((p ->> 'id')::uuid, v_identity, 'disclosure', v_merchant, p ->> 'consent_token_hash',
            jsonb_build_object('zk_proof_audit_id', p ->> 'zk_proof_audit_id', 'transaction_type', p ->> 'transaction_type',
                               'claims', p -> 'claims', 'attestation', p -> 'attestation', 'expires_at', p ->> 'expires_at',
                               'sd_jwt_digest', p ->> 'sd_jwt_digest'),
            (p ->> 'now')::timestamptz)
    returning * into v_entry;
  exception when unique_violation then
    raise exception 'zk_proof_audit_id already used' using errcode = 'HA443';
  end;
  insert into private.disclosed_documents (disclosure_id, claim_key, document, expires_at)
  select v_entry.id, d ->> 'key', d -> 'document', (p ->> 'expires_at')::timestamptz
  from jsonb_array_elements(coalesce(p -> 'documents', '[]')) d;
  return jsonb_build_object('disclosure_id', v_entry.id, 'seq', v_entry.seq, 'row_hash', v_entry.row_hash,
                            'recorded_at', v_entry.recorded_at);
end $$;
comment on function public.disclosure_record(jsonb) is 'disclose-claims: appends the disclosure to the consent ledger with its documents, atomically, under the chain head lock.';

-- private.disclosure_of(token_hash, merchant, environment): the merchant's disclosure that token opens.
create or replace function private.disclosure_of(p_token_hash text, p_merchant uuid, p_env text) returns private.consent_ledger
language sql stable set search_path = '' as $$
  select l.* from private.consent_ledger l join private.identities i on i.id = l.identity_id
  where l.consent_token_hash = p_token_hash and l.kind = 'disclosure' and l.merchant_id = p_merchant and i.environment = p_env
$$;
comment on function private.disclosure_of(text, uuid, text) is 'The disclosure a consent token names, if it is this merchant''s in this environment.';

-- disclosure_fetch({merchant_id, environment, consent_token_hash, now}) -> the disclosure and its documents
-- What the consent token unlocks, while it does: unknown (or another merchant's) HA446; revoked, or the
-- person's consent with the merchant ended, HA442; past its expiry HA444.
create or replace function public.disclosure_fetch(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
declare
  v_disclosure private.consent_ledger := private.disclosure_of(p ->> 'consent_token_hash', (p ->> 'merchant_id')::uuid,
                                                               p ->> 'environment');
begin
  if v_disclosure.id is null then
    raise exception 'unknown consent token' using errcode = 'HA446';
  end if;
  if exists (select 1 from private.consent_ledger r where r.refers_to = v_disclosure.id and r.kind = 'disclosure_revoked') then
    raise exception 'consent token revoked' using errcode = 'HA442';
  end if;
  perform private.consent_require(v_disclosure.identity_id, v_disclosure.merchant_id);
  if (v_disclosure.payload ->> 'expires_at')::timestamptz <= (p ->> 'now')::timestamptz then
    raise exception 'consent token expired' using errcode = 'HA444';
  end if;
  return jsonb_build_object(
    'disclosure_id', v_disclosure.id,
    'zk_proof_audit_id', v_disclosure.payload ->> 'zk_proof_audit_id',
    'transaction_type', v_disclosure.payload ->> 'transaction_type',
    'issued_at', v_disclosure.recorded_at,
    'expires_at', v_disclosure.payload ->> 'expires_at',
    'claims', v_disclosure.payload -> 'claims',
    'documents', coalesce((select jsonb_agg(jsonb_build_object('key', d.claim_key, 'document', d.document) order by d.claim_key)
                           from private.disclosed_documents d where d.disclosure_id = v_disclosure.id), '[]'));
end $$;
comment on function public.disclosure_fetch(jsonb) is 'The fetch a consent token unlocks: the disclosure and its documents, 403-coded when revoked, ended or expired.';

-- consent_revoke({merchant_id, environment, now, reason?} + {consent_token_hash} | {subject_ref}) ->
--   {revoked, already_revoked, revoked_at, disclosure_id | subject_ref}
-- By token: the disclosure is revoked (its documents deleted). By subject_ref: the person withdraws every
-- standing consent with the merchant (face-identify, the sink and every disclosure's fetch stop answering
-- for them; the consent-retention cron erases what the consents covered). Unknown: HA404.
create or replace function public.consent_revoke(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_reason jsonb := case when p ? 'reason' then jsonb_build_object('reason', p ->> 'reason') else '{}' end;
  v_disclosure private.consent_ledger;
  v_identity uuid;
  v_ended timestamptz;
  v_withdrawn int;
begin
  if p ? 'consent_token_hash' then
    v_disclosure := private.disclosure_of(p ->> 'consent_token_hash', v_merchant, p ->> 'environment');
    if v_disclosure.id is null then
      raise exception 'unknown consent token' using errcode = 'HA404';
    end if;
    perform 1 from private.consent_chain_heads where identity_id = v_disclosure.identity_id for update;
    select recorded_at into v_ended from private.consent_ledger where refers_to = v_disclosure.id and kind = 'disclosure_revoked';
    if found then
      return jsonb_build_object('revoked', true, 'already_revoked', true, 'revoked_at', v_ended, 'disclosure_id', v_disclosure.id);
    end if;
    insert into private.consent_ledger (identity_id, kind, merchant_id, refers_to, payload, recorded_at)
    values (v_disclosure.identity_id, 'disclosure_revoked', v_merchant, v_disclosure.id, v_reason, v_now);
    delete from private.disclosed_documents where disclosure_id = v_disclosure.id;
    return jsonb_build_object('revoked', true, 'already_revoked', false, 'revoked_at', v_now, 'disclosure_id', v_disclosure.id);
  end if;

  select s.identity_id into v_identity from private.subject_refs s join private.identities i on i.id = s.identity_id
  where s.merchant_id = v_merchant and s.subject_ref = p ->> 'subject_ref' and i.environment = p ->> 'environment';
  if v_identity is null or private.consent_state(v_identity, v_merchant) = 'missing' then
    raise exception 'unknown subject_ref' using errcode = 'HA404';
  end if;
  perform 1 from private.consent_chain_heads where identity_id = v_identity for update;
  insert into private.consent_ledger (identity_id, kind, merchant_id, refers_to, payload, recorded_at)
  select v_identity, 'consent_withdrawn', v_merchant, c.id, v_reason, v_now
  from private.consents c where c.identity_id = v_identity and c.merchant_id = v_merchant and c.revoked_at is null
  order by c.granted_at;
  get diagnostics v_withdrawn = row_count;
  if v_withdrawn = 0 then
    select max(revoked_at) into v_ended from private.consents where identity_id = v_identity and merchant_id = v_merchant;
    return jsonb_build_object('revoked', true, 'already_revoked', true, 'revoked_at', v_ended, 'subject_ref', p ->> 'subject_ref');
  end if;
  delete from private.disclosed_documents d using private.consent_ledger l
  where l.id = d.disclosure_id and l.identity_id = v_identity and l.merchant_id = v_merchant;
  update private.sessions set revoked_at = v_now where identity_id = v_identity and merchant_id = v_merchant and revoked_at is null;
  return jsonb_build_object('revoked', true, 'already_revoked', false, 'revoked_at', v_now, 'subject_ref', p ->> 'subject_ref');
end $$;
comment on function public.consent_revoke(jsonb) is 'revoke-consent: revokes one disclosure (by its consent token) or withdraws the person''s consent with the merchant (by subject_ref).';
