-- ============================================================================
-- Webhooks (docs/webhooks.md): endpoints, their signing secrets, and one delivery per event and
-- endpoint. The outbox worker (functions/outbox-worker) fans new outbox events out into deliveries,
-- claims due deliveries under a lease, sends them signed and records each result; the CLI manages
-- endpoints, rotates secrets, re-seals them under a new WEBHOOK_SECRET_KEY and replays events.
-- Every one of those steps is one RPC below. Time is always the caller's clock (`now`), so tests
-- drive retries and the 72-hour window without sleeping.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- Endpoints
-- ----------------------------------------------------------------------------
create table private.webhook_endpoints (
  id uuid primary key,
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  url text not null check (url ~ '^https?://\S+$' and length(url) <= 2048),
  event_types text[] check (
    event_types is null
    or (cardinality(event_types) between 1 and 64
        and array_to_string(event_types, ',') ~ '^[a-z_]+\.[a-z_]+(,[a-z_]+\.[a-z_]+)*$')),
  status text not null default 'active' check (status in ('active', 'disabled')),
  disabled_reason text check (disabled_reason in ('manual', 'gone')),
  disabled_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  check ((status = 'disabled') = (disabled_reason is not null and disabled_at is not null))
);
comment on table private.webhook_endpoints is 'A merchant''s webhook receiver in one environment; events of that merchant and environment are delivered to it.';
comment on column private.webhook_endpoints.id is 'Endpoint id, chosen by the caller: it is bound into the encryption of the endpoint''s secrets.';
comment on column private.webhook_endpoints.merchant_id is 'The merchant whose events the endpoint receives.';
comment on column private.webhook_endpoints.environment is 'test or live: only events of this environment are delivered here.';
comment on column private.webhook_endpoints.url is 'Where events are POSTed: https, or loopback http where the deployment allows local development (checked by the caller and again by the worker).';
comment on column private.webhook_endpoints.event_types is 'Event types delivered; NULL means every type, including types added later.';
comment on column private.webhook_endpoints.status is 'active (receives events) or disabled (receives nothing; its pending deliveries failed when it was disabled).';
comment on column private.webhook_endpoints.disabled_reason is 'manual (an operator disabled it) or gone (it answered 410 Gone); NULL while active.';
comment on column private.webhook_endpoints.disabled_at is 'When it was disabled; NULL while active.';
comment on column private.webhook_endpoints.created_at is 'When it was registered.';
comment on column private.webhook_endpoints.updated_at is 'Last change of status or secret.';
create index webhook_endpoints_merchant_idx on private.webhook_endpoints (merchant_id, environment);

-- ----------------------------------------------------------------------------
-- Endpoint secrets
-- ----------------------------------------------------------------------------
-- The worker must sign with the secret itself, so it cannot be kept as a hash: it is stored
-- encrypted (AES-256-GCM under a key derived from the WEBHOOK_SECRET_KEY binding, with the endpoint
-- id as associated data; shared/webhooks/secret-box.ts). The database never sees it in the clear.
create table private.webhook_endpoint_secrets (
  id uuid primary key default gen_random_uuid(),
  endpoint_id uuid not null references private.webhook_endpoints (id),
  sealed_secret text not null check (sealed_secret ~ '^v1:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$'),
  secret_hint text not null check (length(secret_hint) between 1 and 40),
  created_at timestamptz not null,
  expires_at timestamptz,
  check (expires_at is null or expires_at >= created_at)
);
comment on table private.webhook_endpoint_secrets is 'Signing secrets (whsec_…) of an endpoint, encrypted. Every secret valid at send time signs the event (one v1 each).';
comment on column private.webhook_endpoint_secrets.id is 'Secret row id.';
comment on column private.webhook_endpoint_secrets.endpoint_id is 'The endpoint the secret signs for.';
comment on column private.webhook_endpoint_secrets.sealed_secret is 'v1:<iv>:<AES-256-GCM ciphertext and tag>, base64url; opened only by the worker and the CLI.';
comment on column private.webhook_endpoint_secrets.secret_hint is 'whsec_ and the last four characters, to recognise a secret in listings.';
comment on column private.webhook_endpoint_secrets.created_at is 'When the secret was minted (shown once, at that moment).';
comment on column private.webhook_endpoint_secrets.expires_at is 'NULL for the current secret; after a rotation, when the previous one stops signing (24 hours later by default).';
create unique index webhook_endpoint_secrets_current_key on private.webhook_endpoint_secrets (endpoint_id) where expires_at is null;
create index webhook_endpoint_secrets_endpoint_idx on private.webhook_endpoint_secrets (endpoint_id, created_at);

