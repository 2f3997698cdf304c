-- ============================================================================
-- Identities, consent, sessions, protected templates, documents, captures,
-- receipts and anchors.
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

-- face_template_search({environment, key_id, embedding, limit, exact}) -> [{identity_id, similarity, reachable}]
-- Erased identities are still found (reachable = false) until their templates are purged, so a
-- returning face is told it cannot be reached instead of silently becoming a second identity.
create or replace function public.face_template_search(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
declare
  v_query real[] := array(select jsonb_array_elements_text(p -> 'embedding')::real);
  v_limit int := least(greatest(coalesce((p ->> 'limit')::int, 1), 1), 50);
  v_result jsonb;
begin
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
comment on function public.face_template_search(jsonb) is '1:N search over protected templates: HNSW where pgvector exists (unless exact is asked), exact scan otherwise.';

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
