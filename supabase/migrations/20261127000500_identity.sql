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
