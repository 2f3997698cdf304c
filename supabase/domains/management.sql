-- ============================================================================
-- Management (docs/management.md): a merchant's own account through /v1 with a
-- key of scope management.read / management.write: its keys, webhook
-- endpoints and deliveries, settings, and the audit log every action writes in
-- its own transaction. Every RPC is scoped to one merchant and environment (the
-- key's); another merchant's object is HA404, as an unknown one.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- The audit log
-- ----------------------------------------------------------------------------
create or replace trigger management_audit_events_append_only before update or delete on private.management_audit_events
  for each row execute function private.refuse_change();
comment on trigger management_audit_events_append_only on private.management_audit_events is
  'Keeps the audit log append-only: update and delete raise HA423.';

-- private.management_audit(p, action, object_type, object_id, before, after): one audit row of the
-- request p ({merchant_id, environment, now, actor: {kind, id, ip}}), in the caller's transaction.
create or replace function private.management_audit(p jsonb, p_action text, p_object_type text, p_object_id text,
  p_before jsonb, p_after jsonb) returns void
language plpgsql set search_path = '' as $$
begin
  insert into private.management_audit_events (merchant_id, environment, occurred_at, actor_kind, actor_id, client_ip,
    action, object_type, object_id, before, after)
  values ((p ->> 'merchant_id')::uuid, p ->> 'environment', (p ->> 'now')::timestamptz, p -> 'actor' ->> 'kind',
    p -> 'actor' ->> 'id', p -> 'actor' ->> 'ip', p_action, p_object_type, p_object_id, p_before, p_after);
end $$;
comment on function private.management_audit(jsonb, text, text, text, jsonb, jsonb) is
  'Writes one management audit event for the request''s merchant, environment, clock and actor.';

create or replace function private.management_audit_json(a private.management_audit_events) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'id', private.public_id('aud_', a.id),
    'object', 'audit_event',
    'occurred_at', private.iso_utc(a.occurred_at),
    'environment', a.environment,
    'actor', jsonb_build_object('kind', a.actor_kind, 'id', a.actor_id, 'ip', a.client_ip),
    'action', a.action,
    'object_type', a.object_type,
    'object_id', a.object_id,
    'before', a.before,
    'after', a.after)
$$;
comment on function private.management_audit_json(private.management_audit_events) is 'An audit event as /v1/audit_events shows it.';

-- management_audit_page({merchant_id, environment, limit, after?: {at, id}, action?, from?, to?})
--   -> {data: [audit_event], more, last}
-- Newest first by (occurred_at, id); from/to bound occurred_at to [from, to).
create or replace function public.management_audit_page(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  with page as (
    select a, a.occurred_at, a.id from private.management_audit_events a
    where a.merchant_id = (p ->> 'merchant_id')::uuid and a.environment = p ->> 'environment'
      and (not p ? 'action' or a.action = p ->> 'action')
      and (not p ? 'from' or a.occurred_at >= (p ->> 'from')::timestamptz)
      and (not p ? 'to' or a.occurred_at < (p ->> 'to')::timestamptz)
      and (not p ? 'after' or (a.occurred_at, a.id) < ((p -> 'after' ->> 'at')::timestamptz, (p -> 'after' ->> 'id')::uuid))
    order by a.occurred_at desc, a.id desc
    limit (p ->> 'limit')::int + 1
  )
  select private.keyset_page(
    coalesce(jsonb_agg(jsonb_build_object('item', private.management_audit_json(a), 'at', occurred_at, 'id', id)
                       order by occurred_at desc, id desc), '[]'::jsonb),
    (p ->> 'limit')::int)
  from page
$$;
comment on function public.management_audit_page(jsonb) is 'One page of a merchant''s audit events in one environment, newest first, after a keyset cursor.';

-- ----------------------------------------------------------------------------
-- Keys
-- ----------------------------------------------------------------------------
create or replace function private.management_key_json(k private.api_keys, p_now timestamptz) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'id', private.public_id('key_', k.id),
    'object', 'api_key',
    'name', k.name,
    'kind', k.kind,
    'environment', k.environment,
    'scopes', to_jsonb(k.scopes),
    'hint', k.key_hint,
    'status', case when k.revoked_at is not null then 'revoked'
                   when k.expires_at is not null and k.expires_at <= p_now then 'expired'
                   when k.expires_at is not null then 'expiring'
                   else 'active' end,
    'created_at', private.iso_utc(k.created_at),
    'last_used_at', case when k.last_used_at is null then null else private.iso_utc(k.last_used_at) end,
    'expires_at', case when k.expires_at is null then null else private.iso_utc(k.expires_at) end,
    'revoked_at', case when k.revoked_at is null then null else private.iso_utc(k.revoked_at) end,
    'rolled_to', case when k.rolled_to is null then null else private.public_id('key_', k.rolled_to) end)
$$;
comment on function private.management_key_json(private.api_keys, timestamptz) is 'A key as /v1/api_keys shows it: its hint, never the key or its hash.';

-- The caller's key of the request's merchant and environment, locked (HA404 when it is not theirs).
create or replace function private.management_key_of(p jsonb) returns private.api_keys
language plpgsql set search_path = '' as $$
declare v_key private.api_keys;
begin
  select * into v_key from private.api_keys
  where id = (p ->> 'key_id')::uuid and merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment'
  for update;
  if v_key.id is null then
    raise exception 'unknown key' using errcode = 'HA404';
  end if;
  return v_key;
end $$;
comment on function private.management_key_of(jsonb) is 'The key key_id of the request''s merchant and environment, locked; HA404 otherwise.';

