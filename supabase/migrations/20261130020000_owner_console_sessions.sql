-- ============================================================================
-- The merchant's console (issue 30; docs/decisions.md, D-620 to D-623): an
-- owner signs in by proving presence on the hosted screen of the merchant and
-- environment they chose (a hosted `login` session; the screen identifies the
-- face among that merchant's persons, and the pseudonym it answers must be an
-- owner's), then holds a console session tied to that merchant and
-- environment. The sign-in is bound to the browser that started it (the
-- SHA-256 of a secret in a host-only cookie) and signs in once, within ten
-- minutes of the capture.
-- ============================================================================

create table private.owner_sign_ins (
  session_id uuid primary key references private.hosted_sessions (id),
  browser_hash text not null check (browser_hash ~ '^[0-9a-f]{64}$'),
  created_at timestamptz not null,
  used_at timestamptz
);
comment on table private.owner_sign_ins is 'Hosted login sessions opened for an owner to sign in to the merchant''s console by proving presence; each signs in once.';
comment on column private.owner_sign_ins.session_id is 'The hosted login session (of the merchant and environment chosen) the owner proves presence in.';
comment on column private.owner_sign_ins.browser_hash is 'Lowercase hex SHA-256 of the secret in the browser''s sign-in cookie: the sign-in serves the browser that started it only.';
comment on column private.owner_sign_ins.created_at is 'Request clock when the sign-in was started.';
comment on column private.owner_sign_ins.used_at is 'When the session signed the owner in; null until then. Set once.';

create table private.owner_sessions (
  id uuid primary key,
  token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
  csrf_hash text not null check (csrf_hash ~ '^[0-9a-f]{64}$'),
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  identity_id uuid not null references private.identities (id),
  subject_ref text not null,
  proof_session_id uuid not null references private.hosted_sessions (id),
  idle_seconds integer not null check (idle_seconds between 60 and 3600),
  created_at timestamptz not null,
  last_seen_at timestamptz not null,
  expires_at timestamptz not null check (expires_at > created_at),
  ended_at timestamptz,
  ended_reason text check (ended_reason in ('signed_out', 'signed_out_everywhere')),
  check ((ended_at is null) = (ended_reason is null))
);
comment on table private.owner_sessions is 'An owner''s console session: one merchant and environment, idle and absolute timeouts, ended by sign-out (here or everywhere).';
comment on column private.owner_sessions.id is 'Session id (never shown; the cookie holds the token).';
comment on column private.owner_sessions.token_hash is 'Lowercase hex SHA-256 of the session token in the __Host-console-session cookie.';
comment on column private.owner_sessions.csrf_hash is 'Lowercase hex SHA-256 of the CSRF token every state-changing request carries (header or form field).';
comment on column private.owner_sessions.merchant_id is 'The merchant the console acts for: every page and action is scoped to it.';
comment on column private.owner_sessions.environment is 'The environment (test or live) the console acts in, shown on every page.';
comment on column private.owner_sessions.identity_id is 'The owner signed in; the session stops authenticating once they are no longer an owner.';
comment on column private.owner_sessions.subject_ref is 'The owner''s pseudonym at the merchant: the actor the audit log names for the console''s actions.';
comment on column private.owner_sessions.proof_session_id is 'The hosted login session whose capture signed the owner in.';
comment on column private.owner_sessions.idle_seconds is 'The session ends after this long without a request.';
comment on column private.owner_sessions.created_at is 'Sign-in time.';
comment on column private.owner_sessions.last_seen_at is 'The last request the session authenticated: the idle timeout counts from it.';
comment on column private.owner_sessions.expires_at is 'Absolute end, whatever the activity.';
comment on column private.owner_sessions.ended_at is 'When the session was signed out before its time; null while it may run.';
comment on column private.owner_sessions.ended_reason is 'signed_out (this session), or signed_out_everywhere (every console session of the owner).';
create index owner_sessions_identity_idx on private.owner_sessions (identity_id) where ended_at is null;

-- The console's overview counts the environment's checks per day and lists its latest refusals
-- (management_checks_by_day): a merchant's sessions by creation time.
create index hosted_sessions_merchant_created_idx on private.hosted_sessions (merchant_id, environment, created_at desc);
