-- ============================================================================
-- Webhooks: endpoints, secrets, fan-out of outbox events, delivery claims and results.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- Helpers
-- ----------------------------------------------------------------------------
-- ISO 8601 in UTC with milliseconds, exactly as JavaScript's Date#toISOString writes it.
create or replace function private.iso_utc(p_at timestamptz) returns text
language sql stable parallel safe set search_path = '' as $$
  select to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;
comment on function private.iso_utc(timestamptz) is 'A timestamp as YYYY-MM-DDTHH:MM:SS.mmmZ (UTC), the form of every time in an envelope.';

-- The endpoint as the CLI shows it: never a secret, only hints.
create or replace function private.webhook_endpoint_json(p_endpoint private.webhook_endpoints, p_now timestamptz) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'endpoint_id', p_endpoint.id,
    'merchant_id', p_endpoint.merchant_id,
    'environment', p_endpoint.environment,
    'url', p_endpoint.url,
    'event_types', to_jsonb(p_endpoint.event_types),
    'status', p_endpoint.status,
    'disabled_reason', p_endpoint.disabled_reason,
    'disabled_at', p_endpoint.disabled_at,
    'created_at', p_endpoint.created_at,
    'secrets', (
      select coalesce(jsonb_agg(jsonb_build_object(
        'hint', s.secret_hint,
        'created_at', s.created_at,
        'expires_at', s.expires_at) order by s.created_at desc), '[]'::jsonb)
      from private.webhook_endpoint_secrets s
      where s.endpoint_id = p_endpoint.id and (s.expires_at is null or s.expires_at > p_now)),
    'deliveries', (
      select jsonb_build_object(
        'pending', count(*) filter (where d.state in ('pending', 'delivering')),
        'succeeded', count(*) filter (where d.state = 'succeeded'),
        'failed', count(*) filter (where d.state = 'failed'))
      from private.webhook_deliveries d
      where d.endpoint_id = p_endpoint.id),
    'last_error', (
      select jsonb_build_object(
        'at', coalesce(d.last_attempt_at, d.finished_at),
        'event_id', d.event_id,
        'state', d.state,
        'status', d.last_status,
        'error', d.last_error)
      from private.webhook_deliveries d
      where d.endpoint_id = p_endpoint.id and d.last_error is not null
      order by coalesce(d.last_attempt_at, d.finished_at) desc nulls last, d.id desc
      limit 1))
$$;
comment on function private.webhook_endpoint_json(private.webhook_endpoints, timestamptz) is 'An endpoint with the hints of its secrets valid at p_now, its delivery counts by state and its latest delivery error (why the last failed attempt failed, e.g. a URL refused by local policy), or null.';