-- management_keys_list({merchant_id, environment, now}) -> {data: [api_key]}: newest first, revoked ones too.
create or replace function public.management_keys_list(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('data', coalesce(jsonb_agg(private.management_key_json(k, (p ->> 'now')::timestamptz)
    order by k.created_at desc, k.id desc), '[]'::jsonb))
  from private.api_keys k
  where k.merchant_id = (p ->> 'merchant_id')::uuid and k.environment = p ->> 'environment'
$$;
comment on function public.management_keys_list(jsonb) is 'Every key of a merchant in one environment, newest first (hints only).';

-- management_key_create({merchant_id, environment, now, actor, kind, scopes, name?, key_hash, key_hint}) -> api_key
create or replace function public.management_key_create(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare v_key private.api_keys;
begin
  insert into private.api_keys (merchant_id, environment, kind, key_hash, key_hint, scopes, name, created_at)
  values ((p ->> 'merchant_id')::uuid, p ->> 'environment', p ->> 'kind', p ->> 'key_hash', p ->> 'key_hint',
    array(select jsonb_array_elements_text(p -> 'scopes')), p ->> 'name', (p ->> 'now')::timestamptz)
  returning * into v_key;
  perform private.management_audit(p, 'api_key.created', 'api_key', private.public_id('key_', v_key.id), null,
    private.management_key_json(v_key, (p ->> 'now')::timestamptz));
  return private.management_key_json(v_key, (p ->> 'now')::timestamptz);
end $$;
comment on function public.management_key_create(jsonb) is 'Adds a key (its hash) to the merchant''s environment and audits it.';

-- management_key_roll({merchant_id, environment, now, actor, key_id, overlap_seconds, key_hash, key_hint})
--   -> {key: the new api_key, rolled: the old one}
-- A new key of the same kind, scopes and name; the old one keeps authenticating for overlap_seconds
-- (0 to 86400) and then stops. A revoked, expired or already rolled key is HA450.
create or replace function public.management_key_roll(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_overlap int := (p ->> 'overlap_seconds')::int;
  v_old private.api_keys := private.management_key_of(p);
  v_before jsonb := private.management_key_json(v_old, v_now);
  v_new private.api_keys;
begin
  if v_overlap is null or v_overlap not between 0 and 86400 then
    raise exception 'overlap_seconds must be 0 to 86400' using errcode = '22023';
  end if;
  if v_old.revoked_at is not null or v_old.rolled_to is not null or (v_old.expires_at is not null and v_old.expires_at <= v_now) then
    raise exception 'only an active key can be rolled' using errcode = 'HA450';
  end if;
  insert into private.api_keys (merchant_id, environment, kind, key_hash, key_hint, scopes, name, created_at)
  values (v_old.merchant_id, v_old.environment, v_old.kind, p ->> 'key_hash', p ->> 'key_hint', v_old.scopes, v_old.name, v_now)
  returning * into v_new;
  update private.api_keys
  set expires_at = least(coalesce(expires_at, 'infinity'), v_now + make_interval(secs => v_overlap)), rolled_to = v_new.id
  where id = v_old.id
  returning * into v_old;
  perform private.management_audit(p, 'api_key.rolled', 'api_key', private.public_id('key_', v_old.id), v_before,
    private.management_key_json(v_old, v_now) || jsonb_build_object('rolled_to', private.public_id('key_', v_new.id)));
  return jsonb_build_object('key', private.management_key_json(v_new, v_now), 'rolled', private.management_key_json(v_old, v_now));
end $$;
comment on function public.management_key_roll(jsonb) is 'Replaces an active key by a new one; the old one stops after the overlap (at most 24 h). HA404, HA450.';

-- management_key_revoke({merchant_id, environment, now, actor, key_id}) -> api_key (a repeat answers the same)
create or replace function public.management_key_revoke(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_key private.api_keys := private.management_key_of(p);
  v_before jsonb := private.management_key_json(v_key, v_now);
begin
  if v_key.revoked_at is null then
    update private.api_keys set revoked_at = v_now where id = v_key.id returning * into v_key;
    perform private.management_audit(p, 'api_key.revoked', 'api_key', private.public_id('key_', v_key.id), v_before,
      private.management_key_json(v_key, v_now));
  end if;
  return private.management_key_json(v_key, v_now);
end $$;
comment on function public.management_key_revoke(jsonb) is 'Revokes a key of the merchant''s environment at once (idempotent) and audits it. HA404.';

-- ----------------------------------------------------------------------------
-- Webhook endpoints
-- ----------------------------------------------------------------------------
-- What the audit log keeps of an endpoint: its settings, never a secret.
create or replace function private.management_endpoint_audit_json(e private.webhook_endpoints) returns jsonb
language sql immutable set search_path = '' as $$
  select jsonb_build_object('url', e.url, 'event_types', to_jsonb(e.event_types), 'status', e.status, 'disabled_reason', e.disabled_reason)
$$;
comment on function private.management_endpoint_audit_json(private.webhook_endpoints) is 'An endpoint''s settings for the audit log (no secret).';

-- The request's endpoint of its merchant and environment, locked (HA404 otherwise).
create or replace function private.management_endpoint_of(p jsonb) returns private.webhook_endpoints
language plpgsql set search_path = '' as $$
declare v_endpoint private.webhook_endpoints;
begin
  select * into v_endpoint from private.webhook_endpoints
  where id = (p ->> 'endpoint_id')::uuid and merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment'
  for update;
  if v_endpoint.id is null then
    raise exception 'unknown endpoint' using errcode = 'HA404';
  end if;
  return v_endpoint;
end $$;
comment on function private.management_endpoint_of(jsonb) is 'The endpoint endpoint_id of the request''s merchant and environment, locked; HA404 otherwise.';

-- management_endpoint_create({merchant_id, environment, now, actor, endpoint_id, url, event_types, sealed_secret, secret_hint})
--   -> endpoint (webhook_endpoint_json)
create or replace function public.management_endpoint_create(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_view jsonb := public.webhook_endpoint_create(p);
  v_endpoint private.webhook_endpoints;
begin
  select * into v_endpoint from private.webhook_endpoints where id = (p ->> 'endpoint_id')::uuid;
  perform private.management_audit(p, 'webhook_endpoint.created', 'webhook_endpoint', private.public_id('we_', v_endpoint.id), null,
    private.management_endpoint_audit_json(v_endpoint));
  return v_view;
end $$;
comment on function public.management_endpoint_create(jsonb) is 'Registers an endpoint (webhook_endpoint_create) and audits it. HA601.';

-- management_endpoint_get({merchant_id, environment, now, endpoint_id}) -> endpoint
create or replace function public.management_endpoint_get(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
declare v_endpoint private.webhook_endpoints;
begin
  select * into v_endpoint from private.webhook_endpoints
  where id = (p ->> 'endpoint_id')::uuid and merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment';
  if v_endpoint.id is null then
    raise exception 'unknown endpoint' using errcode = 'HA404';
  end if;
  return private.webhook_endpoint_json(v_endpoint, (p ->> 'now')::timestamptz);
end $$;
comment on function public.management_endpoint_get(jsonb) is 'One endpoint of the merchant''s environment; HA404 otherwise.';

-- management_endpoint_update({merchant_id, environment, now, actor, endpoint_id, url?, event_types? (null: every type)})
--   -> endpoint
create or replace function public.management_endpoint_update(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_endpoint private.webhook_endpoints := private.management_endpoint_of(p);
  v_before jsonb := private.management_endpoint_audit_json(v_endpoint);
begin
  update private.webhook_endpoints
  set url = case when p ? 'url' then p ->> 'url' else url end,
      event_types = case when not p ? 'event_types' then event_types
                         when jsonb_typeof(p -> 'event_types') = 'array' then array(select jsonb_array_elements_text(p -> 'event_types'))
                         end,
      updated_at = v_now
  where id = v_endpoint.id
  returning * into v_endpoint;
  perform private.management_audit(p, 'webhook_endpoint.updated', 'webhook_endpoint', private.public_id('we_', v_endpoint.id), v_before,
    private.management_endpoint_audit_json(v_endpoint));
  return private.webhook_endpoint_json(v_endpoint, v_now);
end $$;
comment on function public.management_endpoint_update(jsonb) is 'Changes an endpoint''s URL and event types and audits it. HA404.';

-- management_endpoint_set_status({merchant_id, environment, now, actor, endpoint_id, status: active | disabled}) -> endpoint
-- Disabling fails the pending deliveries (replayable); enabling counts against the 16 active endpoints (HA601).
create or replace function public.management_endpoint_set_status(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_endpoint private.webhook_endpoints := private.management_endpoint_of(p);
  v_before jsonb := private.management_endpoint_audit_json(v_endpoint);
begin
  if p ->> 'status' = v_endpoint.status then
    return private.webhook_endpoint_json(v_endpoint, v_now);
  end if;
  if p ->> 'status' = 'disabled' then
    perform public.webhook_endpoint_disable(jsonb_build_object('endpoint_id', v_endpoint.id, 'now', v_now));
  else
    perform 1 from private.merchants where id = v_endpoint.merchant_id for no key update;
    if (select count(*) from private.webhook_endpoints
        where merchant_id = v_endpoint.merchant_id and environment = v_endpoint.environment and status = 'active') >= 16 then
      raise exception 'at most 16 active endpoints per merchant and environment' using errcode = 'HA601';
    end if;
    update private.webhook_endpoints set status = 'active', disabled_reason = null, disabled_at = null, updated_at = v_now
    where id = v_endpoint.id;
  end if;
  select * into v_endpoint from private.webhook_endpoints where id = v_endpoint.id;
  perform private.management_audit(p,
    case when v_endpoint.status = 'active' then 'webhook_endpoint.enabled' else 'webhook_endpoint.disabled' end,
    'webhook_endpoint', private.public_id('we_', v_endpoint.id), v_before, private.management_endpoint_audit_json(v_endpoint));
  return private.webhook_endpoint_json(v_endpoint, v_now);
end $$;
comment on function public.management_endpoint_set_status(jsonb) is 'Disables (failing pending deliveries) or enables an endpoint, and audits it. HA404, HA601.';

-- management_endpoint_rotate({merchant_id, environment, now, actor, endpoint_id, sealed_secret, secret_hint, overlap_seconds})
--   -> endpoint + {previous_valid_until}
create or replace function public.management_endpoint_rotate(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_endpoint private.webhook_endpoints := private.management_endpoint_of(p);
  v_rotated jsonb := public.webhook_secret_rotate(p);
begin
  perform private.management_audit(p, 'webhook_endpoint.secret_rotated', 'webhook_endpoint', private.public_id('we_', v_endpoint.id), null,
    jsonb_build_object('previous_valid_until', v_rotated ->> 'previous_valid_until'));
  return v_rotated;
end $$;
comment on function public.management_endpoint_rotate(jsonb) is 'A new secret for the endpoint (webhook_secret_rotate), audited. HA404.';

-- management_endpoint_test({merchant_id, environment, now, actor, endpoint_id}) -> {event_id, delivery_id}
-- A webhook.test event, written already fanned out, with one delivery (origin test) to this endpoint only,
-- due now. A disabled endpoint is HA451.
create or replace function public.management_endpoint_test(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_endpoint private.webhook_endpoints := private.management_endpoint_of(p);
  v_event uuid;
  v_delivery uuid;
begin
  if v_endpoint.status <> 'active' then
    raise exception 'the endpoint is disabled' using errcode = 'HA451';
  end if;
  insert into private.outbox_events (merchant_id, environment, type, data, created_at, fanned_out_at)
  values (v_endpoint.merchant_id, v_endpoint.environment, 'webhook.test',
    jsonb_build_object('endpoint_id', private.public_id('we_', v_endpoint.id), 'message', 'A test event sent from the account.'),
    v_now, v_now)
  returning id into v_event;
  insert into private.webhook_deliveries (event_id, endpoint_id, merchant_id, origin, created_at, next_attempt_at)
  values (v_event, v_endpoint.id, v_endpoint.merchant_id, 'test', v_now, v_now)
  returning id into v_delivery;
  perform private.management_audit(p, 'webhook_endpoint.tested', 'webhook_endpoint', private.public_id('we_', v_endpoint.id), null,
    jsonb_build_object('event_id', v_event));
  return jsonb_build_object('event_id', v_event, 'delivery_id', private.public_id('whd_', v_delivery));
end $$;
comment on function public.management_endpoint_test(jsonb) is 'Queues a webhook.test event to one endpoint only, audited. HA404, HA451.';

-- ----------------------------------------------------------------------------
-- Deliveries
-- ----------------------------------------------------------------------------
create or replace function private.management_delivery_json(d private.webhook_deliveries) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'id', private.public_id('whd_', d.id),
    'object', 'webhook_delivery',
    'endpoint_id', private.public_id('we_', d.endpoint_id),
    'origin', d.origin,
    'state', d.state,
    'created_at', private.iso_utc(d.created_at),
    'next_attempt_at', case when d.state = 'pending' then private.iso_utc(d.next_attempt_at) end,
    'finished_at', case when d.finished_at is null then null else private.iso_utc(d.finished_at) end,
    'event', (select jsonb_build_object('id', o.id, 'type', o.type, 'created_at', private.iso_utc(o.created_at),
                'api_version', o.api_version, 'data', o.data)
              from private.outbox_events o where o.id = d.event_id),
    'attempts', (select coalesce(jsonb_agg(jsonb_build_object(
                   'attempt', a.attempt,
                   'attempted_at', private.iso_utc(a.attempted_at),
                   'outcome', a.outcome,
                   'response_status', a.response_status,
                   'latency_ms', a.latency_ms,
                   'response_excerpt', a.response_excerpt,
                   'error', a.error,
                   'next_attempt_at', case when a.next_attempt_at is null then null else private.iso_utc(a.next_attempt_at) end)
                 order by a.attempt), '[]'::jsonb)
                 from private.webhook_delivery_attempts a where a.delivery_id = d.id))
$$;
comment on function private.management_delivery_json(private.webhook_deliveries) is
  'A delivery as the delivery log shows it: its event (the payload sent), state and every attempt.';

-- management_deliveries_page({merchant_id, environment, limit, endpoint_id?, state?, event_id?, after?: {at, id}})
--   -> {data: [webhook_delivery], more, last}
create or replace function public.management_deliveries_page(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  with page as (
    select d, d.created_at, d.id from private.webhook_deliveries d
    join private.webhook_endpoints e on e.id = d.endpoint_id
    where d.merchant_id = (p ->> 'merchant_id')::uuid and e.environment = p ->> 'environment'
      and (not p ? 'endpoint_id' or d.endpoint_id = (p ->> 'endpoint_id')::uuid)
      and (not p ? 'delivery_id' or d.id = (p ->> 'delivery_id')::uuid)
      and (not p ? 'event_id' or d.event_id = (p ->> 'event_id')::uuid)
      and (not p ? 'state' or d.state = p ->> 'state')
      and (not p ? 'after' or (d.created_at, d.id) < ((p -> 'after' ->> 'at')::timestamptz, (p -> 'after' ->> 'id')::uuid))
    order by d.created_at desc, d.id desc
    limit (p ->> 'limit')::int + 1
  )
  select private.keyset_page(
    coalesce(jsonb_agg(jsonb_build_object('item', private.management_delivery_json(d), 'at', created_at, 'id', id)
                       order by created_at desc, id desc), '[]'::jsonb),
    (p ->> 'limit')::int)
  from page
$$;
comment on function public.management_deliveries_page(jsonb) is 'One page of a merchant''s deliveries in one environment, newest first, with their attempts.';

-- management_delivery_replay({merchant_id, environment, now, actor, delivery_id}) -> {events, deliveries}
-- The delivery's event again, to the delivery's endpoint (a new delivery, attempt 1, a fresh window).
create or replace function public.management_delivery_replay(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_delivery private.webhook_deliveries;
  v_replayed jsonb;
begin
  select d.* into v_delivery from private.webhook_deliveries d join private.webhook_endpoints e on e.id = d.endpoint_id
  where d.id = (p ->> 'delivery_id')::uuid and d.merchant_id = (p ->> 'merchant_id')::uuid and e.environment = p ->> 'environment';
  if v_delivery.id is null then
    raise exception 'unknown delivery' using errcode = 'HA404';
  end if;
  if v_delivery.origin = 'test' then
    insert into private.webhook_deliveries (event_id, endpoint_id, merchant_id, origin, created_at, next_attempt_at)
    select v_delivery.event_id, e.id, e.merchant_id, 'test', (p ->> 'now')::timestamptz, (p ->> 'now')::timestamptz
    from private.webhook_endpoints e where e.id = v_delivery.endpoint_id and e.status = 'active';
    v_replayed := jsonb_build_object('events', 1, 'deliveries', (select count(*) from private.webhook_endpoints e
      where e.id = v_delivery.endpoint_id and e.status = 'active'));
  else
    v_replayed := public.webhook_replay(jsonb_build_object('event_id', v_delivery.event_id, 'endpoint_id', v_delivery.endpoint_id,
      'now', p ->> 'now'));
  end if;
  perform private.management_audit(p, 'webhook_delivery.replayed', 'webhook_delivery', private.public_id('whd_', v_delivery.id), null,
    v_replayed || jsonb_build_object('event_id', v_delivery.event_id));
  return v_replayed;
end $$;
comment on function public.management_delivery_replay(jsonb) is 'Sends a delivery''s event again to its endpoint (when active), audited. HA404.';

-- management_events_replay({merchant_id, environment, now, actor, from, to, endpoint_id?}) -> {events, deliveries}
create or replace function public.management_events_replay(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare v_replayed jsonb;
begin
  if p ? 'endpoint_id' then
    perform private.management_endpoint_of(p);
  end if;
  v_replayed := public.webhook_replay(jsonb_strip_nulls(jsonb_build_object('merchant_id', p ->> 'merchant_id',
    'environment', p ->> 'environment', 'from', p ->> 'from', 'to', p ->> 'to', 'endpoint_id', p ->> 'endpoint_id', 'now', p ->> 'now')));
  perform private.management_audit(p, 'webhook_events.replayed', 'webhook_endpoint',
    case when p ? 'endpoint_id' then private.public_id('we_', (p ->> 'endpoint_id')::uuid) end, null,
    v_replayed || jsonb_build_object('from', p ->> 'from', 'to', p ->> 'to'));
  return v_replayed;
end $$;
comment on function public.management_events_replay(jsonb) is 'Replays the events of [from, to) of the merchant''s environment (at most 10,000), audited. HA404.';

-- ----------------------------------------------------------------------------
-- Settings
-- ----------------------------------------------------------------------------
create or replace function private.management_account_json(m private.merchants, p_environment text) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object('id', m.id, 'object', 'account', 'name', m.name, 'environment', p_environment,
    'api_version', m.api_version, 'at_limit_threshold_percent', m.at_limit_threshold_percent)
$$;
comment on function private.management_account_json(private.merchants, text) is 'The account as /v1/account shows it.';

-- management_account({merchant_id, environment}) -> account
create or replace function public.management_account(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select private.management_account_json(m, p ->> 'environment') from private.merchants m where m.id = (p ->> 'merchant_id')::uuid
$$;
comment on function public.management_account(jsonb) is 'The merchant''s account settings as the key''s environment sees them.';

-- management_account_update({merchant_id, environment, now, actor, at_limit_threshold_percent}) -> account
create or replace function public.management_account_update(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_merchant private.merchants;
  v_before jsonb;
begin
  select * into v_merchant from private.merchants where id = (p ->> 'merchant_id')::uuid for no key update;
  v_before := jsonb_build_object('at_limit_threshold_percent', v_merchant.at_limit_threshold_percent);
  update private.merchants set at_limit_threshold_percent = (p ->> 'at_limit_threshold_percent')::int
  where id = v_merchant.id returning * into v_merchant;
  perform private.management_audit(p, 'account.updated', 'account', v_merchant.id::text, v_before,
    jsonb_build_object('at_limit_threshold_percent', v_merchant.at_limit_threshold_percent));
  return private.management_account_json(v_merchant, p ->> 'environment');
end $$;
comment on function public.management_account_update(jsonb) is 'Sets the account''s mandate.at_limit threshold (0 to 99), audited.';

-- ----------------------------------------------------------------------------
-- Owners and their invitations
-- ----------------------------------------------------------------------------
create or replace function private.management_invitation_json(i private.owner_invitations, p_now timestamptz) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'id', private.public_id('inv_', i.id),
    'object', 'owner_invitation',
    'subject_ref', i.subject_ref,
    'session_id', private.public_id('hs_', i.session_id),
    'status', case when i.accepted_at is not null then 'accepted' when i.expires_at <= p_now then 'expired' else 'pending' end,
    'invited_by', i.invited_by,
    'created_at', private.iso_utc(i.created_at),
    'expires_at', private.iso_utc(i.expires_at),
    'accepted_at', case when i.accepted_at is null then null else private.iso_utc(i.accepted_at) end)
$$;
comment on function private.management_invitation_json(private.owner_invitations, timestamptz) is 'An owner invitation as /v1/owners shows it.';

-- management_owners_list({merchant_id, environment, now}) -> {owners: [{subject_ref, added_at}], invitations: [invitation]}
create or replace function public.management_owners_list(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object(
    'owners', (select coalesce(jsonb_agg(jsonb_build_object('object', 'owner', 'subject_ref', o.subject_ref,
                 'added_at', private.iso_utc(o.added_at)) order by o.added_at, o.subject_ref), '[]'::jsonb)
               from private.merchant_owners o join private.identities i on i.id = o.identity_id
               where o.merchant_id = (p ->> 'merchant_id')::uuid and o.environment = p ->> 'environment' and i.erased_at is null),
    'invitations', (select coalesce(jsonb_agg(private.management_invitation_json(v, (p ->> 'now')::timestamptz)
                      order by v.created_at desc, v.id desc), '[]'::jsonb)
                    from private.owner_invitations v
                    where v.merchant_id = (p ->> 'merchant_id')::uuid and v.environment = p ->> 'environment'))
$$;
comment on function public.management_owners_list(jsonb) is 'The owners of a merchant in one environment, oldest first, and its owner invitations, newest first.';

-- management_owner_invite({merchant_id, environment, now, actor, subject_ref, session_id, expires_at}) -> invitation
-- The person must be held by the merchant in this environment and not erased (HA404); an owner already is HA453.
create or replace function public.management_owner_invite(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_identity uuid;
  v_invitation private.owner_invitations;
begin
  select r.identity_id into v_identity from private.subject_refs r join private.identities i on i.id = r.identity_id
  where r.merchant_id = (p ->> 'merchant_id')::uuid and r.subject_ref = p ->> 'subject_ref'
    and i.environment = p ->> 'environment' and i.erased_at is null;
  if v_identity is null then
    raise exception 'no person of this merchant and environment has that subject_ref' using errcode = 'HA404';
  end if;
  if exists (select 1 from private.merchant_owners where merchant_id = (p ->> 'merchant_id')::uuid and identity_id = v_identity) then
    raise exception 'already an owner' using errcode = 'HA453';
  end if;
  insert into private.owner_invitations (merchant_id, environment, subject_ref, session_id, invited_by, created_at, expires_at)
  values ((p ->> 'merchant_id')::uuid, p ->> 'environment', p ->> 'subject_ref', (p ->> 'session_id')::uuid, p -> 'actor' ->> 'id',
    (p ->> 'now')::timestamptz, (p ->> 'expires_at')::timestamptz)
  returning * into v_invitation;
  perform private.management_audit(p, 'owner.invited', 'owner', v_invitation.subject_ref, null,
    private.management_invitation_json(v_invitation, (p ->> 'now')::timestamptz));
  return private.management_invitation_json(v_invitation, (p ->> 'now')::timestamptz);
end $$;
comment on function public.management_owner_invite(jsonb) is 'Invites a person the merchant holds to own it, accepted in the given recognise session; audited. HA404, HA453.';

-- The invitation's acceptance: the recognise session made for it completed approved for the person
-- invited, so they become an owner, in the outcome's transaction, audited as their own act.
create or replace function private.owner_invitation_accept() returns trigger
language plpgsql security definer set search_path = '' as $$
declare
  v_invitation private.owner_invitations;
  v_identity uuid;
  v_at timestamptz := coalesce(new.ended_at, now());
begin
  select * into v_invitation from private.owner_invitations where session_id = new.id and accepted_at is null for update;
  if v_invitation.id is null or new.result ->> 'facetoken' is distinct from v_invitation.subject_ref then
    return new;
  end if;
  select identity_id into v_identity from private.subject_refs
  where merchant_id = v_invitation.merchant_id and subject_ref = v_invitation.subject_ref;
  insert into private.merchant_owners (merchant_id, identity_id, environment, subject_ref, added_at)
  values (v_invitation.merchant_id, v_identity, v_invitation.environment, v_invitation.subject_ref, v_at)
  on conflict do nothing;
  update private.owner_invitations set accepted_at = v_at where id = v_invitation.id;
  perform private.management_audit(jsonb_build_object('merchant_id', v_invitation.merchant_id, 'environment', v_invitation.environment,
      'now', v_at, 'actor', jsonb_build_object('kind', 'owner', 'id', v_invitation.subject_ref)),
    'owner.accepted', 'owner', v_invitation.subject_ref, null, jsonb_build_object('invitation', private.public_id('inv_', v_invitation.id)));
  return new;
end $$;
comment on function private.owner_invitation_accept() is 'Makes the invited person an owner when the invitation''s recognise session completes approved for them.';

create or replace trigger hosted_sessions_accept_owner_invitation after update of state on private.hosted_sessions
  for each row when (new.action = 'recognise' and new.state = 'completed' and old.state <> 'completed'
                     and (new.result ->> 'approved')::boolean)
  execute function private.owner_invitation_accept();
comment on trigger hosted_sessions_accept_owner_invitation on private.hosted_sessions is
  'An owner invitation is accepted by the approved outcome of its recognise session.';

-- management_owner_remove({merchant_id, environment, now, actor, subject_ref}) -> {subject_ref, removed: true}
-- HA404 when not an owner of this environment; the last owner is never removed (HA452).
create or replace function public.management_owner_remove(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare v_owner private.merchant_owners;
begin
  -- serialise removals per merchant, so two removals cannot leave it without an owner
  perform 1 from private.merchants where id = (p ->> 'merchant_id')::uuid for no key update;
  select * into v_owner from private.merchant_owners
  where merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment' and subject_ref = p ->> 'subject_ref';
  if v_owner.identity_id is null then
    raise exception 'not an owner' using errcode = 'HA404';
  end if;
  if (select count(*) from private.merchant_owners o join private.identities i on i.id = o.identity_id
      where o.merchant_id = v_owner.merchant_id and o.environment = v_owner.environment and i.erased_at is null) <= 1 then
    raise exception 'the last owner cannot be removed' using errcode = 'HA452';
  end if;
  delete from private.merchant_owners where merchant_id = v_owner.merchant_id and identity_id = v_owner.identity_id;
  perform private.management_audit(p, 'owner.removed', 'owner', v_owner.subject_ref,
    jsonb_build_object('subject_ref', v_owner.subject_ref, 'added_at', private.iso_utc(v_owner.added_at)), null);
  return jsonb_build_object('object', 'owner', 'subject_ref', v_owner.subject_ref, 'removed', true);
end $$;
comment on function public.management_owner_remove(jsonb) is 'Removes an owner of the environment (never the last one), audited. HA404, HA452.';

-- ----------------------------------------------------------------------------
-- Read views for support
-- ----------------------------------------------------------------------------
-- management_sessions_page({merchant_id, environment, now, limit, status?, mode?, facetoken?, after?: {at, id}})
--   -> {data: [session], more, last}: the environment's /v1 sessions, newest first, at the request clock.
create or replace function public.management_sessions_page(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  with page as (
    select s, s.created_at, s.id from private.hosted_sessions s
    where s.merchant_id = (p ->> 'merchant_id')::uuid and s.environment = p ->> 'environment' and s.return_url is not null
      and (not p ? 'mode' or s.action = p ->> 'mode')
      and (not p ? 'facetoken' or s.facetoken = p ->> 'facetoken')
      and (not p ? 'status' or private.mode_session_status(s, (p ->> 'now')::timestamptz) = p ->> 'status')
      and (not p ? 'after' or (s.created_at, s.id) < ((p -> 'after' ->> 'at')::timestamptz, (p -> 'after' ->> 'id')::uuid))
    order by s.created_at desc, s.id desc
    limit (p ->> 'limit')::int + 1
  )
  select private.keyset_page(
    coalesce(jsonb_agg(jsonb_build_object('item', private.mode_session_json(s, (p ->> 'now')::timestamptz), 'at', created_at, 'id', id)
                       order by created_at desc, id desc), '[]'::jsonb),
    (p ->> 'limit')::int)
  from page
$$;
comment on function public.management_sessions_page(jsonb) is 'One page of the environment''s /v1 sessions, newest first, filtered by status, mode and facetoken, after a keyset cursor.';

-- management_receipts_page({merchant_id, environment, limit, facetoken?, action?, code?, after?: {at, id}})
--   -> {data: [receipt], more, last}: the environment's receipts, newest first, each with its act (never a
--   personal value beyond the person's facetoken, which the merchant holds already).
create or replace function public.management_receipts_page(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  with page as (
    select r.issued_at as at, r.id, jsonb_build_object(
      'id', r.id, 'object', 'receipt', 'code', r.code, 'transaction_id', c.id, 'facetoken', s.subject_ref,
      'action', c.action, 'amount', c.amount_minor, 'currency', c.currency, 'assurance_level', c.assurance_level,
      'device_binding', c.device_binding, 'seal', r.seal, 'anchored', r.anchor_id is not null,
      'issued_at', private.iso_utc(r.issued_at)) as item
    from private.receipts r
    join private.captures c on c.id = r.capture_id
    left join private.subject_refs s on s.merchant_id = r.merchant_id and s.identity_id = c.identity_id
    where r.merchant_id = (p ->> 'merchant_id')::uuid and r.environment = p ->> 'environment'
      and (not p ? 'facetoken' or s.subject_ref = p ->> 'facetoken')
      and (not p ? 'action' or c.action = p ->> 'action')
      and (not p ? 'code' or r.code = p ->> 'code')
      and (not p ? 'after' or (r.issued_at, r.id) < ((p -> 'after' ->> 'at')::timestamptz, (p -> 'after' ->> 'id')::uuid))
    order by r.issued_at desc, r.id desc
    limit (p ->> 'limit')::int + 1
  )
  select private.keyset_page(
    coalesce(jsonb_agg(jsonb_build_object('item', item, 'at', at, 'id', id) order by at desc, id desc), '[]'::jsonb),
    (p ->> 'limit')::int)
  from page
$$;
comment on function public.management_receipts_page(jsonb) is 'One page of the environment''s receipts with their acts, newest first, filtered by facetoken, action and code, after a keyset cursor.';

-- management_consents_page({merchant_id, environment, limit, facetoken?, status?, after?: {at, id}})
--   -> {data: [consent], more, last}: the consents the environment's persons gave the merchant, newest first,
--   each active, withdrawn or expired (its retention ran out).
create or replace function public.management_consents_page(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  with listed as (
    select g.recorded_at as at, g.id, s.subject_ref, g.payload, e.recorded_at as ended_at,
           case e.kind when 'consent_withdrawn' then 'withdrawn' when 'consent_expired' then 'expired' else 'active' end as status
    from private.consent_ledger g
    join private.identities i on i.id = g.identity_id
    left join private.subject_refs s on s.merchant_id = g.merchant_id and s.identity_id = g.identity_id
    left join private.consent_ledger e on e.refers_to = g.id and e.kind in ('consent_withdrawn', 'consent_expired')
    where g.kind = 'consent_granted' and g.merchant_id = (p ->> 'merchant_id')::uuid and i.environment = p ->> 'environment'
  ), page as (
    select at, id, jsonb_build_object(
      'id', private.public_id('cnt_', id), 'object', 'consent', 'facetoken', subject_ref,
      'version', payload ->> 'version', 'retention_days', (payload ->> 'retention_days')::int,
      'status', status,
      'granted_at', private.iso_utc(at), 'ended_at', private.iso_utc(ended_at)) as item
    from listed
    where (not p ? 'facetoken' or subject_ref = p ->> 'facetoken')
      and (not p ? 'status' or status = p ->> 'status')
      and (not p ? 'after' or (at, id) < ((p -> 'after' ->> 'at')::timestamptz, (p -> 'after' ->> 'id')::uuid))
    order by at desc, id desc
    limit (p ->> 'limit')::int + 1
  )
  select private.keyset_page(
    coalesce(jsonb_agg(jsonb_build_object('item', item, 'at', at, 'id', id) order by at desc, id desc), '[]'::jsonb),
    (p ->> 'limit')::int)
  from page
$$;
comment on function public.management_consents_page(jsonb) is 'One page of the consents the environment''s persons gave the merchant, newest first, filtered by facetoken and status, after a keyset cursor.';

-- management_disclosures_page({merchant_id, environment, now, limit, facetoken?, status?, after?: {at, id}})
--   -> {data: [disclosure], more, last}: what the merchant received about its persons, newest first: the
--   claims by key, how and whether each was disclosed, the purpose, until when; never a value (the ledger
--   holds none). status active, revoked, or expired (at the request clock).
create or replace function public.management_disclosures_page(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  with listed as (
    select l.recorded_at as at, l.id, s.subject_ref, l.payload, e.recorded_at as revoked_at,
           case when e.id is not null then 'revoked'
                when (l.payload ->> 'expires_at')::timestamptz <= (p ->> 'now')::timestamptz then 'expired'
                else 'active' end as status
    from private.consent_ledger l
    join private.identities i on i.id = l.identity_id
    left join private.subject_refs s on s.merchant_id = l.merchant_id and s.identity_id = l.identity_id
    left join private.consent_ledger e on e.refers_to = l.id and e.kind = 'disclosure_revoked'
    where l.kind = 'disclosure' and l.merchant_id = (p ->> 'merchant_id')::uuid and i.environment = p ->> 'environment'
  ), page as (
    select at, id, jsonb_build_object(
      'id', private.public_id('dsc_', id), 'object', 'disclosure', 'facetoken', subject_ref,
      'purpose', payload ->> 'transaction_type',
      'claims', coalesce((select jsonb_agg(jsonb_build_object('key', c ->> 'key', 'disclosure_type', c ->> 'disclosure_type',
                                                               'status', c ->> 'status'))
                          from jsonb_array_elements(payload -> 'claims') c), '[]'::jsonb),
      'status', status, 'disclosed_at', private.iso_utc(at),
      'expires_at', private.iso_utc((payload ->> 'expires_at')::timestamptz), 'revoked_at', private.iso_utc(revoked_at)) as item
    from listed
    where (not p ? 'facetoken' or subject_ref = p ->> 'facetoken')
      and (not p ? 'status' or status = p ->> 'status')
      and (not p ? 'after' or (at, id) < ((p -> 'after' ->> 'at')::timestamptz, (p -> 'after' ->> 'id')::uuid))
    order by at desc, id desc
    limit (p ->> 'limit')::int + 1
  )
  select private.keyset_page(
    coalesce(jsonb_agg(jsonb_build_object('item', item, 'at', at, 'id', id) order by at desc, id desc), '[]'::jsonb),
    (p ->> 'limit')::int)
  from page
$$;
comment on function public.management_disclosures_page(jsonb) is 'One page of the disclosures the merchant received about the environment''s persons, newest first, filtered by facetoken and status, after a keyset cursor; never a value.';

-- ----------------------------------------------------------------------------
-- Themes and their assets (D-525, D-526): a merchant's themes are the merchant's, in both
-- environments; the audit event goes to the environment of the key that acted.
-- ----------------------------------------------------------------------------
create or replace function private.management_theme_asset_json(a private.theme_assets) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'id', private.public_id('ta_', a.id),
    'object', 'theme_asset',
    'kind', a.kind,
    'content_type', a.content_type,
    'family', a.family,
    'bytes', a.byte_size,
    'sha256', a.sha256,
    'created_at', private.iso_utc(a.created_at))
$$;
comment on function private.management_theme_asset_json(private.theme_assets) is 'A theme asset as /v1/theme_assets shows it (never its content).';

-- management_theme_asset_create({merchant_id, environment, now, actor, kind, content_type, family?, content_base64, sha256})
--   -> theme_asset
create or replace function public.management_theme_asset_create(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_content bytea := decode(p ->> 'content_base64', 'base64');
  v_asset private.theme_assets;
begin
  insert into private.theme_assets (id, merchant_id, kind, content_type, family, content, byte_size, sha256, created_at, created_by)
  values (gen_random_uuid(), (p ->> 'merchant_id')::uuid, p ->> 'kind', p ->> 'content_type', p ->> 'family', v_content,
    octet_length(v_content), p ->> 'sha256', (p ->> 'now')::timestamptz, p -> 'actor' ->> 'id')
  returning * into v_asset;
  perform private.management_audit(p, 'theme_asset.uploaded', 'theme_asset', private.public_id('ta_', v_asset.id), null,
    private.management_theme_asset_json(v_asset));
  return private.management_theme_asset_json(v_asset);
end $$;
comment on function public.management_theme_asset_create(jsonb) is 'Stores an uploaded logo or font of the merchant (checked by the caller) and audits it.';

-- management_theme_assets_list({merchant_id}) -> {data: [theme_asset]}: the newest 100.
create or replace function public.management_theme_assets_list(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('data', coalesce(jsonb_agg(private.management_theme_asset_json(a) order by a.created_at desc, a.id desc), '[]'::jsonb))
  from (select * from private.theme_assets where merchant_id = (p ->> 'merchant_id')::uuid
        order by created_at desc, id desc limit 100) a
$$;
comment on function public.management_theme_assets_list(jsonb) is 'The merchant''s newest 100 theme assets (without content).';

-- management_themes_get({merchant_id, surface}) -> {draft: theme | null, published: theme | null}
create or replace function public.management_themes_get(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object(
    'draft', (select private.theme_result(t) from private.themes t
              where t.merchant_id = (p ->> 'merchant_id')::uuid and t.surface = p ->> 'surface' and t.stage = 'draft'),
    'published', (select private.theme_result(t) from private.themes t
                  where t.merchant_id = (p ->> 'merchant_id')::uuid and t.surface = p ->> 'surface' and t.stage = 'published'))
$$;
comment on function public.management_themes_get(jsonb) is 'A merchant''s draft and published theme of one surface, as stored.';

-- management_theme_draft({merchant_id, environment, now, actor, surface, theme}) -> {draft} | {problems: [text]}
-- Every URL token naming an asset (ta_…) must name one of this merchant's, of the token's kind;
-- otherwise nothing is written and the problems are answered.
create or replace function public.management_theme_draft(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_problems text[];
  v_before jsonb;
  v_draft jsonb;
begin
  select array_agg(format('%s: no %s %s was uploaded by this merchant', t.key, t.kind, t.value) order by t.key) into v_problems
  from (select e.key, e.value #>> '{}' as value, case when e.key like 'logo_%' then 'logo' else 'font' end as kind
        from jsonb_each(coalesce(p -> 'theme', '{}'::jsonb)) e
        where e.key in ('logo_wide_url', 'logo_square_url', 'logo_icon_url', 'font_heading_url', 'font_body_url')
          and e.value #>> '{}' like 'ta\_%') t
  where not exists (select 1 from private.theme_assets a
                    where private.public_id('ta_', a.id) = t.value and a.merchant_id = (p ->> 'merchant_id')::uuid and a.kind = t.kind);
  if v_problems is not null then
    return jsonb_build_object('problems', to_jsonb(v_problems));
  end if;
  select private.theme_tokens(t) into v_before from private.themes t
  where t.merchant_id = (p ->> 'merchant_id')::uuid and t.surface = p ->> 'surface' and t.stage = 'draft';
  v_draft := public.theme_set(p);
  perform private.management_audit(p, 'theme.drafted', 'theme', p ->> 'surface', v_before, v_draft -> 'theme');
  return jsonb_build_object('draft', v_draft);
end $$;
comment on function public.management_theme_draft(jsonb) is 'Writes the draft theme of a surface (theme_set) when its assets are the merchant''s, and audits it.';

-- management_theme_publish({merchant_id, environment, now, actor, surface, version}) -> {published}
-- Publishes the draft the caller checked (its version): another draft written since is HA454; none, HA404.
create or replace function public.management_theme_publish(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_draft private.themes;
  v_before jsonb;
  v_published jsonb;
begin
  select * into v_draft from private.themes
  where merchant_id = (p ->> 'merchant_id')::uuid and surface = p ->> 'surface' and stage = 'draft'
  for update;
  if not found then
    raise exception 'no draft theme' using errcode = 'HA404', detail = '{"missing":"draft"}';
  end if;
  if v_draft.version <> (p ->> 'version')::int then
    raise exception 'the draft changed' using errcode = 'HA454';
  end if;
  select private.theme_tokens(t) into v_before from private.themes t
  where t.merchant_id = v_draft.merchant_id and t.surface = v_draft.surface and t.stage = 'published';
  v_published := public.theme_publish(p);
  perform private.management_audit(p, 'theme.published', 'theme', p ->> 'surface', v_before, v_published -> 'theme');
  return jsonb_build_object('published', v_published);
end $$;
comment on function public.management_theme_publish(jsonb) is 'Publishes the checked version of a surface''s draft theme (theme_publish) and audits it. HA404, HA454.';

-- ----------------------------------------------------------------------------
-- The console: an owner's sign-in by presence and their console session (D-620, D-621)
-- ----------------------------------------------------------------------------

-- owner_sign_in_begin({session: hosted_session_create's input, browser_hash}) -> {started: true, session} | {started: false}
-- Opens the hosted login session and its binding to the browser in one transaction, only for a merchant
-- that has an owner in the session's environment (no session, and no webhook to the merchant, otherwise).
create or replace function public.owner_sign_in_begin(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_session jsonb := p -> 'session';
  v_created jsonb;
begin
  if not exists (
    select 1 from private.merchant_owners
    where merchant_id = (v_session ->> 'merchant_id')::uuid and environment = v_session ->> 'environment'
  ) then
    return jsonb_build_object('started', false);
  end if;
  v_created := public.hosted_session_create(v_session);
  insert into private.owner_sign_ins (session_id, browser_hash, created_at)
  values ((v_session ->> 'id')::uuid, p ->> 'browser_hash', (v_session ->> 'now')::timestamptz);
  return jsonb_build_object('started', true, 'session', v_created);
end $$;
comment on function public.owner_sign_in_begin(jsonb) is 'Opens a hosted login session bound to one browser for an owner''s console sign-in, for a merchant that has an owner.';

-- private.owner_session_json(s, merchant name): the console session as the console reads it.
create or replace function private.owner_session_json(s private.owner_sessions) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object('session_id', s.id, 'merchant_id', s.merchant_id,
    'merchant_name', (select m.name from private.merchants m where m.id = s.merchant_id),
    'environment', s.environment, 'identity_id', s.identity_id, 'subject_ref', s.subject_ref, 'csrf_hash', s.csrf_hash,
    'expires_at', private.iso_utc(s.expires_at),
    'idle_expires_at', private.iso_utc(least(s.expires_at, s.last_seen_at + make_interval(secs => s.idle_seconds))))
$$;
comment on function private.owner_session_json(private.owner_sessions) is 'An owner''s console session as the console reads it (its merchant by id and name, its ends).';

-- owner_sign_in_finish({session_id, browser_hash, now, ip, owner_session: {id, token_hash, csrf_hash, idle_seconds,
--   ttl_seconds}}) -> {signed_in: true, session} | {signed_in: false, reason}
-- reason: unknown (no such sign-in for this browser), used, pending (ask again), refused, stale (as
-- private.sign_in_session_refusal says), not_owner (the face identified is no owner of the merchant in
-- that environment). Only a sign-in that succeeds is used up; it opens the console session and writes
-- the audit event console.signed_in in the same transaction.
create or replace function public.owner_sign_in_finish(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_new jsonb := p -> 'owner_session';
  v_sign private.owner_sign_ins;
  v_session private.hosted_sessions;
  v_owner private.merchant_owners;
  v_row private.owner_sessions;
  v_refusal text;
begin
  select * into v_sign from private.owner_sign_ins
  where session_id = (p ->> 'session_id')::uuid and browser_hash = p ->> 'browser_hash'
  for update;
  if not found then
    return jsonb_build_object('signed_in', false, 'reason', 'unknown');
  end if;
  if v_sign.used_at is not null then
    return jsonb_build_object('signed_in', false, 'reason', 'used');
  end if;
  select * into v_session from private.hosted_sessions where id = v_sign.session_id;
  v_refusal := private.sign_in_session_refusal(v_session, v_now);
  if v_refusal is not null then
    return jsonb_build_object('signed_in', false, 'reason', v_refusal);
  end if;
  select o.* into v_owner from private.merchant_owners o join private.identities i on i.id = o.identity_id
  where o.merchant_id = v_session.merchant_id and o.environment = v_session.environment
    and o.subject_ref = v_session.result ->> 'subject_ref' and i.erased_at is null;
  if not found then
    return jsonb_build_object('signed_in', false, 'reason', 'not_owner');
  end if;
  update private.owner_sign_ins set used_at = v_now where session_id = v_sign.session_id;
  insert into private.owner_sessions (id, token_hash, csrf_hash, merchant_id, environment, identity_id, subject_ref,
    proof_session_id, idle_seconds, created_at, last_seen_at, expires_at)
  values ((v_new ->> 'id')::uuid, v_new ->> 'token_hash', v_new ->> 'csrf_hash', v_owner.merchant_id, v_owner.environment,
    v_owner.identity_id, v_owner.subject_ref, v_session.id, (v_new ->> 'idle_seconds')::int, v_now, v_now,
    v_now + make_interval(secs => (v_new ->> 'ttl_seconds')::int))
  returning * into v_row;
  perform private.management_audit(
    jsonb_build_object('merchant_id', v_owner.merchant_id, 'environment', v_owner.environment, 'now', v_now,
      'actor', jsonb_build_object('kind', 'owner', 'id', v_owner.subject_ref, 'ip', p ->> 'ip')),
    'console.signed_in', 'owner', v_owner.subject_ref, null, null);
  return jsonb_build_object('signed_in', true, 'session', private.owner_session_json(v_row));
end $$;
comment on function public.owner_sign_in_finish(jsonb) is 'Signs an owner in to the console once from a completed hosted login session, for the browser it was bound to: opens their console session, audited.';

-- owner_session_touch({token_hash, now}) -> {session} | {reason: 'unknown' | 'ended' | 'expired'}
-- Authenticates a console request and moves the idle timeout on. ended: signed out (here or everywhere),
-- or the person is no longer an owner of the merchant (removed, or erased); expired: past the absolute
-- end or idle for too long.
create or replace function public.owner_session_touch(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_row private.owner_sessions;
begin
  select * into v_row from private.owner_sessions where token_hash = p ->> 'token_hash' for update;
  if not found then
    return jsonb_build_object('reason', 'unknown');
  end if;
  if v_row.ended_at is not null or not exists (
    select 1 from private.merchant_owners o join private.identities i on i.id = o.identity_id
    where o.merchant_id = v_row.merchant_id and o.identity_id = v_row.identity_id and i.erased_at is null
  ) then
    return jsonb_build_object('reason', 'ended');
  end if;
  if v_now >= v_row.expires_at or v_now >= v_row.last_seen_at + make_interval(secs => v_row.idle_seconds) then
    return jsonb_build_object('reason', 'expired');
  end if;
  update private.owner_sessions set last_seen_at = greatest(last_seen_at, v_now) where id = v_row.id
  returning * into v_row;
  return jsonb_build_object('session', private.owner_session_json(v_row));
end $$;
comment on function public.owner_session_touch(jsonb) is 'Authenticates an owner''s console session by its token''s hash and moves its idle timeout on; why not otherwise.';

-- owner_session_end({session_id, now, everywhere, ip}) -> {ended: n}
-- Signs this console session out, or (everywhere) every console session of the same owner (the same
-- identity, at every merchant they own), audited as console.signed_out at the session's merchant.
create or replace function public.owner_session_end(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_everywhere boolean := coalesce((p ->> 'everywhere')::boolean, false);
  v_row private.owner_sessions;
  v_ended integer;
begin
  select * into v_row from private.owner_sessions where id = (p ->> 'session_id')::uuid;
  if not found then
    return jsonb_build_object('ended', 0);
  end if;
  update private.owner_sessions
  set ended_at = v_now, ended_reason = case when v_everywhere then 'signed_out_everywhere' else 'signed_out' end
  where ended_at is null and (id = v_row.id or (v_everywhere and identity_id = v_row.identity_id));
  get diagnostics v_ended = row_count;
  perform private.management_audit(
    jsonb_build_object('merchant_id', v_row.merchant_id, 'environment', v_row.environment, 'now', v_now,
      'actor', jsonb_build_object('kind', 'owner', 'id', v_row.subject_ref, 'ip', p ->> 'ip')),
    case when v_everywhere then 'console.signed_out_everywhere' else 'console.signed_out' end, 'owner', v_row.subject_ref,
    null, jsonb_build_object('sessions_ended', v_ended));
  return jsonb_build_object('ended', v_ended);
end $$;
comment on function public.owner_session_end(jsonb) is 'Signs a console session out, or every console session of its owner; audited.';

-- owner_merchants({identity_id}) -> {data: [{merchant_id, name, environment}]}: what the console's switcher offers.
create or replace function public.owner_merchants(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('data', coalesce(jsonb_agg(jsonb_build_object('merchant_id', m.id, 'name', m.name,
    'environment', o.environment) order by m.name, m.id), '[]'::jsonb))
  from private.merchant_owners o join private.merchants m on m.id = o.merchant_id
  where o.identity_id = (p ->> 'identity_id')::uuid
$$;
comment on function public.owner_merchants(jsonb) is 'Every merchant an owner (one identity) owns, for the console''s switcher.';

-- management_checks_by_day({merchant_id, environment, now, days}) -> {data: [{day, completed, failed}], recent_failures: [...]}
-- The console's overview: the environment's presence checks (hosted sessions) per UTC day over the last
-- `days` days up to now (every day listed, zero included), by outcome (completed: approved; failed: refused,
-- cancelled or expired), and the five latest that failed (when, which action, why).
create or replace function public.management_checks_by_day(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  with bounds as (
    select (p ->> 'now')::timestamptz as now_at,
           date_trunc('day', (p ->> 'now')::timestamptz at time zone 'UTC') - make_interval(days => (p ->> 'days')::int - 1) as first_day),
  sessions as (
    select s.*, date_trunc('day', s.created_at at time zone 'UTC') as day
    from private.hosted_sessions s, bounds b
    where s.merchant_id = (p ->> 'merchant_id')::uuid and s.environment = p ->> 'environment'
      and s.created_at >= b.first_day at time zone 'UTC' and s.created_at <= b.now_at)
  select jsonb_build_object(
    'data', (select jsonb_agg(jsonb_build_object('day', to_char(d.day, 'YYYY-MM-DD'),
        'completed', (select count(*) from sessions s where s.day = d.day and s.state = 'completed' and (s.result ->> 'approved') = 'true'),
        'failed', (select count(*) from sessions s where s.day = d.day
                   and (s.state in ('failed', 'cancelled', 'expired') or (s.state = 'completed' and (s.result ->> 'approved') is distinct from 'true'))))
        order by d.day)
      from bounds b, generate_series(b.first_day, date_trunc('day', b.now_at at time zone 'UTC'), interval '1 day') as d(day)),
    'recent_failures', coalesce((select jsonb_agg(f.item order by f.ended_at desc) from (
        select jsonb_build_object('at', private.iso_utc(s.ended_at), 'action', s.action, 'state', s.state,
                 'reason', s.result ->> 'reason') as item, s.ended_at
        from private.hosted_sessions s
        where s.merchant_id = (p ->> 'merchant_id')::uuid and s.environment = p ->> 'environment'
          and (s.state in ('failed', 'cancelled', 'expired') or (s.state = 'completed' and (s.result ->> 'approved') is distinct from 'true'))
        order by s.ended_at desc nulls last
        limit 5) f), '[]'::jsonb))
$$;
comment on function public.management_checks_by_day(jsonb) is 'The console''s overview: the environment''s checks per UTC day by outcome, and its five latest failures.';

-- management_mandate_revoke({merchant_id, environment, now, actor, mandate_id, reason?}) -> mandate_revoke's answer | null
-- The console's revocation: the issuing merchant's (mandate_revoke, as /v1 revokes), and the audit event
-- mandate.revoked naming the owner, in one transaction; a repeat or another merchant's mandate writes none.
create or replace function public.management_mandate_revoke(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare v_result jsonb;
begin
  v_result := public.mandate_revoke(jsonb_build_object('by', 'issuing_merchant', 'merchant_id', p ->> 'merchant_id',
    'environment', p ->> 'environment', 'mandate_id', p ->> 'mandate_id', 'now', p ->> 'now', 'reason', p ->> 'reason'));
  if v_result is not null and not (v_result ->> 'already_revoked')::boolean then
    perform private.management_audit(p, 'mandate.revoked', 'mandate', v_result ->> 'mandate_id', null,
      jsonb_build_object('status', 'revoked', 'reason', p ->> 'reason'));
  end if;
  return v_result;
end $$;
comment on function public.management_mandate_revoke(jsonb) is 'Revokes one of the merchant''s mandates as its issuer, audited with the acting owner.';

-- owner_console_sweep({now}) -> {sign_ins, sessions}
-- The minute cron (session-expiry-and-webhooks) deletes what of the console's sign-in can no longer count, as
-- person_passkey_sweep does for the person's page (D-702): sign-ins that stopped counting more than a day ago
-- (private.sign_in_counts_until), and console sessions over for more than a day (signed out, idle past their
-- idle time, or past their absolute end). A cookie of a swept session reads as unknown, which the console
-- answers as it answers an ended one: the sign-in page. The day (private.sweep_cutoff) keeps a recent one for
-- support.
create or replace function public.owner_console_sweep(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_cutoff timestamptz := private.sweep_cutoff(v_now);
  v_sign_ins integer;
  v_sessions integer;
begin
  if v_now is null then
    raise exception 'now is required' using errcode = '22023';
  end if;
  -- created_at bounds the scans (their indexes): each stops counting after it was made.
  delete from private.owner_sign_ins g
  using private.hosted_sessions s
  where s.id = g.session_id
    and g.created_at < v_cutoff
    and private.sign_in_counts_until(g.used_at, s) < v_cutoff;
  get diagnostics v_sign_ins = row_count;
  delete from private.owner_sessions o
  where o.created_at < v_cutoff
    and least(coalesce(o.ended_at, o.expires_at), o.expires_at, o.last_seen_at + make_interval(secs => o.idle_seconds))
        < v_cutoff;
  get diagnostics v_sessions = row_count;
  return jsonb_build_object('sign_ins', v_sign_ins, 'sessions', v_sessions);
end $$;
comment on function public.owner_console_sweep(jsonb) is
  'Deletes console sign-ins that stopped counting and console sessions over, more than a day before now (the minute cron).';
