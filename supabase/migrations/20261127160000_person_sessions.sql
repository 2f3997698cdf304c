-- ============================================================================
-- The person's own page (issue 31; docs/decisions.md, D-465 to D-467): a
-- person signs in on the service's own origin by proving presence, and holds
-- a short session of their own, which belongs to no merchant.
--
-- Before device binding names the person (a passkey's user handle), the
-- sign-in rides on a hosted `login` session of a merchant the person is known
-- by (the merchant's link names it): the screen identifies the face among
-- that merchant's persons, and the pseudonym it answers leads to the identity.
-- The sign-in is bound to the browser that started it (the SHA-256 of a secret
-- in a host-only cookie) and signs in once, within ten minutes of the capture.
-- ============================================================================

create table private.person_sign_ins (
  session_id uuid primary key references private.hosted_sessions (id),
  browser_hash text not null check (browser_hash ~ '^[0-9a-f]{64}$'),
  created_at timestamptz not null,
  used_at timestamptz
);
comment on table private.person_sign_ins is 'Hosted login sessions opened for a person to sign in to their own page by proving presence; each signs in once.';
comment on column private.person_sign_ins.session_id is 'The hosted login session the person proves presence in.';
comment on column private.person_sign_ins.browser_hash is 'Lowercase hex SHA-256 of the secret in the browser''s sign-in cookie: the sign-in serves the browser that started it only.';
comment on column private.person_sign_ins.created_at is 'Request clock when the sign-in was started.';
comment on column private.person_sign_ins.used_at is 'When the session signed the person in; null until then. Set once.';

create table private.person_sessions (
  id uuid primary key,
  token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
  csrf_hash text not null check (csrf_hash ~ '^[0-9a-f]{64}$'),
  identity_id uuid not null references private.identities (id),
  environment text not null check (environment in ('test', 'live')),
  proof text not null check (proof in ('hosted_login')),
  proof_session_id uuid references private.hosted_sessions (id),
  idle_seconds integer not null check (idle_seconds between 60 and 3600),
  created_at timestamptz not null,
  last_seen_at timestamptz not null,
  expires_at timestamptz not null check (expires_at > created_at),
  ended_at timestamptz,
  ended_reason text check (ended_reason in ('signed_out', 'erased')),
  check ((ended_at is null) = (ended_reason is null))
);
comment on table private.person_sessions is 'A person''s session on their own page: short, idle and absolute timeouts, one identity in one environment, no merchant.';
comment on column private.person_sessions.id is 'Session id (never shown; the cookie holds the token).';
comment on column private.person_sessions.token_hash is 'Lowercase hex SHA-256 of the session token in the __Host- cookie.';
comment on column private.person_sessions.csrf_hash is 'Lowercase hex SHA-256 of the CSRF token every state-changing request carries in x-csrf-token.';
comment on column private.person_sessions.identity_id is 'The person signed in.';
comment on column private.person_sessions.environment is 'The environment of the identity: a session sees that environment only.';
comment on column private.person_sessions.proof is 'How the person proved who they are: hosted_login (a face identified on a merchant''s hosted login session); a passkey with device binding.';
comment on column private.person_sessions.proof_session_id is 'The hosted session whose capture signed the person in.';
comment on column private.person_sessions.idle_seconds is 'The session ends after this long without a request.';
comment on column private.person_sessions.created_at is 'Sign-in time.';
comment on column private.person_sessions.last_seen_at is 'The last request the session authenticated: the idle timeout counts from it.';
comment on column private.person_sessions.expires_at is 'Absolute end, whatever the activity.';
comment on column private.person_sessions.ended_at is 'When the session was ended before its time (signed out, or the identity erased); null while it may run.';
comment on column private.person_sessions.ended_reason is 'signed_out or erased.';
create index person_sessions_identity_idx on private.person_sessions (identity_id);
