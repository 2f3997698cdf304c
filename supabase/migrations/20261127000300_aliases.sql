-- ============================================================================
-- Aliases: public handles of people (spec 2.10, 3.4, 4.17)
-- One row per (environment, alias) holds it, either reserved by a merchant's
-- key for a while or claimed by an identity for good. The primary key is the
-- whole concurrency story: two live holders of one alias cannot exist, and an
-- expired reservation is replaced inside the same INSERT ... ON CONFLICT.
-- Expiry needs nothing running: every read compares expires_at with the
-- request clock the edge passes in as `now`.
-- Uniqueness is per environment across all merchants: an alias names a person,
-- not a merchant's customer; sandbox (test) and production (live) are apart.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- Aliases
-- ----------------------------------------------------------------------------
create table private.aliases (
  environment text not null check (environment in ('test', 'live')),
  alias text not null check (alias ~ '^[a-z][a-z0-9_]{2,29}$' and alias !~ '__' and alias !~ '_$'),
  state text not null check (state in ('reserved', 'claimed')),
  merchant_id uuid references private.merchants (id),
  claim_token_hash text check (claim_token_hash ~ '^[0-9a-f]{64}$'),
  reserved_at timestamptz,
  expires_at timestamptz,
  identity_id uuid,
  claimed_at timestamptz,
  primary key (environment, alias),
  constraint aliases_reserved_shape check (
    state <> 'reserved'
    or (merchant_id is not null and claim_token_hash is not null and reserved_at is not null
        and expires_at > reserved_at and identity_id is null and claimed_at is null)
  ),
  constraint aliases_claimed_shape check (
    state <> 'claimed' or (identity_id is not null and claimed_at is not null and expires_at is null)
  )
);
comment on table private.aliases is 'Who holds each alias of an environment: a timed reservation or a claim by an identity. A row absent, or reserved with expires_at not after the request clock, means free.';
comment on column private.aliases.environment is 'test or live, from the key prefix; aliases are unique per environment across all merchants.';
comment on column private.aliases.alias is 'The normalised alias; the database re-checks the format rule (reserved words are the edge''s).';
comment on column private.aliases.state is 'reserved (held until expires_at by the merchant whose key reserved it) or claimed (attached to identity_id, no expiry).';
comment on column private.aliases.merchant_id is 'Merchant whose key made the reservation; only it can release. Kept on claim as the merchant it was claimed through.';
comment on column private.aliases.claim_token_hash is 'Lowercase hex SHA-256 of the claim_token returned by reserve; the token itself is never stored.';
comment on column private.aliases.reserved_at is 'Request clock when the current reservation was made.';
comment on column private.aliases.expires_at is 'End of the reservation (request clock + ttl_seconds); null once claimed.';
comment on column private.aliases.identity_id is 'Opaque reference to the identity the alias is attached to. No RPC claims an alias yet: the one that does sets it, and adds the foreign key to private.identities.';
comment on column private.aliases.claimed_at is 'When the alias was attached to identity_id; null while only reserved.';
