-- ============================================================================
-- Owner invitations (issue 30): an owner is added through the account's API by
-- inviting a person the merchant holds (by subject_ref); the person accepts by
-- proving presence in a recognise session made for the invitation. Accepting
-- is the session's approved outcome (a trigger in supabase/domains/management.sql).
-- ============================================================================
create table private.owner_invitations (
  id uuid primary key default gen_random_uuid(),
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  subject_ref text not null,
  session_id uuid not null unique references private.hosted_sessions (id),
  invited_by text not null check (length(invited_by) between 1 and 100),
  created_at timestamptz not null,
  expires_at timestamptz not null,
  accepted_at timestamptz,
  foreign key (merchant_id, subject_ref) references private.subject_refs (merchant_id, subject_ref),
  check (expires_at > created_at),
  check (accepted_at is null or accepted_at >= created_at)
);
comment on table private.owner_invitations is
  'An invitation to own a merchant: the person named accepts by proving presence in the recognise session made for it.';
comment on column private.owner_invitations.id is 'The invitation''s id (responses show inv_ + 32 hex).';
comment on column private.owner_invitations.merchant_id is 'The merchant to be owned.';
comment on column private.owner_invitations.environment is 'The workspace the invitation was made in (the person''s environment).';
comment on column private.owner_invitations.subject_ref is 'The person invited, by the merchant''s pseudonym for them.';
comment on column private.owner_invitations.session_id is 'The recognise session the person accepts in: its approved outcome makes them an owner.';
comment on column private.owner_invitations.invited_by is 'Who invited: the key''s id (key_…) or the owner''s subject_ref.';
comment on column private.owner_invitations.created_at is 'When it was made.';
comment on column private.owner_invitations.expires_at is 'When it lapses unaccepted: its session''s end.';
comment on column private.owner_invitations.accepted_at is 'When the person proved presence and became an owner; null until then.';
create index owner_invitations_merchant_idx on private.owner_invitations (merchant_id, environment, created_at desc);
