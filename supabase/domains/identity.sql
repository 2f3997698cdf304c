-- ============================================================================
-- Identity: enrolment, 1:N face search and identify, resolve, claims and attributes, capture nonces, the document trust list.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- The seal of templates at rest (D-680): the protected embedding under the current key of
-- private.template_seal_keys, which only these functions' definer reads. pgcrypto is wherever the
-- deployment keeps it (private when the migration installed it; Supabase's `extensions`), found by name.
create or replace function private.template_seal(p_embedding real[]) returns bytea
language plpgsql volatile set search_path = '' as $$
declare
  v_sealed bytea;
begin
  execute format('select %s.pgp_sym_encrypt($1, encode(k.secret, ''hex''), ''cipher-algo=aes256, s2k-mode=1'')
                  from private.template_seal_keys k where k.retired_at is null',
                 (select e.extnamespace::regnamespace::text from pg_catalog.pg_extension e where e.extname = 'pgcrypto'))
  into strict v_sealed using array_to_string(p_embedding, ',');
  return v_sealed;
end $$;
comment on function private.template_seal(real[]) is 'A protected embedding sealed under the current seal key (D-680).';

-- private.template_unseal(sealed, seal_key_id): the protected embedding a template seals. Called only by
-- this file's functions (the exact re-check, the seal key's rotation); no RPC answers what it returns.
create or replace function private.template_unseal(p_sealed bytea, p_key int) returns real[]
language plpgsql stable set search_path = '' as $$
declare
  v_clear text;
begin
  execute format('select %s.pgp_sym_decrypt($1, encode(k.secret, ''hex'')) from private.template_seal_keys k where k.id = $2',
                 (select e.extnamespace::regnamespace::text from pg_catalog.pg_extension e where e.extname = 'pgcrypto'))
  into strict v_clear using p_sealed, p_key;
  return string_to_array(v_clear, ',')::real[];
end $$;
comment on function private.template_unseal(bytea, int) is 'The protected embedding a template seals; for the store''s own functions only (D-680).';

-- private.template_similarity(sealed, seal_key_id, query): the exact cosine of a sealed unit embedding
-- and a unit query, computed where the key is; the embedding never leaves the store.
create or replace function private.template_similarity(p_sealed bytea, p_key int, p_query real[]) returns real
language sql stable set search_path = '' as $$
  select sum(a * b)::real from unnest(private.template_unseal(p_sealed, p_key), p_query) as pair(a, b)
$$;
comment on function private.template_similarity(bytea, int, real[]) is 'The exact cosine of a sealed template and a query, unsealed in the store only (D-680).';

-- private.template_seal_rotate(now) -> the number of templates re-sealed. A new seal key; every template
-- unsealed and sealed again under it, in this transaction; the old key's row deleted (its secret survives only
-- in backups taken before). The codes do not change: they are under the Worker's key (D-680). An operator's
-- act (psql as the schema's owner); no RPC calls it.
create or replace function private.template_seal_rotate(p_now timestamptz) returns int
language plpgsql volatile set search_path = '' as $$
declare
  v_old int;
  v_count int;
begin
  update private.template_seal_keys set retired_at = p_now where retired_at is null returning id into strict v_old;
  insert into private.template_seal_keys (secret, created_at)
  values (substring(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) for 32), p_now);
  update private.face_templates
  set sealed = private.template_seal(private.template_unseal(sealed, seal_key_id)),
      seal_key_id = (select k.id from private.template_seal_keys k where k.retired_at is null);
  get diagnostics v_count = row_count;
  delete from private.template_seal_keys where id = v_old;
  return v_count;
end $$;
comment on function private.template_seal_rotate(timestamptz) is 'Re-seals every template under a new seal key and deletes the old one (an operator''s act, D-680).';

