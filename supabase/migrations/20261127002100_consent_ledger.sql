-- ============================================================================
-- Consent ledger: every consent a person gave (at enrolment), every disclosure
-- made under it, and every end of either (withdrawal, retention run out,
-- revocation of a disclosure, erasure of what a consent covered), as rows of
-- one append-only ledger, hash-chained per identity. private.consents, the
-- enrolment consents the rest of the schema reads (merchant isolation of
-- face-identify and the sink), becomes a view over the ledger; writing to it
-- appends. consent_ledger_verify checks every chain (the CLI: consent verify).
-- ============================================================================

-- ----------------------------------------------------------------------------
-- The ledger
-- ----------------------------------------------------------------------------
create table private.consent_ledger (
  id uuid primary key default gen_random_uuid(),
  identity_id uuid not null references private.identities (id),
  seq bigint not null check (seq >= 1),
  kind text not null check (kind in ('consent_granted', 'consent_withdrawn', 'consent_expired', 'disclosure',
                                     'disclosure_revoked', 'data_erased')),
  merchant_id uuid not null references private.merchants (id),
  refers_to uuid references private.consent_ledger (id),
  consent_token_hash text unique check (consent_token_hash ~ '^[0-9a-f]{64}$'),
  payload jsonb not null default '{}' check (jsonb_typeof(payload) = 'object'),
  recorded_at timestamptz not null,
  prev_hash text not null check (prev_hash ~ '^[0-9a-f]{64}$'),
  row_hash text not null check (row_hash ~ '^[0-9a-f]{64}$'),
  unique (identity_id, seq),
  check ((kind in ('consent_granted', 'disclosure')) = (refers_to is null)),
  check ((kind = 'disclosure') = (consent_token_hash is not null)),
  check (kind <> 'consent_granted' or (length(payload ->> 'version') between 1 and 64
                                       and (payload ->> 'retention_days')::int between 1 and 3650))
);
comment on table private.consent_ledger is 'Append-only, hash-chained per identity: consents given, disclosures made, and their ends. No row is ever updated or deleted (triggers refuse it; nobody is granted either).';
comment on column private.consent_ledger.id is 'Entry id; a disclosure''s id is its disclosure_id.';
comment on column private.consent_ledger.identity_id is 'The person whose chain the entry belongs to.';
comment on column private.consent_ledger.seq is 'Position in the person''s chain, from 1, without gaps.';
comment on column private.consent_ledger.kind is 'consent_granted (enrolment), consent_withdrawn, consent_expired (retention ran out), disclosure, disclosure_revoked, data_erased (what an ended consent covered was erased).';
comment on column private.consent_ledger.merchant_id is 'The merchant the consent or disclosure is with.';
comment on column private.consent_ledger.refers_to is 'The entry this one ends or follows up: the consent withdrawn, expired or erased, the disclosure revoked.';
comment on column private.consent_ledger.consent_token_hash is 'Disclosures only: SHA-256 hex of the consent_token handed to the merchant (the token itself is never stored).';
comment on column private.consent_ledger.payload is 'What the entry records: version and retention_days of a consent; the fields, purpose and expiry of a disclosure (never a disclosed value); counts of what was erased.';
comment on column private.consent_ledger.recorded_at is 'Server time of the entry.';
comment on column private.consent_ledger.prev_hash is 'row_hash of the previous entry of the same person (64 zeros for the first).';
comment on column private.consent_ledger.row_hash is 'SHA-256 hex of the entry (private.consent_entry_hash), prev_hash included: the chain.';
create unique index consent_ledger_ends_idx on private.consent_ledger (refers_to)
  where kind in ('consent_withdrawn', 'consent_expired', 'disclosure_revoked');
create unique index consent_ledger_erased_idx on private.consent_ledger (refers_to) where kind = 'data_erased';
create index consent_ledger_grants_idx on private.consent_ledger (identity_id, merchant_id) where kind = 'consent_granted';

-- a merchant's consented persons, where face_template_search starts when they are few
create index consent_ledger_merchant_grants_idx on private.consent_ledger (merchant_id, identity_id) where kind = 'consent_granted';
create index consent_ledger_grants_time_idx on private.consent_ledger (recorded_at) where kind = 'consent_granted';

-- ----------------------------------------------------------------------------
-- Chain heads: the last entry of each person's chain, locked by every append
-- ----------------------------------------------------------------------------
create table private.consent_chain_heads (
  identity_id uuid primary key references private.identities (id),
  seq bigint not null check (seq >= 0),
  row_hash text not null check (row_hash ~ '^[0-9a-f]{64}$')
);
comment on table private.consent_chain_heads is 'The head of each person''s consent chain. An append locks it for update, so concurrent appends line up into one chain; verification compares it with the last entry (a removed tail shows).';
comment on column private.consent_chain_heads.identity_id is 'The person.';
comment on column private.consent_chain_heads.seq is 'seq of the last entry (0 before the first).';
comment on column private.consent_chain_heads.row_hash is 'row_hash of the last entry (64 zeros before the first).';

-- ----------------------------------------------------------------------------
-- The enrolment consents, read from the ledger
-- ----------------------------------------------------------------------------
-- private.consents: the enrolment consents as the ledger holds them, each with the time it ended
-- (withdrawn, or its retention ran out) as revoked_at. Everything that asks "did this person consent
-- with this merchant" reads it (face_template_search, face_identify, identity_resolve, identity_enroll).
create view private.consents as
select g.id, g.identity_id, g.merchant_id, g.payload ->> 'version' as version,
       (g.payload ->> 'retention_days')::int as retention_days, g.recorded_at as granted_at, e.recorded_at as revoked_at
from private.consent_ledger g
left join private.consent_ledger e on e.refers_to = g.id and e.kind in ('consent_withdrawn', 'consent_expired')
where g.kind = 'consent_granted';
comment on view private.consents is 'Enrolment consents, read from the consent ledger; an insert appends a consent_granted entry.';
comment on column private.consents.id is 'The consent_granted entry.';
comment on column private.consents.identity_id is 'Who consented.';
comment on column private.consents.merchant_id is 'Through which merchant.';
comment on column private.consents.version is 'Version of the consent text the person accepted.';
comment on column private.consents.retention_days is 'How long what the consent covers may be kept, from granted_at.';
comment on column private.consents.granted_at is 'When consent was given.';
comment on column private.consents.revoked_at is 'When the consent ended: withdrawn, or its retention ran out (null while it stands).';
