-- ============================================================================
-- Management (issue 30): a merchant runs its own account through /v1 with a
-- key. Keys gain scopes (what a key may do), an end (a rolled key stops after
-- its overlap) and the time they were last used; every management action is
-- written to an append-only audit log; every delivery attempt of a webhook is
-- kept with its latency and the first bytes of the answer; a test event is a
-- delivery of its own origin. docs/management.md says how they are used.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- Keys: scopes, end, last use
-- ----------------------------------------------------------------------------
alter table private.api_keys
  add column scopes text[] not null default array['api', 'management.read', 'management.write']::text[]
    check (cardinality(scopes) between 1 and 3 and scopes <@ array['api', 'management.read', 'management.write']::text[]),
  add column name text check (name is null or length(name) between 1 and 80),
  add column expires_at timestamptz,
  add column last_used_at timestamptz,
  add column rolled_to uuid references private.api_keys (id),
  add check (expires_at is null or expires_at >= created_at);
comment on column private.api_keys.scopes is
  'What the key may do: api (the resource and function APIs'' acts), management.read, management.write (the account: keys, webhooks, owners, themes). A key mints only scopes it holds.';
comment on column private.api_keys.name is 'A label the merchant gave the key, to recognise it in listings.';
comment on column private.api_keys.expires_at is 'When a rolled key stops authenticating (at most 24 hours after the roll); null for a key without an end.';
comment on column private.api_keys.last_used_at is 'When the key last authenticated a request (written at most once a minute).';
comment on column private.api_keys.rolled_to is 'The key that replaced this one when it was rolled.';

-- ----------------------------------------------------------------------------
-- The audit log of management actions
-- ----------------------------------------------------------------------------
create table private.management_audit_events (
  id uuid primary key default gen_random_uuid(),
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  occurred_at timestamptz not null,
  actor_kind text not null check (actor_kind in ('api_key', 'owner')),
  actor_id text not null check (length(actor_id) between 1 and 100),
  client_ip text check (length(client_ip) <= 64),
  action text not null check (action ~ '^[a-z_]+\.[a-z_]+$'),
  object_type text not null check (object_type ~ '^[a-z_]+$'),
  object_id text check (length(object_id) <= 200),
  before jsonb,
  after jsonb
);
comment on table private.management_audit_events is
  'Every management action of a merchant, written in the action''s own transaction; append-only (update and delete raise HA423).';
comment on column private.management_audit_events.id is 'The audit event''s id (responses show aud_ + 32 hex).';
comment on column private.management_audit_events.merchant_id is 'The merchant whose account changed.';
comment on column private.management_audit_events.environment is 'The workspace (test or live) the action was taken in.';
comment on column private.management_audit_events.occurred_at is 'The request clock of the action.';
comment on column private.management_audit_events.actor_kind is 'Who acted: api_key (a key with management.write) or owner (a person signed in to the console).';
comment on column private.management_audit_events.actor_id is 'The key''s id (key_ + 32 hex), or the owner''s subject_ref.';
comment on column private.management_audit_events.client_ip is 'The address the request came from, as the edge saw it.';
comment on column private.management_audit_events.action is 'What was done: <object>.<verb>, e.g. api_key.rolled, webhook_endpoint.updated.';
comment on column private.management_audit_events.object_type is 'The kind of object acted on.';
comment on column private.management_audit_events.object_id is 'The public id of the object acted on.';
comment on column private.management_audit_events.before is 'The object before the action, where it is safe to keep (never a secret or a key).';
comment on column private.management_audit_events.after is 'The object after the action, where it is safe to keep (never a secret or a key).';
create index management_audit_events_page_idx on private.management_audit_events (merchant_id, environment, occurred_at desc, id desc);

-- ----------------------------------------------------------------------------
-- Webhook delivery attempts, and test deliveries
-- ----------------------------------------------------------------------------
create table private.webhook_delivery_attempts (
  delivery_id uuid not null references private.webhook_deliveries (id) on delete cascade,
  attempt int not null check (attempt >= 1),
  attempted_at timestamptz not null,
  outcome text not null check (outcome in ('succeeded', 'retry', 'failed')),
  response_status int check (response_status between 100 and 599),
  latency_ms int check (latency_ms between 0 and 3600000),
  response_excerpt text check (length(response_excerpt) <= 256),
  error text check (length(error) <= 500),
  next_attempt_at timestamptz,
  primary key (delivery_id, attempt),
  check ((outcome = 'retry') = (next_attempt_at is not null))
);
comment on table private.webhook_delivery_attempts is 'Each sent attempt of a delivery, as the worker recorded it: what the merchant''s delivery log shows.';
comment on column private.webhook_delivery_attempts.delivery_id is 'The delivery the attempt belongs to.';
comment on column private.webhook_delivery_attempts.attempt is 'The attempt''s number, counting from 1 (the envelope''s attempt).';
comment on column private.webhook_delivery_attempts.attempted_at is 'When the request was sent (the signature''s t).';
comment on column private.webhook_delivery_attempts.outcome is 'succeeded (2xx), retry (failed, tried again at next_attempt_at) or failed (given up).';
comment on column private.webhook_delivery_attempts.response_status is 'The receiver''s HTTP status; null when no answer came.';
comment on column private.webhook_delivery_attempts.latency_ms is 'From sending to the answer (or the failure), in milliseconds.';
comment on column private.webhook_delivery_attempts.response_excerpt is 'The first 256 characters of the answer''s body (what the receiver said), for the delivery log.';
comment on column private.webhook_delivery_attempts.error is 'Why the attempt failed (null on success).';
comment on column private.webhook_delivery_attempts.next_attempt_at is 'When the next attempt is due, for an attempt that will be retried.';

alter table private.webhook_deliveries drop constraint webhook_deliveries_origin_check;
alter table private.webhook_deliveries add constraint webhook_deliveries_origin_check check (origin in ('fanout', 'replay', 'test'));
comment on column private.webhook_deliveries.origin is 'fanout (the event''s first delivery), replay (queued again on request) or test (a test event sent to one endpoint).';