-- face_template_search({environment, key_id, embedding, code, limit, merchant_id?}) -> [{identity_id, similarity, reachable}]
-- Candidates by code (D-680): the 32 nearest codes in Hamming distance (walked on their HNSW index
-- where pgvector exists, D-682; scanned otherwise), and every
-- template without a code yet (sealed by the migration); each is re-checked exactly against its sealed
-- embedding, and the `limit` best by that exact cosine are answered. The code's estimate never decides,
-- so a decision at the gate is the same under every key; the true best is missed only when 32 other
-- templates look closer by code, which at the code's spread (about 0.006 of cosine at the gate) takes
-- 32 persons within a few hundredths of the live face.
-- Erased identities are still found (reachable = false) until their templates are purged, so a
-- returning face is told it cannot be reached instead of silently becoming a second identity.
-- With merchant_id, only persons with an active consent for that merchant are searched (isolation by
-- merchant: face-identify and the sink's mismatch search); enrollment searches the whole environment,
-- so that the same face never becomes a second identity.
create or replace function public.face_template_search(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
declare
  v_query real[] := array(select jsonb_array_elements_text(p -> 'embedding')::real);
  v_code bit(2048) := ('x' || (p ->> 'code'))::bit(2048);
  v_limit int := least(greatest(coalesce((p ->> 'limit')::int, 1), 1), 50);
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
  v_vector text := (select e.extnamespace::regnamespace::text from pg_catalog.pg_extension e where e.extname = 'vector');
  v_distance text := 'pg_catalog.bit_count(t.code operator(pg_catalog.#) $1)';
  v_result jsonb;
begin
  -- The codes' HNSW index where pgvector built it (D-682); its walk goes on past templates the
  -- filters drop (pgvector >= 0.8 iterative scan), so consent and scope do not cost candidates.
  if v_vector is not null and to_regclass('private.face_templates_code_hnsw_idx') is not null then
    perform set_config('hnsw.iterative_scan', 'strict_order', true);
    perform set_config('hnsw.ef_search', '100', true);
    v_distance := format('t.code operator(%s.<~>) $1', v_vector);
  end if;
  execute format($q$
    select coalesce(jsonb_agg(jsonb_build_object('identity_id', identity_id, 'similarity', similarity, 'reachable', reachable)
                              order by similarity desc), '[]')
    from (
      select c.identity_id, private.template_similarity(c.sealed, c.seal_key_id, $2) as similarity, c.reachable
      from (
        (select t.identity_id, t.sealed, t.seal_key_id, i.erased_at is null as reachable
         from private.face_templates t
         join private.identities i on i.id = t.identity_id
         where t.environment = $4 and t.key_id = $5 and t.code is not null
           and ($3 is null or exists (select 1 from private.consents c
                                      where c.identity_id = t.identity_id and c.merchant_id = $3 and c.revoked_at is null))
         order by %s
         limit 32)
        union all
        select t.identity_id, t.sealed, t.seal_key_id, i.erased_at is null
        from private.face_templates t
        join private.identities i on i.id = t.identity_id
        where t.environment = $4 and t.key_id = $5 and t.code is null
          and ($3 is null or exists (select 1 from private.consents c
                                     where c.identity_id = t.identity_id and c.merchant_id = $3 and c.revoked_at is null))
      ) c
      order by similarity desc
      limit $6
    ) best$q$, v_distance)
  into v_result
  using v_code, v_query, v_merchant, p ->> 'environment', p ->> 'key_id', v_limit;
  return v_result;
end $$;
comment on function public.face_template_search(jsonb) is '1:N search over sealed templates: candidates by code (Hamming), decided by the exact cosine re-checked in the store; with merchant_id, only persons with an active consent for that merchant.';

-- face_template_verify({environment, identity_id, key_id, embedding}) -> {similarity: number | null}
-- The sink's and attributes' 1:1 check: the exact cosine of the live protected embedding and the named
-- identity's sealed template; null when the identity has no template under this key (revoked by a key
-- rotation). The template itself is never answered (D-680).
create or replace function public.face_template_verify(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('similarity', (
    select private.template_similarity(t.sealed, t.seal_key_id, array(select jsonb_array_elements_text(p -> 'embedding')::real))
    from private.face_templates t
    where t.identity_id = (p ->> 'identity_id')::uuid and t.environment = p ->> 'environment' and t.key_id = p ->> 'key_id'))
$$;
comment on function public.face_template_verify(jsonb) is 'The exact cosine of a live protected embedding and one identity''s sealed template (the 1:1 check); the template is never answered.';

-- face_identify({environment, merchant_id, key_id, embedding, code, capture_nonce, now}) -> {identity_id, similarity, second_similarity?} | {}
-- face-identify in one call: claims the capture's identification (HA411 when the capture was used
-- before, see private.capture_nonces) and answers the best match among the persons who consented
-- with this merchant and were not erased, with the runner-up's similarity (a near miss when the two
-- are close: D-385); {} when there is none.
create or replace function public.face_identify(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_found jsonb;
  v_best jsonb;
begin
  perform private.capture_nonce_claim(p ->> 'environment', p ->> 'capture_nonce', (p ->> 'merchant_id')::uuid, 'identify',
    (p ->> 'now')::timestamptz);
  v_found := public.face_template_search(jsonb_build_object('environment', p ->> 'environment', 'key_id', p ->> 'key_id',
    'embedding', p -> 'embedding', 'code', p ->> 'code', 'merchant_id', p ->> 'merchant_id', 'limit', 2));
  v_best := v_found -> 0;
  if v_best is null or not (v_best ->> 'reachable')::boolean then
    return '{}'::jsonb;
  end if;
  return jsonb_strip_nulls(jsonb_build_object('identity_id', v_best ->> 'identity_id', 'similarity', (v_best ->> 'similarity')::real,
    'second_similarity', (v_found -> 1 ->> 'similarity')::real));
end $$;
comment on function public.face_identify(jsonb) is 'face-identify: claims the capture''s identification and answers the best match among this merchant''s consented persons, with the runner-up''s similarity.';

-- private.capture_nonce_claim(environment, capture_nonce, merchant_id, use, now): claims one use
-- ('identify' or 'act') of a capture or raises HA411.
create or replace function private.capture_nonce_claim(p_env text, p_nonce text, p_merchant uuid, p_use text, p_now timestamptz)
returns void
language plpgsql security definer set search_path = '' as $$
begin
  if p_use = 'identify' then
    insert into private.capture_nonces (environment, capture_nonce, merchant_id, identified_at)
    values (p_env, p_nonce, p_merchant, p_now)
    on conflict do nothing;
  else
    insert into private.capture_nonces as n (environment, capture_nonce, merchant_id, acted_at)
    values (p_env, p_nonce, p_merchant, p_now)
    on conflict (environment, capture_nonce) do update set acted_at = excluded.acted_at
    where n.acted_at is null and n.merchant_id = excluded.merchant_id
      and n.identified_at > excluded.acted_at - interval '5 minutes';
  end if;
  if not found then
    raise exception 'capture nonce already used' using errcode = 'HA411';
  end if;
end $$;
comment on function private.capture_nonce_claim(text, text, uuid, text, timestamptz) is 'Claims one use of a capture (identify, then act, by one merchant, within five minutes) or raises HA411.';

-- ============================================================================
-- RPCs
-- ============================================================================

-- identity_enroll({environment, merchant_id, now, capture_nonce, identity_id, existing, subject_ref, key_id, embedding,
--                  code, match_threshold, consent: {version, retention_days}, session: {token_hash, expires_at},
--                  presented_session_hash?, baseline?, device?: {device_id, credential_id, public_key_hex, ...}})
--   -> {identity_id, created}
-- Enrollments of one environment are serialised by an advisory lock; a new identity is created only if,
-- under that lock, no stored template matches (a racing enrollment of the same face raises HA410 and the
-- edge searches again). Each stage raises its own SQLSTATE so the API can name what failed.
create or replace function public.identity_enroll(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_identity_id uuid := (p ->> 'identity_id')::uuid;
  v_env text := p ->> 'environment';
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
  v_best jsonb;
  v_device jsonb;
begin
  if p ? 'presented_session_hash' and exists (
    select 1 from private.sessions
    where token_hash = p ->> 'presented_session_hash' and revoked_at is null and expires_at > v_now
  ) then
    raise exception 'a session is already present on this device' using errcode = 'HA408';
  end if;

  perform private.capture_nonce_claim(v_env, p ->> 'capture_nonce', v_merchant, 'act', v_now);

  perform pg_advisory_xact_lock(hashtext('enroll:' || v_env));

  if (p ->> 'existing')::boolean then
    if not exists (select 1 from private.identities where id = v_identity_id and environment = v_env and erased_at is null) then
      raise exception 'identity unreachable' using errcode = 'HA409';
    end if;
  else
    v_best := public.face_template_search(jsonb_build_object(
      'environment', v_env, 'key_id', p ->> 'key_id', 'embedding', p -> 'embedding', 'code', p ->> 'code', 'limit', 1)) -> 0;
    if v_best is not null and (v_best ->> 'similarity')::real >= (p ->> 'match_threshold')::real then
      raise exception 'a concurrent enrollment stored this face' using errcode = 'HA410';
    end if;
    begin
      insert into private.identities (id, environment, baseline, created_at) values (v_identity_id, v_env, p -> 'baseline', v_now);
    exception when others then
      raise exception 'identity insert failed: %', sqlerrm using errcode = 'HA501';
    end;
    begin
      insert into private.face_templates (identity_id, environment, key_id, code, sealed, seal_key_id, created_at)
      values (v_identity_id, v_env, p ->> 'key_id', ('x' || (p ->> 'code'))::bit(2048),
              private.template_seal(array(select jsonb_array_elements_text(p -> 'embedding')::real)),
              (select k.id from private.template_seal_keys k where k.retired_at is null), v_now);
    exception when others then
      raise exception 'template insert failed: %', sqlerrm using errcode = 'HA502';
    end;
  end if;

  insert into private.subject_refs (merchant_id, subject_ref, identity_id, created_at)
  values (v_merchant, p ->> 'subject_ref', v_identity_id, v_now)
  on conflict do nothing;

  insert into private.consents (identity_id, merchant_id, version, retention_days, granted_at)
  values (v_identity_id, v_merchant, p -> 'consent' ->> 'version', (p -> 'consent' ->> 'retention_days')::int, v_now);

  begin
    insert into private.sessions (identity_id, merchant_id, environment, token_hash, created_at, expires_at)
    values (v_identity_id, v_merchant, v_env, p -> 'session' ->> 'token_hash', v_now, (p -> 'session' ->> 'expires_at')::timestamptz);
  exception when others then
    raise exception 'session insert failed: %', sqlerrm using errcode = 'HA503';
  end;

  -- A new person's first device, registered in the ceremony of this capture (issue 27): stored with
  -- the identity or not at all. Its challenge was single use, so a refusal here (the credential is
  -- somebody's already) is no retry of a person's: it fails the enrolment as the identity's stage
  -- (docs/decisions.md, D-349).
  if jsonb_typeof(p -> 'device') = 'object' then
    v_device := public.device_credential_register((p -> 'device')
      || jsonb_build_object('environment', v_env, 'now', p ->> 'now', 'identity_id', v_identity_id));
    if not (v_device ->> 'registered')::boolean then
      raise exception 'device not registered: %', v_device ->> 'reason' using errcode = 'HA501';
    end if;
  end if;

  return jsonb_build_object('identity_id', v_identity_id, 'created', not (p ->> 'existing')::boolean);
end $$;
comment on function public.identity_enroll(jsonb) is 'Creates (or re-attaches) an identity with its protected template, consent, subject_ref, first session and, when the enrolment registered one, first device, atomically.';

-- The record of an identity document that passed passive authentication, kept with the capture that carried it
-- (capture_record on the function API, identity_claim for a claim with source document, D-517). A document (its
-- signed LDSSecurityObject, which a copy of the chip shares) belongs to one identity: another identity presenting
-- it raises HA438 (detail: reason document_already_bound), and the caller's transaction writes nothing.
create or replace function private.identity_document_record(p_identity uuid, p_capture uuid, d jsonb, p_at timestamptz)
returns void language plpgsql set search_path = '' as $$
begin
  -- Serialises the presentations of one document, so two identities cannot both take it at once.
  perform pg_advisory_xact_lock(hashtextextended('identity_documents:' || (d ->> 'lds_sha256'), 0));
  if exists (select 1 from private.identity_documents where lds_sha256 = d ->> 'lds_sha256' and identity_id <> p_identity) then
    raise exception 'this document is on record for another identity' using errcode = 'HA438',
      detail = '{"reason": "document_already_bound"}';
  end if;
  insert into private.identity_documents (identity_id, capture_id, document_type, issuing_country, expires_on,
    date_of_birth, portrait_similarity, signer_fingerprint, csca_fingerprint, lds_sha256, verified_at)
  values (p_identity, p_capture, d ->> 'document_type', d ->> 'issuing_country', (d ->> 'expires_on')::date,
    (d ->> 'date_of_birth')::date, (d ->> 'portrait_similarity')::real, d ->> 'signer_fingerprint', d ->> 'csca_fingerprint',
    d ->> 'lds_sha256', p_at);
end $$;
comment on function private.identity_document_record(uuid, uuid, jsonb, timestamptz) is
  'Keeps a verified identity document on an identity''s record with the capture that carried it; HA438 when another identity holds it.';

-- identity_claim({...identity_enroll's parameters, capture: {...}, receipt: {id, code, jws, seal}, document?: {...},
--   stored_response?: {record, status, body}}) -> {identity_id, billed}
-- A claim with source document carries the document it verified (D-517): kept on the identity's record with the
-- claim's capture, one document one identity (HA438).
-- Under the enrolment lock of the environment: a person who holds an active consent with this merchant is
-- already claimed (HA441; the edge answers the facetoken it holds). Otherwise the enrolment (identity_enroll:
-- the capture's act, identity, template, consent, subject_ref, session), the capture with its receipt, the
-- bill (HA440 rolls everything back when the month's allowance is used up) and, under an Idempotency-Key, the
-- answer, all in this one transaction: a claim that does not complete writes nothing and bills nothing.
create or replace function public.identity_claim(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  c jsonb := p -> 'capture';
  v_env text := p ->> 'environment';
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
  v_identity uuid := (p ->> 'identity_id')::uuid;
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_billed boolean;
begin
  -- identity_enroll takes the same lock (re-entrant): a racing claim of this person committed before this check.
  perform pg_advisory_xact_lock(hashtext('enroll:' || v_env));
  if (p ->> 'existing')::boolean and exists (
    select 1 from private.consents k join private.identities i on i.id = k.identity_id
    where k.identity_id = v_identity and k.merchant_id = v_merchant and k.revoked_at is null and i.erased_at is null
  ) then
    raise exception 'this person is already claimed by this merchant' using errcode = 'HA441';
  end if;

  perform public.identity_enroll(p);

  insert into private.captures (id, merchant_id, environment, identity_id, action, service_hash, capture_nonce,
    liveness_passed, coercion_signal, assurance_level, engine_version, created_at, purpose, device_id, device_binding)
  values ((c ->> 'id')::uuid, v_merchant, v_env, v_identity, 'ACTION_SIGNUP', c ->> 'service_hash', p ->> 'capture_nonce',
    true, (c ->> 'coercion_signal')::boolean, c ->> 'assurance_level', c ->> 'engine_version', v_now, 'enroll',
    (c ->> 'device_id')::uuid, c ->> 'device_binding');
  if jsonb_typeof(p -> 'document') = 'object' then
    perform private.identity_document_record(v_identity, (c ->> 'id')::uuid, p -> 'document', v_now);
  end if;
  insert into private.receipts (id, code, capture_id, merchant_id, environment, jws, seal, issued_at)
  values ((p -> 'receipt' ->> 'id')::uuid, p -> 'receipt' ->> 'code', (c ->> 'id')::uuid, v_merchant, v_env,
    p -> 'receipt' ->> 'jws', p -> 'receipt' ->> 'seal', v_now);

  v_billed := private.billing_charge_claim(v_merchant, v_env, v_identity, 'api', c ->> 'id', v_now);

  perform private.idempotency_store_act(p -> 'stored_response', (p -> 'stored_response' ->> 'status')::int,
    p -> 'stored_response' -> 'body', null);
  return jsonb_build_object('identity_id', v_identity, 'billed', v_billed);
end $$;
comment on function public.identity_claim(jsonb) is
  'Claims a person for a merchant: enrolment, capture and receipt, a verified document when the claim binds one, the bill and the stored answer in one transaction; HA441 when already claimed, HA438 when the document is another identity''s, HA440 when the allowance is used up.';

-- identity_attribute_record({environment, merchant_id, now, capture_nonce, stored_response?}) -> {}
-- The attribute answer's act: its capture is used (one act per capture, private.capture_nonces; HA411 when
-- used before) and, under an Idempotency-Key, the answer is stored in the same transaction.
create or replace function public.identity_attribute_record(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
begin
  perform private.capture_nonce_claim(p ->> 'environment', p ->> 'capture_nonce', (p ->> 'merchant_id')::uuid, 'act',
    (p ->> 'now')::timestamptz);
  perform private.idempotency_store_act(p -> 'stored_response', (p -> 'stored_response' ->> 'status')::int,
    p -> 'stored_response' -> 'body', null);
  return '{}'::jsonb;
end $$;
comment on function public.identity_attribute_record(jsonb) is
  'Uses an attribute answer''s capture as its act (HA411 when used before) and stores the answer under its Idempotency-Key.';

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

-- ============================================================================
-- Age attributes (POST /v1/identity/attributes, age_over_18 and age_over_21):
-- identity_resolve's document now carries the verified document's date of
-- birth, so an age attribute is answered from the same read as
-- document_verified. Only this field is new; the rest is as before.
-- ============================================================================

create or replace function public.identity_resolve(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object(
    'identity_id', i.id,
    'erased', i.erased_at is not null,
    'baseline', i.baseline,
    -- Only which key the template is under: the 1:1 check is face_template_verify's, in the store (D-680).
    'template', (select jsonb_build_object('key_id', t.key_id) from private.face_templates t where t.identity_id = i.id),
    'document', (select jsonb_build_object('document_type', d.document_type, 'issuing_country', d.issuing_country,
                                           'expires_on', d.expires_on, 'date_of_birth', d.date_of_birth)
                 from private.identity_documents d
                 where d.identity_id = i.id and d.expires_on >= ((p ->> 'now')::timestamptz at time zone 'UTC')::date
                 order by d.expires_on desc limit 1),
    'consent_revoked', not exists (select 1 from private.consents c
                                   where c.identity_id = i.id and c.merchant_id = (p ->> 'merchant_id')::uuid
                                     and c.revoked_at is null),
    'session_active', case when p ? 'session_token_hash' then exists (
                        select 1 from private.sessions s
                        where s.token_hash = p ->> 'session_token_hash' and s.identity_id = i.id
                          and s.revoked_at is null and s.expires_at > (p ->> 'now')::timestamptz) end
  )
  from private.identities i
  where i.environment = p ->> 'environment'
    and exists (select 1 from private.consents c where c.identity_id = i.id and c.merchant_id = (p ->> 'merchant_id')::uuid)
    and i.id = coalesce(
      (p ->> 'user_id')::uuid,
      (select s.identity_id from private.subject_refs s
       where s.merchant_id = (p ->> 'merchant_id')::uuid and s.subject_ref = p ->> 'subject_ref'))
$$;
comment on function public.identity_resolve(jsonb) is
  'Everything the transaction sink and /v1 attributes need about one identity, in one read (the document''s date of birth answers age attributes).';
