-- ============================================================================
-- An owner signs in at the MCP authorization endpoint by proving presence on
-- the hosted capture screen (issue 13; docs/decisions.md, "Agents: owner
-- sign-in by proving presence").
--
-- The endpoint opens a hosted `login` session for the business the person
-- names and binds it to the pending authorization request (the SHA-256 of its
-- query) and to the browser that asked (the SHA-256 of a secret in a host-only
-- cookie). Once the screen identified the person, the same browser, on the
-- same request, turns the session into a sign-in: once, within ten minutes of
-- the capture, and only if the person identified owns the business.
-- ============================================================================

create table private.agent_sign_ins (
  session_id uuid primary key references private.hosted_sessions (id),
  request_hash text not null check (request_hash ~ '^[0-9a-f]{64}$'),
  browser_hash text not null check (browser_hash ~ '^[0-9a-f]{64}$'),
  created_at timestamptz not null,
  used_at timestamptz
);
comment on table private.agent_sign_ins is 'Hosted login sessions the MCP authorization endpoint opened for an owner to sign in by proving presence; each signs in once.';
comment on column private.agent_sign_ins.session_id is 'The hosted login session the person proves presence in.';
comment on column private.agent_sign_ins.request_hash is 'Lowercase hex SHA-256 of the pending authorization request''s query: the sign-in serves that request only.';
comment on column private.agent_sign_ins.browser_hash is 'Lowercase hex SHA-256 of the secret in the browser''s sign-in cookie: the sign-in serves the browser that started it only.';
comment on column private.agent_sign_ins.created_at is 'Request clock when the endpoint opened the session.';
comment on column private.agent_sign_ins.used_at is 'When the session signed the owner in; null until then. Set once.';
