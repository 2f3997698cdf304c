-- ============================================================================
-- Consent: the hash-chained ledger, disclosures, revocation, retention.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- private.consent_entry_hash(entry): SHA-256 hex of everything an entry says but its own row_hash, as
-- jsonb text (keys in jsonb's fixed order; the time in UTC with microseconds, whatever the session's zone).
create or replace function private.consent_entry_hash(e private.consent_ledger) returns text
language sql stable set search_path = '' as $$
  select encode(pg_catalog.sha256(convert_to(jsonb_build_object(
    'id', e.id, 'identity_id', e.identity_id, 'seq', e.seq, 'kind', e.kind, 'merchant_id', e.merchant_id,
    'refers_to', e.refers_to, 'consent_token_hash', e.consent_token_hash, 'payload', e.payload,
    'recorded_at', to_char(e.recorded_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'prev_hash', e.prev_hash)::text, 'UTF8')), 'hex')
$$;
comment on function private.consent_entry_hash(private.consent_ledger) is 'The hash an entry is chained by: SHA-256 over the entry (prev_hash included, row_hash excluded).';

-- Every insert is chained here, whoever writes it: the head is locked, the entry takes the next seq and
-- the head's hash as prev_hash, and the head moves on.
create or replace function private.consent_ledger_chain() returns trigger
language plpgsql set search_path = '' as $$
declare
  v_head private.consent_chain_heads;
begin
  insert into private.consent_chain_heads (identity_id, seq, row_hash) values (new.identity_id, 0, repeat('0', 64))
  on conflict do nothing;
  select * into v_head from private.consent_chain_heads where identity_id = new.identity_id for update;
  new.id := coalesce(new.id, gen_random_uuid());
  new.seq := v_head.seq + 1;
  new.prev_hash := v_head.row_hash;
  new.row_hash := private.consent_entry_hash(new);
  update private.consent_chain_heads set seq = new.seq, row_hash = new.row_hash where identity_id = new.identity_id;
  return new;
end $$;
comment on function private.consent_ledger_chain() is 'Chains each new ledger entry to its person''s head under a row lock.';

create or replace trigger consent_ledger_chain before insert on private.consent_ledger
  for each row execute function private.consent_ledger_chain();
comment on trigger consent_ledger_chain on private.consent_ledger is 'Chains every new entry to its person''s head.';

-- Writing a consent (identity_enroll does) appends to the ledger: the grant and, when the row says it
-- was already withdrawn, the withdrawal.
create or replace function private.consents_append() returns trigger
language plpgsql set search_path = '' as $$
begin
  new.id := coalesce(new.id, gen_random_uuid());
  insert into private.consent_ledger (id, identity_id, kind, merchant_id, payload, recorded_at)
  values (new.id, new.identity_id, 'consent_granted', new.merchant_id,
          jsonb_build_object('version', new.version, 'retention_days', new.retention_days), new.granted_at);
  if new.revoked_at is not null then
    insert into private.consent_ledger (identity_id, kind, merchant_id, refers_to, recorded_at)
    values (new.identity_id, 'consent_withdrawn', new.merchant_id, new.id, new.revoked_at);
  end if;
  return new;
end $$;
comment on function private.consents_append() is 'An insert into private.consents appended to the consent ledger.';

create or replace trigger consents_append instead of insert on private.consents
  for each row execute function private.consents_append();
comment on trigger consents_append on private.consents is 'An enrolment consent written is a consent_granted entry appended.';

-- ============================================================================
-- RPCs
-- ============================================================================

-- consent_ledger_verify({identity_id?, limit?}) -> {ok, identities, entries, breaks: [{identity_id, seq, reason}]}
-- Recomputes every entry's hash and checks it links to the one before, that seq has no gap, and that
-- the head names the last entry. Reasons: row_hash_mismatch (an entry was altered), prev_hash_mismatch
-- (the chain was cut or reordered), seq_gap (an entry is missing), head_mismatch (the tail was removed or
-- the head moved). At most `limit` (default 100) breaks are listed; ok says whether there was none.
create or replace function public.consent_ledger_verify(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  with scope as (
    select (p ->> 'identity_id')::uuid as identity_id
  ),
  entries as (
    select l.identity_id, l.seq, l.row_hash, l.prev_hash, private.consent_entry_hash(l) as computed,
           lag(l.row_hash) over chain as previous_hash, lag(l.seq) over chain as previous_seq,
           row_number() over (partition by l.identity_id order by l.seq desc) = 1 as last
    from private.consent_ledger l, scope
    where scope.identity_id is null or l.identity_id = scope.identity_id
    window chain as (partition by l.identity_id order by l.seq)
  ),
  breaks as (
    select identity_id, seq,
           case when row_hash <> computed then 'row_hash_mismatch'
                when prev_hash <> coalesce(previous_hash, repeat('0', 64)) then 'prev_hash_mismatch'
                when seq <> coalesce(previous_seq, 0) + 1 then 'seq_gap' end as reason
    from entries
    union all
    select h.identity_id, h.seq, 'head_mismatch'
    from private.consent_chain_heads h, scope
    where (scope.identity_id is null or h.identity_id = scope.identity_id)
      and not exists (select 1 from entries e where e.identity_id = h.identity_id and e.last
                      and e.seq = h.seq and e.row_hash = h.row_hash)
      and h.seq > 0
  ),
  found as (
    select identity_id, seq, reason from breaks where reason is not null
  )
  select jsonb_build_object(
    'ok', not exists (select 1 from found),
    'identities', (select count(distinct identity_id) from entries),
    'entries', (select count(*) from entries),
    'breaks', coalesce((select jsonb_agg(jsonb_build_object('identity_id', identity_id, 'seq', seq, 'reason', reason)
                                         order by identity_id, seq)
                        from (select * from found order by identity_id, seq
                              limit least(greatest(coalesce((p ->> 'limit')::int, 100), 1), 1000)) listed), '[]'))
$$;
comment on function public.consent_ledger_verify(jsonb) is 'Checks the hash chain of every person''s consent ledger (or one person''s) and lists where it breaks.';

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

-- disclosure_subject({merchant_id, environment, capture_id | identity_id, now, proof_max_age_seconds}) ->
--   {identity_id, subject_ref, enrolled_at, assurance_level, capture_id, document | null}
-- The person a disclosure is about is the one the capture proved present: a capture of this merchant, at
-- most proof_max_age_seconds old, live and uncoerced, made for neither a verification card nor a grant (HA445 with its
-- reason otherwise), of a person with
-- a standing consent with the merchant (HA446, HA442). Answers what claims are derived from. Without capture_id
-- (the spec's biometric_attestation names none: D-368), the capture is the newest one of this merchant of identity_id
-- (the person whose device key was presented) that passes those checks.
create or replace function public.disclosure_subject(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
  v_capture private.captures;
  v_identity private.identities;
begin
  if p ? 'capture_id' then
    select * into v_capture from private.captures
    where id = (p ->> 'capture_id')::uuid and merchant_id = v_merchant and environment = p ->> 'environment';
  else
    select * into v_capture from private.captures c
    where c.identity_id = (p ->> 'identity_id')::uuid and c.merchant_id = v_merchant and c.environment = p ->> 'environment'
      and c.created_at between v_now - make_interval(secs => (p ->> 'proof_max_age_seconds')::int) and v_now
      and c.liveness_passed and c.assurance_level is not null and not c.coercion_signal
      and c.purpose is distinct from 'verify' and c.purpose is distinct from 'grant'
    order by c.created_at desc, c.id desc
    limit 1;
  end if;
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
  -- What the person was shown: a verification card's screen says it authorises nothing, and a grant capture
  -- proves its mandate alone; neither discloses anything (issue 25).
  if v_capture.purpose in ('verify', 'grant') then
    raise exception 'capture was not made for this' using errcode = 'HA445', detail = jsonb_build_object('reason', 'not_for_disclosure')::text;
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
    'capture_id', v_capture.id,
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

-- private.consent_erase_covered(grant, identity, merchant, now) -> {captures, disclosed_documents, sessions, template,
--   identity_documents}
-- Erases what one ended consent covered and records it with a data_erased entry (the caller holds the person's chain
-- head): the personal data of the merchant's captures of the person, the documents disclosed to it and the person's
-- sessions with it, unless another consent with the same merchant still stands; and, once no consent of the person
-- stands with any merchant, the protected template, the identity documents and the baseline, and the identity is
-- erased. The retention sweep and the person's own erasure (public.person_erase) both erase through it.
create or replace function private.consent_erase_covered(p_grant uuid, p_identity uuid, p_merchant uuid, p_now timestamptz)
returns jsonb
language plpgsql set search_path = '' as $$
declare
  v_captures int := 0;
  v_disclosed int := 0;
  v_sessions int := 0;
  v_documents int := 0;
  v_template_erased boolean := false;
begin
  if private.consent_state(p_identity, p_merchant) <> 'active' then
    update private.captures
    set face_similarity = null, amount_minor = null, currency = null, liveness_reason = null, personal_data_erased_at = p_now
    where identity_id = p_identity and merchant_id = p_merchant and personal_data_erased_at is null;
    get diagnostics v_captures = row_count;
    delete from private.disclosed_documents d using private.consent_ledger l
    where l.id = d.disclosure_id and l.identity_id = p_identity and l.merchant_id = p_merchant;
    get diagnostics v_disclosed = row_count;
    update private.sessions set revoked_at = p_now
    where identity_id = p_identity and merchant_id = p_merchant and revoked_at is null;
    get diagnostics v_sessions = row_count;
  end if;
  if not exists (select 1 from private.consents c where c.identity_id = p_identity and c.revoked_at is null) then
    delete from private.face_templates where identity_id = p_identity;
    v_template_erased := found;
    delete from private.identity_documents where identity_id = p_identity;
    get diagnostics v_documents = row_count;
    update private.identities set baseline = null, erased_at = coalesce(erased_at, p_now) where id = p_identity;
  end if;
  insert into private.consent_ledger (identity_id, kind, merchant_id, refers_to, payload, recorded_at)
  values (p_identity, 'data_erased', p_merchant, p_grant,
          jsonb_build_object('captures', v_captures, 'disclosed_documents', v_disclosed, 'sessions', v_sessions,
                             'template', v_template_erased, 'identity_documents', v_documents), p_now);
  return jsonb_build_object('captures', v_captures, 'disclosed_documents', v_disclosed, 'sessions', v_sessions,
                            'template', v_template_erased, 'identity_documents', v_documents);
end $$;
comment on function private.consent_erase_covered(uuid, uuid, uuid, timestamptz) is 'Erases what one ended consent covered (and, after the last, the template, documents and baseline) with its data_erased entry.';

-- consent_retention_sweep({now, limit?}) -> {expired, erased, captures, templates, documents_deleted}
-- One pass: (1) consents whose retention ran out get their consent_expired entry; (2) every ended consent
-- not yet erased (ran out or withdrawn) has what it covered erased and a data_erased entry saying what;
-- (3) disclosed documents past their token's expiry are deleted. At most `limit` (default 500) consents
-- per step; rows are claimed with skip locked so overlapping passes never do the same work twice.
create or replace function public.consent_retention_sweep(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_limit int := least(greatest(coalesce((p ->> 'limit')::int, 500), 1), 5000);
  v_grant record;
  v_expired int := 0;
  v_erased int := 0;
  v_captures int;
  v_captures_total int := 0;
  v_templates int := 0;
  v_done jsonb;
  v_disclosed_expired int;
begin
  for v_grant in
    select g.id, g.identity_id, g.merchant_id, (g.payload ->> 'retention_days')::int as retention_days
    from private.consent_ledger g
    where g.kind = 'consent_granted'
      and g.recorded_at + make_interval(days => (g.payload ->> 'retention_days')::int) <= v_now
      and not exists (select 1 from private.consent_ledger e where e.refers_to = g.id and e.kind in ('consent_withdrawn', 'consent_expired'))
    order by g.recorded_at
    limit v_limit
    for update of g skip locked
  loop
    perform 1 from private.consent_chain_heads where identity_id = v_grant.identity_id for update;
    -- a withdrawal may have ended it while this pass waited for the head
    continue when exists (select 1 from private.consent_ledger e where e.refers_to = v_grant.id
                          and e.kind in ('consent_withdrawn', 'consent_expired'));
    insert into private.consent_ledger (identity_id, kind, merchant_id, refers_to, payload, recorded_at)
    values (v_grant.identity_id, 'consent_expired', v_grant.merchant_id, v_grant.id,
            jsonb_build_object('retention_days', v_grant.retention_days), v_now);
    v_expired := v_expired + 1;
  end loop;

  for v_grant in
    select g.id, g.identity_id, g.merchant_id, e.recorded_at as ended_at
    from private.consent_ledger g
    join private.consent_ledger e on e.refers_to = g.id and e.kind in ('consent_withdrawn', 'consent_expired')
    where g.kind = 'consent_granted'
      and not exists (select 1 from private.consent_ledger x where x.refers_to = g.id and x.kind = 'data_erased')
    order by e.recorded_at
    limit v_limit
    for update of g skip locked
  loop
    perform 1 from private.consent_chain_heads where identity_id = v_grant.identity_id for update;
    continue when exists (select 1 from private.consent_ledger x where x.refers_to = v_grant.id and x.kind = 'data_erased');
    v_done := private.consent_erase_covered(v_grant.id, v_grant.identity_id, v_grant.merchant_id, v_now);
    v_captures := (v_done ->> 'captures')::int;
    if (v_done ->> 'template')::boolean then
      v_templates := v_templates + 1;
    end if;
    v_erased := v_erased + 1;
    v_captures_total := v_captures_total + v_captures;
  end loop;

  delete from private.disclosed_documents where expires_at <= v_now;
  get diagnostics v_disclosed_expired = row_count;

  return jsonb_build_object('expired', v_expired, 'erased', v_erased, 'captures', v_captures_total, 'templates', v_templates,
                            'disclosed_documents_expired', v_disclosed_expired);
end $$;
comment on function public.consent_retention_sweep(jsonb) is 'consent-retention cron: ends consents whose retention ran out and erases what every ended consent covered.';

-- private.refuse_change (kernel/helpers.sql) raises HA423 for every update, delete and truncate.
create or replace trigger consent_ledger_append_only before update or delete on private.consent_ledger
  for each row execute function private.refuse_change();
comment on trigger consent_ledger_append_only on private.consent_ledger is 'No entry is ever updated or deleted.';

create or replace trigger consent_ledger_no_truncate before truncate on private.consent_ledger
  for each statement execute function private.refuse_change();
comment on trigger consent_ledger_no_truncate on private.consent_ledger is 'The ledger is never truncated.';
