-- ============================================================================
-- The person's own page (issue 31; docs/decisions.md, D-470): erasing is
-- confirmed by a fresh presence proof, a hosted login session opened from the
-- person's session and bound to it, used once within five minutes of the
-- capture.
-- ============================================================================

create table private.person_presence_proofs (
  session_id uuid primary key references private.hosted_sessions (id),
  person_session_id uuid not null references private.person_sessions (id),
  created_at timestamptz not null,
  used_at timestamptz
);
comment on table private.person_presence_proofs is 'Hosted login sessions a person''s session opened to confirm an erasure by proving presence again; each confirms once.';
comment on column private.person_presence_proofs.session_id is 'The hosted login session the person proves presence in.';
comment on column private.person_presence_proofs.person_session_id is 'The person''s session that asked for it: only that session''s erasure may use it.';
comment on column private.person_presence_proofs.created_at is 'Request clock when it was opened.';
comment on column private.person_presence_proofs.used_at is 'When it confirmed an erasure; null until then. Set once.';
