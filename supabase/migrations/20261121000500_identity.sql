-- ============================================================================
-- Identity: people enrolled with face and voice, their consent, first-party
-- sessions, protected face templates and verified documents; the pseudonym
-- (subject_ref) each merchant holds for a person, and the capture nonces
-- already used. RPCs: enroll, identify, search templates, resolve an identity.
-- No image and no raw template is stored: face_templates holds only the
-- protected form (a rotation under a key held outside the database).
-- ============================================================================

-- ----------------------------------------------------------------------------
-- Identities
-- ----------------------------------------------------------------------------
create table private.identities (
  id uuid primary key default gen_random_uuid(),
  environment text not null check (environment in ('test', 'live')),
  baseline jsonb,
  created_at timestamptz not null,
  erased_at timestamptz
);
comment on table private.identities is 'A person enrolled with face and voice. The id is the engine-minted user_id; merchants only ever see subject_ref.';
comment on column private.identities.id is 'user_id, minted here at enrollment; never chosen by a client.';
comment on column private.identities.environment is 'test (sandbox) or live: identities never cross environments.';
comment on column private.identities.baseline is 'Physiological baseline (resting heart rate, variability) from accepted captures, for the coercion check.';
comment on column private.identities.created_at is 'Enrollment time.';
comment on column private.identities.erased_at is 'Set when the identity was erased; an erased identity is unreachable.';

-- ----------------------------------------------------------------------------
-- Consent ledger
-- ----------------------------------------------------------------------------
create table private.consents (
  id uuid primary key default gen_random_uuid(),
  identity_id uuid not null references private.identities (id),
  merchant_id uuid not null references private.merchants (id),
  version text not null check (length(version) between 1 and 64),
  retention_days int not null check (retention_days between 1 and 3650),
  granted_at timestamptz not null,
  revoked_at timestamptz
);
comment on table private.consents is 'Consent given at enrollment (and later disclosures): version and retention, per merchant.';
comment on column private.consents.id is 'Consent record id.';
comment on column private.consents.identity_id is 'Who consented.';
comment on column private.consents.merchant_id is 'Through which merchant.';
comment on column private.consents.version is 'Version of the consent text the person accepted.';
comment on column private.consents.retention_days is 'How long biometric data may be kept under this consent.';
comment on column private.consents.granted_at is 'When consent was given.';
comment on column private.consents.revoked_at is 'When consent was withdrawn.';
create index consents_identity_idx on private.consents (identity_id);
create index consents_merchant_active_idx on private.consents (merchant_id, identity_id) where revoked_at is null;

-- ----------------------------------------------------------------------------
-- First-party sessions
-- ----------------------------------------------------------------------------
create table private.sessions (
  id uuid primary key default gen_random_uuid(),
  identity_id uuid not null references private.identities (id),
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
  created_at timestamptz not null,
  expires_at timestamptz not null,
  revoked_at timestamptz
);
comment on table private.sessions is 'First-party sessions minted at enrollment; only the SHA-256 of the session token is stored.';
comment on column private.sessions.id is 'Session id.';
comment on column private.sessions.identity_id is 'The person the session belongs to.';
comment on column private.sessions.merchant_id is 'Merchant whose integration enrolled the person.';
comment on column private.sessions.environment is 'test or live.';
comment on column private.sessions.token_hash is 'SHA-256 hex of the session token (the token is a user JWT handed to the device once).';
comment on column private.sessions.created_at is 'Mint time.';
comment on column private.sessions.expires_at is 'Expiry of the session token.';
comment on column private.sessions.revoked_at is 'Set when the session was ended early.';
create index sessions_identity_idx on private.sessions (identity_id);

-- ----------------------------------------------------------------------------
-- Protected face templates (1:N search)
-- ----------------------------------------------------------------------------
create table private.face_templates (
  identity_id uuid primary key references private.identities (id),
  environment text not null check (environment in ('test', 'live')),
  key_id text not null,
  embedding real[] not null check (cardinality(embedding) = 128),
  created_at timestamptz not null
);
comment on table private.face_templates is 'Protected templates only: the face embedding rotated by a secret orthonormal matrix whose key lives outside the database.';
comment on column private.face_templates.identity_id is 'The identity this template recognises.';
comment on column private.face_templates.environment is 'test or live; searches never cross environments.';
comment on column private.face_templates.key_id is 'Fingerprint of the protection key; rotating the key makes every older template unsearchable.';
comment on column private.face_templates.embedding is 'Unit-norm protected embedding (128 dimensions).';
comment on column private.face_templates.created_at is 'When the template was stored.';
create index face_templates_scope_idx on private.face_templates (environment, key_id);

