-- ============================================================================
-- Persons: the passkey sign-in to a person's own page (docs/decisions.md,
-- D-601, D-602). The service issues a single-use challenge to one browser; a
-- discoverable credential's assertion over it names the person (its user handle
-- is the one the credential was registered with), and a hosted login session
-- for that person alone confirms the face. Refused attempts are counted per
-- credential for the lockout.
-- ============================================================================

create table private.person_passkey_challenges (
  challenge_hash text primary key check (challenge_hash ~ '^[0-9a-f]{64}$'),
  environment text not null check (environment in ('test', 'live')),
  browser_hash text not null check (browser_hash ~ '^[0-9a-f]{64}$'),
  created_at timestamptz not null,
  expires_at timestamptz not null check (expires_at > created_at and expires_at <= created_at + interval '10 minutes'),
  consumed_at timestamptz,
  check (consumed_at is null or consumed_at >= created_at)
);
comment on table private.person_passkey_challenges is
  'Challenges the service issued for a passkey sign-in to a person''s page: single use, short-lived, for one browser and environment.';
comment on column private.person_passkey_challenges.challenge_hash is 'SHA-256 hex of the challenge; the challenge itself is never stored.';
comment on column private.person_passkey_challenges.environment is 'The environment whose credentials may answer it.';
comment on column private.person_passkey_challenges.browser_hash is
  'SHA-256 hex of the secret in the browser''s sign-in cookie: only that browser''s assertion consumes it.';
comment on column private.person_passkey_challenges.created_at is 'When it was issued (request clock).';
comment on column private.person_passkey_challenges.expires_at is 'After this it is refused (two minutes after issue).';
comment on column private.person_passkey_challenges.consumed_at is 'When an assertion consumed it, whatever its verification concluded: a challenge is tried once.';
create index person_passkey_challenges_expires_idx on private.person_passkey_challenges (expires_at);

create table private.person_passkey_refusals (
  id bigint generated always as identity primary key,
  environment text not null check (environment in ('test', 'live')),
  credential_id text not null check (length(credential_id) between 22 and 1364),
  reason text not null check (reason ~ '^[a-z_]{1,40}$'),
  refused_at timestamptz not null,
  sign_in_session_id uuid unique references private.person_sign_ins (session_id)
);
comment on table private.person_passkey_refusals is
  'Refused passkey sign-ins to a person''s page, per credential: five within fifteen minutes lock the credential''s sign-in for fifteen minutes.';
comment on column private.person_passkey_refusals.id is 'The refusal''s row id (insertion order).';
comment on column private.person_passkey_refusals.environment is 'The environment of the sign-in.';
comment on column private.person_passkey_refusals.credential_id is 'The credential id the assertion named (base64url), known to the service or not.';
comment on column private.person_passkey_refusals.reason is 'Why: a device refusal (signature_invalid, user_not_verified, user_handle_mismatch, ...) or face_refused.';
comment on column private.person_passkey_refusals.refused_at is 'When (request clock).';
comment on column private.person_passkey_refusals.sign_in_session_id is 'For face_refused: the sign-in whose face was refused (counted once).';
create index person_passkey_refusals_credential_idx on private.person_passkey_refusals (credential_id, refused_at);

alter table private.person_sign_ins
  add column device_id uuid references private.device_credentials (id);
comment on column private.person_sign_ins.device_id is
  'The passkey whose assertion named the person for this sign-in (its screen confirms that person''s face); null for a sign-in through a merchant''s link.';

alter table private.person_sessions drop constraint person_sessions_proof_check;
alter table private.person_sessions
  add constraint person_sessions_proof_check check (proof in ('hosted_login', 'passkey')),
  add column device_id uuid references private.device_credentials (id),
  add constraint person_sessions_passkey_device check ((proof = 'passkey') = (device_id is not null));
comment on column private.person_sessions.device_id is 'With proof passkey, the credential that named the person; null otherwise.';

-- A login session may be for one person (its facetoken) when a passkey sign-in to the person's page opened it:
-- the screen then refuses another face as subject_mismatch. Every other rule of the mode constraint is kept.
alter table private.hosted_sessions
  drop constraint hosted_sessions_mode,
  add constraint hosted_sessions_mode check (
    case when action in ('claim', 'recognise', 'attribute', 'mandate') then
           ttl_seconds = 1800 and return_url is not null and cancel_url is not null
           and (facetoken is not null) = (action <> 'claim')
           and (attribute is not null) = (action = 'attribute')
           and (mandate_terms is not null) = (action = 'mandate')
         else
           ttl_seconds between 60 and 900 and return_url is null and cancel_url is null
           and (facetoken is null or action = 'login')
           and attribute is null and mandate_terms is null and branding is null and locale is null
    end);
comment on column private.hosted_sessions.facetoken is
  '/v1 modes recognise, attribute and mandate, and a login opened by a person''s passkey sign-in: the merchant''s facetoken (subject_ref) of the person the session is for.';
