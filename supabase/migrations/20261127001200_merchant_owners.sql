-- ============================================================================
-- Merchant owners (issue 13): the people who may authorise AI agents to act for
-- a merchant. An owner is an enrolled identity of the merchant, named by the
-- pseudonym the merchant holds for it (subject_ref), so the operator never
-- handles the identity id. An identity belongs to one environment, and so does
-- its ownership: an owner enrolled with sandbox keys authorises sandbox agents.
-- ============================================================================

create table private.merchant_owners (
  merchant_id uuid not null references private.merchants (id),
  identity_id uuid not null references private.identities (id),
  environment text not null check (environment in ('test', 'live')),
  subject_ref text not null,
  added_at timestamptz not null,
  primary key (merchant_id, identity_id),
  foreign key (merchant_id, subject_ref) references private.subject_refs (merchant_id, subject_ref)
);
comment on table private.merchant_owners is 'People who own a merchant: they alone may authorise an agent (an OAuth client) to act for it.';
comment on column private.merchant_owners.merchant_id is 'The merchant owned.';
comment on column private.merchant_owners.identity_id is 'The owner: an identity enrolled with this merchant.';
comment on column private.merchant_owners.environment is 'The identity''s environment (test or live): agents it authorises act in that environment only.';
comment on column private.merchant_owners.subject_ref is 'The merchant''s pseudonym for the owner, by which the operator names it.';
comment on column private.merchant_owners.added_at is 'When the identity became an owner.';
create index merchant_owners_identity_idx on private.merchant_owners (identity_id);