-- Where pgvector exists (the embedded default has it), a generated vector column with an HNSW
-- index serves 1:N search; elsewhere the search is an exact scan over the real[] column.
do $$
begin
  if exists (select 1 from pg_available_extensions where name = 'vector') then
    create extension if not exists vector;
    execute 'alter table private.face_templates add column embedding_vector public.vector(128)
             generated always as (embedding::public.vector(128)) stored';
    execute 'comment on column private.face_templates.embedding_vector is ''The protected embedding as a pgvector value, for the HNSW index.''';
    execute 'create index face_templates_hnsw_idx on private.face_templates
             using hnsw (embedding_vector public.vector_cosine_ops)';
  end if;
end $$;

-- face_template_search({environment, key_id, embedding, limit, exact, merchant_id?}) -> [{identity_id, similarity, reachable}]
-- Erased identities are still found (reachable = false) until their templates are purged, so a
-- returning face is told it cannot be reached instead of silently becoming a second identity.
-- With merchant_id, only persons with an active consent for that merchant are searched (isolation by
-- merchant: face-identify and the sink's mismatch search); enrollment searches the whole environment,
-- so that the same face never becomes a second identity. With pgvector the merchant's search walks the
-- HNSW index with an iterative scan (a plain filtered scan could stop before reaching a consented face);
-- without it, it is an exact scan over the merchant's consented persons.
create or replace function public.face_template_search(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
declare
  v_query real[] := array(select jsonb_array_elements_text(p -> 'embedding')::real);
  v_limit int := least(greatest(coalesce((p ->> 'limit')::int, 1), 1), 50);
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
  v_result jsonb;
begin
  if v_merchant is not null and coalesce((p ->> 'exact')::boolean, false) = false and exists (
    select 1 from information_schema.columns
    where table_schema = 'private' and table_name = 'face_templates' and column_name = 'embedding_vector'
  ) then
    -- The index walk goes on past faces without this merchant's consent (pgvector >= 0.8 iterative scan,
    -- bounded by hnsw.max_scan_tuples), so the filter does not cost recall.
    perform set_config('hnsw.iterative_scan', 'strict_order', true);
    execute format($q$
      select coalesce(jsonb_agg(jsonb_build_object('identity_id', identity_id, 'similarity', similarity, 'reachable', reachable)
                                order by similarity desc), '[]')
      from (
        select t.identity_id, 1 - (t.embedding_vector operator(public.<=>) $1::public.vector(128)) as similarity,
               i.erased_at is null as reachable
        from private.face_templates t
        join private.identities i on i.id = t.identity_id
        where t.environment = $2 and t.key_id = $3
          and exists (select 1 from private.consents c
                      where c.identity_id = t.identity_id and c.merchant_id = $5 and c.revoked_at is null)
        order by t.embedding_vector operator(public.<=>) $1::public.vector(128)
        limit $4
      ) best$q$)
    into v_result using v_query, p ->> 'environment', p ->> 'key_id', v_limit, v_merchant;
    return v_result;
  end if;
  if v_merchant is not null then
    select coalesce(jsonb_agg(jsonb_build_object('identity_id', identity_id, 'similarity', similarity, 'reachable', reachable)
                              order by similarity desc), '[]')
    into v_result
    from (
      select t.identity_id,
             (select sum(a * b) from unnest(t.embedding, v_query) as pair(a, b)) as similarity,
             i.erased_at is null as reachable
      from private.face_templates t
      join private.identities i on i.id = t.identity_id
      where t.environment = p ->> 'environment' and t.key_id = p ->> 'key_id'
        and exists (select 1 from private.consents c
                    where c.identity_id = t.identity_id and c.merchant_id = v_merchant and c.revoked_at is null)
      order by similarity desc
      limit v_limit
    ) best;
    return v_result;
  end if;
  if coalesce((p ->> 'exact')::boolean, false) = false and exists (
    select 1 from information_schema.columns
    where table_schema = 'private' and table_name = 'face_templates' and column_name = 'embedding_vector'
  ) then
    execute format($q$
      select coalesce(jsonb_agg(jsonb_build_object('identity_id', identity_id, 'similarity', similarity, 'reachable', reachable)
                                order by similarity desc), '[]')
      from (
        select t.identity_id, 1 - (t.embedding_vector operator(public.<=>) $1::public.vector(128)) as similarity,
               i.erased_at is null as reachable
        from private.face_templates t
        join private.identities i on i.id = t.identity_id
        where t.environment = $2 and t.key_id = $3
        order by t.embedding_vector operator(public.<=>) $1::public.vector(128)
        limit $4
      ) best$q$)
    into v_result using v_query, p ->> 'environment', p ->> 'key_id', v_limit;
    return v_result;
  end if;
  select coalesce(jsonb_agg(jsonb_build_object('identity_id', identity_id, 'similarity', similarity, 'reachable', reachable)
                            order by similarity desc), '[]')
  into v_result
  from (
    select t.identity_id,
           (select sum(a * b) from unnest(t.embedding, v_query) as pair(a, b)) as similarity,
           i.erased_at is null as reachable
    from private.face_templates t
    join private.identities i on i.id = t.identity_id
    where t.environment = p ->> 'environment' and t.key_id = p ->> 'key_id'
    order by similarity desc
    limit v_limit
  ) best;
  return v_result;
end $$;
comment on function public.face_template_search(jsonb) is '1:N search over protected templates: HNSW where pgvector exists (unless exact is asked), exact scan otherwise; with merchant_id, only persons with an active consent for that merchant.';

-- face_identify({environment, merchant_id, key_id, embedding, capture_nonce, now}) -> {identity_id, similarity} | {}
-- face-identify in one call: claims the capture's identification (HA411 when the capture was used
-- before, see private.capture_nonces) and answers the best match among the persons who consented
-- with this merchant and were not erased; {} when there is none.
create or replace function public.face_identify(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_best jsonb;
begin
  perform private.capture_nonce_claim(p ->> 'environment', p ->> 'capture_nonce', (p ->> 'merchant_id')::uuid, 'identify',
    (p ->> 'now')::timestamptz);
  v_best := public.face_template_search(jsonb_build_object('environment', p ->> 'environment', 'key_id', p ->> 'key_id',
    'embedding', p -> 'embedding', 'merchant_id', p ->> 'merchant_id', 'limit', 1)) -> 0;
  if v_best is null or not (v_best ->> 'reachable')::boolean then
    return '{}'::jsonb;
  end if;
  return jsonb_build_object('identity_id', v_best ->> 'identity_id', 'similarity', (v_best ->> 'similarity')::real);
end $$;
comment on function public.face_identify(jsonb) is 'face-identify: claims the capture''s identification and answers the best match among this merchant''s consented persons.';

-- ----------------------------------------------------------------------------
-- Identity documents
-- ----------------------------------------------------------------------------
create table private.identity_documents (
  id uuid primary key default gen_random_uuid(),
  identity_id uuid not null references private.identities (id),
  document_type text not null check (document_type in ('passport', 'national_id', 'driving_licence', 'residence_permit')),
  issuing_country text not null check (issuing_country ~ '^[A-Z]{2}$'),
  expires_on date not null,
  face_match_score real not null check (face_match_score between -1 and 1),
  verified_at timestamptz not null
);
comment on table private.identity_documents is 'Verified identity documents: the attestation read on the device, kept without its image or number.';
comment on column private.identity_documents.id is 'Document record id.';
comment on column private.identity_documents.identity_id is 'The identity the document belongs to.';
comment on column private.identity_documents.document_type is 'passport, national_id, driving_licence or residence_permit.';
comment on column private.identity_documents.issuing_country is 'ISO 3166-1 alpha-2 issuing country.';
comment on column private.identity_documents.expires_on is 'Document expiry; an expired document is not valid.';
comment on column private.identity_documents.face_match_score is 'Cosine similarity of the document photo embedding to the live face when verified (>= 0.75).';
comment on column private.identity_documents.verified_at is 'When the document was matched to the live face.';
create index identity_documents_identity_idx on private.identity_documents (identity_id, expires_on);

-- ----------------------------------------------------------------------------
-- Subject references: which pseudonym a merchant holds for which identity
-- ----------------------------------------------------------------------------
create table private.subject_refs (
  merchant_id uuid not null references private.merchants (id),
  subject_ref text not null check (subject_ref ~ '^sub_[0-9a-f]{48}$'),
  identity_id uuid not null references private.identities (id),
  created_at timestamptz not null,
  primary key (merchant_id, subject_ref),
  unique (merchant_id, identity_id)
);
comment on table private.subject_refs is 'The subject_ref (HMAC pseudonym) each merchant was given for an identity, so the merchant can name the person back as user_id.';
comment on column private.subject_refs.merchant_id is 'Merchant that holds the pseudonym.';
comment on column private.subject_refs.subject_ref is 'HMAC of identity id and merchant id under a secret held outside the database.';
comment on column private.subject_refs.identity_id is 'The identity behind the pseudonym.';
comment on column private.subject_refs.created_at is 'When the merchant first received it.';

-- ----------------------------------------------------------------------------
-- Capture nonces: what one capture may be used for
-- ----------------------------------------------------------------------------
-- One capture (one capture_nonce, per environment) may be used by one merchant for at most one
-- identification (face-identify) followed by at most one act (enrollment or a transaction), the act
-- within five minutes of the identification. Every use claims the nonce here by primary key inside
-- the RPC that uses it (face_identify, identity_enroll, capture_record); anything else is HA411
-- (409 CAPTURE_REPLAYED). A request that fails with an error rolls its claim back.
create table private.capture_nonces (
  environment text not null check (environment in ('test', 'live')),
  capture_nonce text not null check (length(capture_nonce) between 8 and 128),
  merchant_id uuid not null references private.merchants (id),
  identified_at timestamptz,
  acted_at timestamptz,
  primary key (environment, capture_nonce),
  check (identified_at is not null or acted_at is not null)
);
comment on table private.capture_nonces is 'capture_nonce values already used: one identification then one act (enrollment or transaction), by one merchant.';
comment on column private.capture_nonces.environment is 'test or live: the same nonce in the other environment is another capture.';
comment on column private.capture_nonces.capture_nonce is 'The nonce the descriptor was bound to.';
comment on column private.capture_nonces.merchant_id is 'The merchant that used the capture first; no other merchant may use it.';
comment on column private.capture_nonces.identified_at is 'When face-identify used it (null: never).';
comment on column private.capture_nonces.acted_at is 'When enrollment or the transaction sink used it (null: not yet).';

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
--                  match_threshold, consent: {version, retention_days}, session: {token_hash, expires_at},
--                  presented_session_hash?, baseline?}) -> {identity_id, created}
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
      'environment', v_env, 'key_id', p ->> 'key_id', 'embedding', p -> 'embedding', 'limit', 1, 'exact', true)) -> 0;
    if v_best is not null and (v_best ->> 'similarity')::real >= (p ->> 'match_threshold')::real then
      raise exception 'a concurrent enrollment stored this face' using errcode = 'HA410';
    end if;
    begin
      insert into private.identities (id, environment, baseline, created_at) values (v_identity_id, v_env, p -> 'baseline', v_now);
    exception when others then
      raise exception 'identity insert failed: %', sqlerrm using errcode = 'HA501';
    end;
    begin
      insert into private.face_templates (identity_id, environment, key_id, embedding, created_at)
      values (v_identity_id, v_env, p ->> 'key_id', array(select jsonb_array_elements_text(p -> 'embedding')::real), v_now);
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

  return jsonb_build_object('identity_id', v_identity_id, 'created', not (p ->> 'existing')::boolean);
end $$;
comment on function public.identity_enroll(jsonb) is 'Creates (or re-attaches) an identity with its protected template, consent, subject_ref and first session, atomically.';

-- identity_resolve({merchant_id, environment, user_id?, subject_ref?, session_token_hash?, now}) -> identity facts | null
-- user_id is the identity id (first-party callers); subject_ref is the merchant's pseudonym. A person who
-- never consented with this merchant is unknown to it (null); one whose consents with it were all
-- withdrawn is consent_revoked.
-- session_active reports whether the presented first-party session is still live (not revoked, not expired).
create or replace function public.identity_resolve(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object(
    'identity_id', i.id,
    'erased', i.erased_at is not null,
    'baseline', i.baseline,
    'template', (select jsonb_build_object('key_id', t.key_id, 'embedding', to_jsonb(t.embedding))
                 from private.face_templates t where t.identity_id = i.id),
    'document', (select jsonb_build_object('document_type', d.document_type, 'issuing_country', d.issuing_country,
                                           'expires_on', d.expires_on)
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
comment on function public.identity_resolve(jsonb) is 'Everything the transaction sink needs about one identity, in one read.';