-- The merchants a quick pass (docs/webhooks.md#delivery) may work for, from its optional `scope`:
-- null when there is none (the cron's pass: everyone), else one row per merchant, with the
-- environment or null for both. At most 100 entries; a malformed one is refused (22023).
create or replace function private.webhook_scope(p_scope jsonb) returns table (merchant_id uuid, environment text)
language plpgsql immutable set search_path = '' as $$
begin
  if p_scope is null or jsonb_typeof(p_scope) = 'null' then
    return;
  end if;
  if jsonb_typeof(p_scope) <> 'array' or jsonb_array_length(p_scope) not between 1 and 100
     or exists (select 1 from jsonb_array_elements(p_scope) s
                where jsonb_typeof(s) <> 'object' or coalesce(s ->> 'merchant_id', '') = ''
                   or coalesce(s ->> 'environment', 'test') not in ('test', 'live')) then
    raise exception 'scope must be 1 to 100 of {merchant_id, environment?}' using errcode = '22023';
  end if;
  return query select distinct (s ->> 'merchant_id')::uuid, s ->> 'environment' from jsonb_array_elements(p_scope) s;
end $$;
comment on function private.webhook_scope(jsonb) is 'A quick pass''s scope as rows (merchant, environment or null for both); no rows without a scope. 22023 when malformed.';

-- Pending deliveries of endpoints that are disabled can never be sent: they fail, replayable.
create or replace function private.webhook_fail_disabled(p_endpoint_ids uuid[], p_now timestamptz) returns int
language plpgsql set search_path = '' as $$
declare v_count int;
begin
  update private.webhook_deliveries d
  set state = 'failed', next_attempt_at = null, finished_at = p_now, last_error = 'endpoint disabled'
  from private.webhook_endpoints e
  where e.id = d.endpoint_id and e.id = any(p_endpoint_ids) and e.status = 'disabled' and d.state = 'pending';
  get diagnostics v_count = row_count;
  return v_count;
end $$;
comment on function private.webhook_fail_disabled(uuid[], timestamptz) is 'Fails the pending deliveries of those of the given endpoints that are disabled; returns how many.';

-- ============================================================================
-- RPCs: endpoint management (the CLI)
-- ============================================================================

-- webhook_endpoint_create({endpoint_id, merchant_id, environment, url, event_types | null,
--   sealed_secret, secret_hint, now}) -> endpoint
-- At most 16 active endpoints per merchant and environment (HA601). The secret arrives sealed.
create or replace function public.webhook_endpoint_create(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
  v_environment text := p ->> 'environment';
  v_endpoint private.webhook_endpoints;
begin
  if v_now is null or p ->> 'endpoint_id' is null or coalesce(p ->> 'url', '') = ''
     or coalesce(p ->> 'sealed_secret', '') = '' or coalesce(p ->> 'secret_hint', '') = '' then
    raise exception 'endpoint_id, url, sealed_secret, secret_hint and now are required' using errcode = '22023';
  end if;
  if p ? 'event_types' and jsonb_typeof(p -> 'event_types') not in ('array', 'null') then
    raise exception 'event_types must be an array or null' using errcode = '22023';
  end if;
  -- serialises endpoint creation per merchant (for the count) without blocking foreign-key checks
  perform 1 from private.merchants where id = v_merchant for no key update;
  if not found then
    raise exception 'unknown merchant' using errcode = 'HA404';
  end if;
  if (select count(*) from private.webhook_endpoints
      where merchant_id = v_merchant and environment = v_environment and status = 'active') >= 16 then
    raise exception 'at most 16 active endpoints per merchant and environment' using errcode = 'HA601';
  end if;

  insert into private.webhook_endpoints (id, merchant_id, environment, url, event_types, created_at, updated_at)
  values (
    (p ->> 'endpoint_id')::uuid, v_merchant, v_environment, p ->> 'url',
    case when jsonb_typeof(p -> 'event_types') = 'array'
         then array(select jsonb_array_elements_text(p -> 'event_types')) end,
    v_now, v_now)
  returning * into v_endpoint;
  insert into private.webhook_endpoint_secrets (endpoint_id, sealed_secret, secret_hint, created_at)
  values (v_endpoint.id, p ->> 'sealed_secret', p ->> 'secret_hint', v_now);
  return private.webhook_endpoint_json(v_endpoint, v_now);
end $$;
comment on function public.webhook_endpoint_create(jsonb) is 'Registers an endpoint with its first (sealed) secret; HA404 unknown merchant, HA601 too many endpoints.';

-- webhook_endpoint_list({merchant_id, environment?, now}) -> {endpoints: [endpoint]}
create or replace function public.webhook_endpoint_list(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
declare
  v_now timestamptz := coalesce((p ->> 'now')::timestamptz, now());
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
begin
  if not exists (select 1 from private.merchants where id = v_merchant) then
    raise exception 'unknown merchant' using errcode = 'HA404';
  end if;
  return jsonb_build_object('endpoints', (
    select coalesce(jsonb_agg(private.webhook_endpoint_json(e, v_now) order by e.created_at, e.id), '[]'::jsonb)
    from private.webhook_endpoints e
    where e.merchant_id = v_merchant and (p ->> 'environment' is null or e.environment = p ->> 'environment')));
end $$;
comment on function public.webhook_endpoint_list(jsonb) is 'A merchant''s endpoints (optionally of one environment) with secret hints and delivery counts; HA404 unknown merchant.';

-- webhook_endpoint_get({endpoint_id, now}) -> endpoint (HA404 when unknown)
create or replace function public.webhook_endpoint_get(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
declare v_endpoint private.webhook_endpoints;
begin
  select * into v_endpoint from private.webhook_endpoints where id = (p ->> 'endpoint_id')::uuid;
  if v_endpoint.id is null then
    raise exception 'unknown endpoint' using errcode = 'HA404';
  end if;
  return private.webhook_endpoint_json(v_endpoint, coalesce((p ->> 'now')::timestamptz, now()));
end $$;
comment on function public.webhook_endpoint_get(jsonb) is 'One endpoint with secret hints and delivery counts; HA404 when unknown.';

-- webhook_endpoint_disable({endpoint_id, now}) -> endpoint + {already_disabled, failed_deliveries}
-- Disabling is final for the endpoint's pending deliveries: they fail (and stay replayable).
create or replace function public.webhook_endpoint_disable(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_endpoint private.webhook_endpoints;
  v_already boolean;
  v_failed int;
begin
  if v_now is null then
    raise exception 'now is required' using errcode = '22023';
  end if;
  select * into v_endpoint from private.webhook_endpoints where id = (p ->> 'endpoint_id')::uuid for update;
  if v_endpoint.id is null then
    raise exception 'unknown endpoint' using errcode = 'HA404';
  end if;
  v_already := v_endpoint.status = 'disabled';
  if not v_already then
    update private.webhook_endpoints
    set status = 'disabled', disabled_reason = 'manual', disabled_at = v_now, updated_at = v_now
    where id = v_endpoint.id
    returning * into v_endpoint;
  end if;
  v_failed := private.webhook_fail_disabled(array[v_endpoint.id], v_now);
  return private.webhook_endpoint_json(v_endpoint, v_now)
    || jsonb_build_object('already_disabled', v_already, 'failed_deliveries', v_failed);
end $$;
comment on function public.webhook_endpoint_disable(jsonb) is 'Disables an endpoint (idempotent) and fails its pending deliveries; HA404 when unknown.';

-- webhook_secret_rotate({endpoint_id, sealed_secret, secret_hint, now, overlap_seconds})
--   -> endpoint + {previous_valid_until}
-- The current secret keeps signing for overlap_seconds (0 to 86400, default 86400) beside the new
-- one; secrets already expired are deleted.
create or replace function public.webhook_secret_rotate(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_overlap int := coalesce((p ->> 'overlap_seconds')::int, 86400);
  v_endpoint private.webhook_endpoints;
begin
  if v_now is null or coalesce(p ->> 'sealed_secret', '') = '' or coalesce(p ->> 'secret_hint', '') = '' then
    raise exception 'sealed_secret, secret_hint and now are required' using errcode = '22023';
  end if;
  if v_overlap not between 0 and 86400 then
    raise exception 'overlap_seconds must be 0 to 86400' using errcode = '22023';
  end if;
  select * into v_endpoint from private.webhook_endpoints where id = (p ->> 'endpoint_id')::uuid for update;
  if v_endpoint.id is null then
    raise exception 'unknown endpoint' using errcode = 'HA404';
  end if;
  delete from private.webhook_endpoint_secrets where endpoint_id = v_endpoint.id and expires_at <= v_now;
  update private.webhook_endpoint_secrets
  set expires_at = least(coalesce(expires_at, 'infinity'), v_now + make_interval(secs => v_overlap))
  where endpoint_id = v_endpoint.id;
  insert into private.webhook_endpoint_secrets (endpoint_id, sealed_secret, secret_hint, created_at)
  values (v_endpoint.id, p ->> 'sealed_secret', p ->> 'secret_hint', v_now);
  update private.webhook_endpoints set updated_at = v_now where id = v_endpoint.id returning * into v_endpoint;
  return private.webhook_endpoint_json(v_endpoint, v_now)
    || jsonb_build_object('previous_valid_until', v_now + make_interval(secs => v_overlap));
end $$;
comment on function public.webhook_secret_rotate(jsonb) is 'Makes a new current secret; every earlier one keeps signing for at most the overlap (24 h by default, 0 = none). HA404 when unknown.';

-- webhook_replay({event_id} | {merchant_id, environment, from, to}, endpoint_id?, now)
--   -> {events, deliveries}
-- New deliveries (origin replay, fresh 72-hour window) of the same events, to the active endpoints
-- of the event's merchant and environment that subscribe to its type (or only to endpoint_id).
-- A range is created_at in [from, to), at most 10,000 events.
create or replace function public.webhook_replay(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_endpoint uuid := (p ->> 'endpoint_id')::uuid;
  v_events uuid[];
  v_deliveries int;
begin
  if v_now is null then
    raise exception 'now is required' using errcode = '22023';
  end if;
  if p ? 'event_id' then
    select array_agg(id) into v_events from private.outbox_events where id = (p ->> 'event_id')::uuid;
    if v_events is null then
      raise exception 'unknown event' using errcode = 'HA404';
    end if;
  else
    if (p ->> 'from') is null or (p ->> 'to') is null or (p ->> 'environment') is null then
      raise exception 'event_id, or merchant_id, environment, from and to, are required' using errcode = '22023';
    end if;
    if not exists (select 1 from private.merchants where id = (p ->> 'merchant_id')::uuid) then
      raise exception 'unknown merchant' using errcode = 'HA404';
    end if;
    select coalesce(array_agg(id), '{}') into v_events from (
      select id from private.outbox_events
      where merchant_id = (p ->> 'merchant_id')::uuid
        and environment = p ->> 'environment'
        and created_at >= (p ->> 'from')::timestamptz and created_at < (p ->> 'to')::timestamptz
      limit 10001) r;
    if cardinality(v_events) > 10000 then
      raise exception 'the range holds more than 10000 events; replay it in smaller ranges' using errcode = '22023';
    end if;
  end if;
  if v_endpoint is not null and not exists (
      select 1 from private.webhook_endpoints e join private.outbox_events o on o.id = any(v_events)
      where e.id = v_endpoint and e.merchant_id = o.merchant_id) and cardinality(v_events) > 0 then
    raise exception 'unknown endpoint for these events' using errcode = 'HA404';
  end if;

  insert into private.webhook_deliveries (event_id, endpoint_id, merchant_id, origin, created_at, next_attempt_at)
  select o.id, e.id, o.merchant_id, 'replay', v_now, v_now
  from private.outbox_events o
  join private.webhook_endpoints e
    on e.merchant_id = o.merchant_id and e.environment = o.environment and e.status = 'active'
   and (e.event_types is null or o.type = any(e.event_types))
  where o.id = any(v_events) and (v_endpoint is null or e.id = v_endpoint);
  get diagnostics v_deliveries = row_count;
  return jsonb_build_object('events', cardinality(v_events), 'deliveries', v_deliveries);
end $$;
comment on function public.webhook_replay(jsonb) is 'Queues the same events again (same id, new deliveries, fresh window) for the subscribed active endpoints; HA404 unknown event, merchant or endpoint.';

-- ============================================================================
-- RPCs: the outbox worker
-- ============================================================================

-- webhook_fanout({now, limit?, scope?}) -> {events, deliveries}
-- Takes up to `limit` (1 to 10000, default 2000) events not yet fanned out, oldest first, skipping
-- rows a concurrent run holds, inserts one delivery per subscribed active endpoint of the same
-- merchant AND environment, due now, and marks the events. With `scope` ([{merchant_id,
-- environment?}], private.webhook_scope) only those merchants' events: a quick pass after a
-- request (docs/webhooks.md#delivery) never fans out another merchant's.
create or replace function public.webhook_fanout(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_limit int := least(greatest(coalesce((p ->> 'limit')::int, 2000), 1), 10000);
  v_merchants uuid[];
  v_environments text[];
  v_events int;
  v_deliveries int;
begin
  if v_now is null then
    raise exception 'now is required' using errcode = '22023';
  end if;
  select array_agg(s.merchant_id), array_agg(s.environment) into v_merchants, v_environments from private.webhook_scope(p -> 'scope') s;
  with batch as (
    select o.id, o.merchant_id, o.environment, o.type
    from private.outbox_events o
    where o.fanned_out_at is null
      and (v_merchants is null or exists (
        select 1 from unnest(v_merchants, v_environments) s(merchant_id, environment)
        where s.merchant_id = o.merchant_id and (s.environment is null or s.environment = o.environment)))
    order by o.created_at, o.id
    limit v_limit
    for update skip locked
  ), marked as (
    update private.outbox_events o set fanned_out_at = v_now from batch where o.id = batch.id returning o.id
  ), inserted as (
    insert into private.webhook_deliveries (event_id, endpoint_id, merchant_id, origin, created_at, next_attempt_at)
    select b.id, e.id, b.merchant_id, 'fanout', v_now, v_now
    from batch b
    join private.webhook_endpoints e
      on e.merchant_id = b.merchant_id and e.environment = b.environment and e.status = 'active'
     and (e.event_types is null or b.type = any(e.event_types))
    on conflict (event_id, endpoint_id) where origin = 'fanout' do nothing
    returning 1
  )
  select (select count(*) from marked), (select count(*) from inserted) into v_events, v_deliveries;
  return jsonb_build_object('events', v_events, 'deliveries', v_deliveries);
end $$;
comment on function public.webhook_fanout(jsonb) is 'Turns new outbox events (optionally only those of a scope''s merchants) into deliveries for the matching endpoints (same merchant and environment), once per event.';

-- webhook_deliveries_claim({now, limit?, lease_seconds, scope?})
--   -> {deliveries: [{delivery_id, lease_token, attempt, window_start, endpoint_id, event}],
--       endpoints: [{endpoint_id, url, sealed_secrets: [{sealed_secret}]}]}
-- Claims up to `limit` (1 to 2000, default 500) due deliveries of active endpoints, oldest due
-- first: pending ones whose time has come, and delivering ones whose lease ran out (a run that
-- died between claim and result). `for update skip locked` plus the lease mean two overlapping
-- runs never hold the same delivery; each claim counts an attempt and gets a fresh lease token.
-- With `scope` (as webhook_fanout's) only deliveries of those merchants' endpoints, in the scope's
-- environment: a quick pass claims under the same lease, so it and the cron never both hold one.
create or replace function public.webhook_deliveries_claim(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_limit int := least(greatest(coalesce((p ->> 'limit')::int, 500), 1), 2000);
  v_lease interval := make_interval(secs => (p ->> 'lease_seconds')::int);
  v_merchants uuid[];
  v_environments text[];
  v_claimed jsonb;
begin
  if v_now is null or v_lease is null or v_lease <= interval '0' then
    raise exception 'now and a positive lease_seconds are required' using errcode = '22023';
  end if;
  select array_agg(s.merchant_id), array_agg(s.environment) into v_merchants, v_environments from private.webhook_scope(p -> 'scope') s;
  with due as (
    select d.id
    from private.webhook_deliveries d
    join private.webhook_endpoints e on e.id = d.endpoint_id and e.status = 'active'
    where ((d.state = 'pending' and d.next_attempt_at <= v_now) or (d.state = 'delivering' and d.lease_until <= v_now))
      and (v_merchants is null or exists (
        select 1 from unnest(v_merchants, v_environments) s(merchant_id, environment)
        where s.merchant_id = d.merchant_id and (s.environment is null or s.environment = e.environment)))
    order by d.next_attempt_at, d.id
    limit v_limit
    for update of d skip locked
  ), claimed as (
    update private.webhook_deliveries d
    set state = 'delivering', attempt_count = d.attempt_count + 1,
        lease_until = v_now + v_lease, lease_token = gen_random_uuid()
    from due where d.id = due.id
    returning d.id, d.lease_token, d.attempt_count, d.created_at, d.endpoint_id, d.event_id, d.next_attempt_at
  )
  select coalesce(jsonb_agg(jsonb_build_object(
      'delivery_id', c.id,
      'lease_token', c.lease_token,
      'attempt', c.attempt_count,
      'window_start', private.iso_utc(c.created_at),
      'endpoint_id', c.endpoint_id,
      'event', jsonb_build_object(
        'id', o.id,
        'type', o.type,
        'created_at', private.iso_utc(o.created_at),
        'api_version', o.api_version,
        'data', o.data)) order by c.next_attempt_at, c.id), '[]'::jsonb)
  into v_claimed
  from claimed c join private.outbox_events o on o.id = c.event_id;

  return jsonb_build_object(
    'deliveries', v_claimed,
    'endpoints', (
      select coalesce(jsonb_agg(jsonb_build_object(
        'endpoint_id', e.id,
        'url', e.url,
        'sealed_secrets', (
          select coalesce(jsonb_agg(s.sealed_secret order by s.created_at desc), '[]'::jsonb)
          from private.webhook_endpoint_secrets s
          where s.endpoint_id = e.id and (s.expires_at is null or s.expires_at > v_now)))), '[]'::jsonb)
      from private.webhook_endpoints e
      where e.id in (select (x ->> 'endpoint_id')::uuid from jsonb_array_elements(v_claimed) x)));
end $$;
comment on function public.webhook_deliveries_claim(jsonb) is 'Claims due deliveries (optionally only those of a scope''s merchants) under a lease (skip locked), with their events and the endpoints'' URLs and sealed secrets valid now.';

-- webhook_deliveries_record({now, results: [{delivery_id, lease_token, outcome, attempted_at?,
--   status?, error?, next_attempt_at?, gone?, latency_ms?, response_excerpt?}]}) -> {recorded, stale, endpoints_disabled, failed_by_disable}
-- Every sent attempt is also kept in the delivery log (private.webhook_delivery_attempts).
-- outcome: succeeded | retry (pending again at next_attempt_at) | failed (given up) | released (never
-- sent: pending again, the claimed attempt handed back). A result whose lease token no longer
-- matches (the lease ran out and another run claimed it) is ignored and counted as stale.
-- gone = the endpoint answered 410: it is disabled, and its pending deliveries fail.
create or replace function public.webhook_deliveries_record(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_total int := jsonb_array_length(coalesce(p -> 'results', '[]'::jsonb));
  v_recorded int;
  v_gone uuid[];
  v_touched uuid[];
  v_disabled int;
  v_failed int;
begin
  if v_now is null or jsonb_typeof(p -> 'results') is distinct from 'array' then
    raise exception 'now and results are required' using errcode = '22023';
  end if;
  if exists (select 1 from jsonb_array_elements(p -> 'results') r
             where r ->> 'outcome' is null or r ->> 'outcome' not in ('succeeded', 'retry', 'failed', 'released')
                or (r ->> 'outcome' = 'retry' and r ->> 'next_attempt_at' is null)) then
    raise exception 'each result needs an outcome (succeeded, retry with next_attempt_at, failed, released)' using errcode = '22023';
  end if;

  with r as (
    select * from jsonb_to_recordset(p -> 'results') as x(
      delivery_id uuid, lease_token uuid, outcome text, attempted_at timestamptz, status int, error text,
      next_attempt_at timestamptz, gone boolean, latency_ms int, response_excerpt text)
  ), updated as (
    update private.webhook_deliveries d
    set state = case r.outcome when 'succeeded' then 'succeeded' when 'failed' then 'failed' else 'pending' end,
        attempt_count = d.attempt_count - case when r.outcome = 'released' then 1 else 0 end,
        next_attempt_at = case r.outcome when 'retry' then r.next_attempt_at when 'released' then d.next_attempt_at end,
        lease_until = null,
        lease_token = null,
        last_attempt_at = case when r.outcome = 'released' then d.last_attempt_at else coalesce(r.attempted_at, v_now) end,
        last_status = case when r.outcome = 'released' then d.last_status else r.status end,
        last_error = case when r.outcome = 'released' then d.last_error else left(r.error, 500) end,
        finished_at = case when r.outcome in ('succeeded', 'failed') then v_now end
    from r
    where d.id = r.delivery_id and d.state = 'delivering' and d.lease_token = r.lease_token
    returning d.id, d.endpoint_id, d.attempt_count, coalesce(r.gone, false) as gone, r.outcome, r.attempted_at, r.status,
      r.latency_ms, r.response_excerpt, r.error, r.next_attempt_at
  ), attempts as (
    -- the delivery log: each sent attempt, as its number (a released claim sent nothing)
    insert into private.webhook_delivery_attempts (delivery_id, attempt, attempted_at, outcome, response_status, latency_ms,
      response_excerpt, error, next_attempt_at)
    select u.id, u.attempt_count, coalesce(u.attempted_at, v_now), u.outcome, u.status, least(greatest(u.latency_ms, 0), 3600000),
      left(u.response_excerpt, 256), left(u.error, 500), case when u.outcome = 'retry' then u.next_attempt_at end
    from updated u
    where u.outcome <> 'released' and u.attempt_count >= 1
    on conflict (delivery_id, attempt) do nothing
  )
  select count(*),
         coalesce(array_agg(distinct endpoint_id) filter (where gone), '{}'),
         coalesce(array_agg(distinct endpoint_id), '{}')
  into v_recorded, v_gone, v_touched
  from updated;

  update private.webhook_endpoints
  set status = 'disabled', disabled_reason = 'gone', disabled_at = v_now, updated_at = v_now
  where id = any(v_gone) and status = 'active';
  get diagnostics v_disabled = row_count;
  -- Also catches retries recorded for an endpoint disabled while this run was sending.
  v_failed := private.webhook_fail_disabled(v_touched, v_now);

  return jsonb_build_object('recorded', v_recorded, 'stale', v_total - v_recorded,
                            'endpoints_disabled', v_disabled, 'failed_by_disable', v_failed);
end $$;
comment on function public.webhook_deliveries_record(jsonb) is 'Records attempt results of claimed deliveries (only with the claim''s lease token); a 410 disables the endpoint.';

-- ============================================================================
-- RPCs: re-sealing endpoint secrets under a new WEBHOOK_SECRET_KEY (the CLI)
-- ============================================================================
-- The database never holds the key or a secret in the clear, so the CLI reads the sealed
-- secrets, opens each with the previous key and seals it again with the new one
-- (shared/webhooks/endpoints.ts, resealSecrets), then writes them back here in one
-- transaction. A secret rotated or deleted in between is left as it is (compare and set).

-- webhook_secrets_sealed({}) -> [{secret_id, endpoint_id, sealed_secret}]
create or replace function public.webhook_secrets_sealed(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select coalesce(
    jsonb_agg(jsonb_build_object('secret_id', s.id, 'endpoint_id', s.endpoint_id, 'sealed_secret', s.sealed_secret) order by s.created_at, s.id),
    '[]'::jsonb)
  from private.webhook_endpoint_secrets s
$$;
comment on function public.webhook_secrets_sealed(jsonb) is 'Every stored endpoint secret, sealed, for re-sealing under a new WEBHOOK_SECRET_KEY.';

-- webhook_secrets_reseal({secrets: [{secret_id, sealed_secret, resealed_secret}]}) -> {resealed, skipped}
-- Each row changes only while it still holds sealed_secret; the others count as skipped.
create or replace function public.webhook_secrets_reseal(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_items jsonb := p -> 'secrets';
  v_resealed int;
begin
  if v_items is null or jsonb_typeof(v_items) <> 'array' then
    raise exception 'secrets must be an array' using errcode = '22023';
  end if;
  if exists (
    select 1 from jsonb_array_elements(v_items) i
    where coalesce(i ->> 'secret_id', '') = '' or coalesce(i ->> 'sealed_secret', '') = '' or coalesce(i ->> 'resealed_secret', '') = ''
  ) then
    raise exception 'every secret needs secret_id, sealed_secret and resealed_secret' using errcode = '22023';
  end if;
  with changed as (
    update private.webhook_endpoint_secrets s
    set sealed_secret = i ->> 'resealed_secret'
    from jsonb_array_elements(v_items) i
    where s.id = (i ->> 'secret_id')::uuid and s.sealed_secret = i ->> 'sealed_secret'
    returning s.id
  )
  select count(*) into v_resealed from changed;
  return jsonb_build_object('resealed', v_resealed, 'skipped', jsonb_array_length(v_items) - v_resealed);
end $$;
comment on function public.webhook_secrets_reseal(jsonb) is 'Writes re-sealed endpoint secrets, each only where the stored one is still the one that was read.';
