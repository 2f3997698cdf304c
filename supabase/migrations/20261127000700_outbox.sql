-- ============================================================================
-- Outbox: events written in the same transaction as the change they report
-- ============================================================================
create table private.outbox_events (
  id uuid primary key default gen_random_uuid(),
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  type text not null check (type ~ '^[a-z_]+\.[a-z_]+$'),
  api_version text not null default '2026-09-14',
  data jsonb not null,
  created_at timestamptz not null
);
comment on table private.outbox_events is 'The event log: one row per event, written by the RPC that made the change, in its transaction; delivered and replayed from here.';
comment on column private.outbox_events.id is 'Event id: stable across retries and replays, the receiver deduplicates on it.';
comment on column private.outbox_events.merchant_id is 'Merchant whose endpoints receive the event.';
comment on column private.outbox_events.environment is 'test or live: delivered only to endpoints of the same environment.';
comment on column private.outbox_events.type is 'Event type, e.g. mandate.consumed.';
comment on column private.outbox_events.api_version is 'Dated API version of the envelope.';
comment on column private.outbox_events.data is 'The event''s data object.';
comment on column private.outbox_events.created_at is 'When the change happened (server clock of the writing request).';
create index outbox_events_merchant_idx on private.outbox_events (merchant_id, environment, created_at);