-- ----------------------------------------------------------------------------
-- Fan-out marker on the event log
-- ----------------------------------------------------------------------------
-- A cursor on created_at would miss an event whose transaction commits after a later one; a
-- marker per event cannot. Events written before webhooks existed had no endpoint to go to.
alter table private.outbox_events add column fanned_out_at timestamptz;
comment on column private.outbox_events.fanned_out_at is 'When the outbox worker turned the event into deliveries for the endpoints then subscribed; NULL until then.';
create index outbox_events_unfanned_idx on private.outbox_events (created_at, id) where fanned_out_at is null;

-- ----------------------------------------------------------------------------
-- Deliveries
-- ----------------------------------------------------------------------------
create table private.webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  event_id uuid not null references private.outbox_events (id),
  endpoint_id uuid not null references private.webhook_endpoints (id),
  merchant_id uuid not null references private.merchants (id),
  origin text not null check (origin in ('fanout', 'replay')),
  state text not null default 'pending' check (state in ('pending', 'delivering', 'succeeded', 'failed')),
  attempt_count int not null default 0 check (attempt_count >= 0),
  created_at timestamptz not null,
  next_attempt_at timestamptz,
  lease_until timestamptz,
  lease_token uuid,
  last_attempt_at timestamptz,
  last_status int check (last_status between 100 and 599),
  last_error text check (length(last_error) <= 500),
  finished_at timestamptz,
  check ((state in ('pending', 'delivering')) = (next_attempt_at is not null)),
  check ((state = 'delivering') = (lease_until is not null and lease_token is not null)),
  check ((state in ('succeeded', 'failed')) = (finished_at is not null))
);
comment on table private.webhook_deliveries is 'One event to one endpoint: at-least-once, retried with backoff for 72 hours from created_at, then failed (and replayable).';
comment on column private.webhook_deliveries.id is 'Delivery id (internal; the receiver sees only the event id).';
comment on column private.webhook_deliveries.event_id is 'The outbox event delivered; its id is the envelope id on every attempt and every replay.';
comment on column private.webhook_deliveries.endpoint_id is 'The receiving endpoint.';
comment on column private.webhook_deliveries.merchant_id is 'The event''s (and endpoint''s) merchant, for scoped runs and listings.';
comment on column private.webhook_deliveries.origin is 'fanout (the worker, once per event and endpoint) or replay (an operator, any number of times).';
comment on column private.webhook_deliveries.state is 'pending (waiting for next_attempt_at), delivering (claimed under a lease), succeeded (2xx) or failed (window over, or endpoint disabled).';
comment on column private.webhook_deliveries.attempt_count is 'Attempts claimed so far; the envelope''s attempt is this number. A claim lost to a crash counts.';
comment on column private.webhook_deliveries.created_at is 'Start of the 72-hour retry window (fan-out or replay time, on the caller''s clock).';
comment on column private.webhook_deliveries.next_attempt_at is 'When the delivery is due (pending) or was due when claimed (delivering); NULL once finished.';
comment on column private.webhook_deliveries.lease_until is 'While delivering: after this time the claim is presumed dead and the delivery may be claimed again.';
comment on column private.webhook_deliveries.lease_token is 'While delivering: the claim''s token; only a result carrying it is recorded.';
comment on column private.webhook_deliveries.last_attempt_at is 'When the last recorded attempt was sent.';
comment on column private.webhook_deliveries.last_status is 'HTTP status of the last recorded attempt; NULL when no response came (timeout, connection error).';
comment on column private.webhook_deliveries.last_error is 'Why the last recorded attempt failed (timeout, redirect, status, connection error), or why the delivery was failed.';
comment on column private.webhook_deliveries.finished_at is 'When it succeeded or was given up.';
create unique index webhook_deliveries_fanout_key on private.webhook_deliveries (event_id, endpoint_id) where origin = 'fanout';
create index webhook_deliveries_due_idx on private.webhook_deliveries (next_attempt_at, id) where state = 'pending';
create index webhook_deliveries_lease_idx on private.webhook_deliveries (lease_until) where state = 'delivering';
create index webhook_deliveries_endpoint_idx on private.webhook_deliveries (endpoint_id, state);
create index webhook_deliveries_event_idx on private.webhook_deliveries (event_id);
create index webhook_deliveries_merchant_idx on private.webhook_deliveries (merchant_id, state);
