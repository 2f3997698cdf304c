-- ============================================================================
-- Agent verification cards (function API 2.8, 3.2, 4.14, 4.15): an owner of a
-- merchant, or an agent an owner authorised, asks a person to prove presence on
-- the hosted capture screen. A card is a hosted session of action `verify`
-- (one capture, identified among the merchant's persons, then the sink's
-- ACTION_LOGIN) plus what the person is told: who asks and for what purpose.
--
-- States (docs/decisions.md, "Agent verification cards"), derived at every read
-- from the card's session, so the session's row is the one fact:
--   pending   session open (its token never exchanged)
--   opened    session opened (the screen booted, once)
--   verified  session completed (the capture was judged and approved)
--   refused   session failed or cancelled (result.reason names why)
--   expired   session expired (derived from expires_at; nothing has to run)
-- Nothing writes a card's state: only the screen's completion, through the
-- sink, moves its session. Single use is the session's row lock.
-- A card's session is the service's, not the merchant's: no merchant key
-- exchanges or reads it, and it writes no webhook (function API 6 rule 4).
-- ============================================================================

alter table private.hosted_sessions drop constraint hosted_sessions_action_check;
alter table private.hosted_sessions
  add constraint hosted_sessions_action_check check (action in ('enroll', 'login', 'authorize', 'sign', 'verify'));
comment on column private.hosted_sessions.action is 'What the screen asks of the person: enroll, login, authorize (a payment), sign, or verify (an agent verification card: prove presence).';

create table private.agent_verifications (
  id uuid primary key,
  session_id uuid not null unique references private.hosted_sessions (id),
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  external_ref text check (length(external_ref) between 1 and 200),
  purpose text check (char_length(purpose) between 1 and 140),
  owner_identity_id uuid not null references private.identities (id),
  agent_client_id text check (length(agent_client_id) between 1 and 512),
  agent_name text check (char_length(agent_name) between 1 and 200),
  created_at timestamptz not null,
  constraint agent_verifications_agent check (agent_name is null or agent_client_id is not null)
);
comment on table private.agent_verifications is 'Agent verification cards: who asked a person to prove presence, and why. The state is the card''s hosted session''s.';
comment on column private.agent_verifications.id is 'Card id (responses show it as av_<32 hex>).';
comment on column private.agent_verifications.session_id is 'The hosted session (action verify) whose single-use token the card''s url carries; its state is the card''s.';
comment on column private.agent_verifications.merchant_id is 'The merchant the card is minted for; the requester owns it (or an owner authorised the agent for it).';
comment on column private.agent_verifications.environment is 'test or live: the owner''s environment; the capture is judged in it.';
comment on column private.agent_verifications.external_ref is 'The requester''s own reference, returned unchanged.';
comment on column private.agent_verifications.purpose is 'Why the requester asks, at most 140 characters; shown to the person on the screen.';
comment on column private.agent_verifications.owner_identity_id is 'The owner who minted the card, or who authorised the agent that did.';
comment on column private.agent_verifications.agent_client_id is 'The OAuth client_id of the agent that minted the card; null when the owner minted it with a first-party session.';
comment on column private.agent_verifications.agent_name is 'The agent''s registered client name, shown to the person (self-registered, so marked unverified); null when the owner minted the card or the client has no name.';
comment on column private.agent_verifications.created_at is 'Request clock at minting.';
create index agent_verifications_merchant_idx on private.agent_verifications (merchant_id, created_at);
