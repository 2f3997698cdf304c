-- ============================================================================
-- The per-function circuit breaker (503 SLO_BREACH_PAUSED), per deployment, merchant and environment.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- circuit_breaker_state({deployment, function_name, merchant_id, environment, now}) -> {open, retry_after_seconds}
create or replace function public.circuit_breaker_state(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object(
    'open', coalesce(b.open_until > (p ->> 'now')::timestamptz, false),
    'retry_after_seconds', greatest(1, ceil(extract(epoch from (b.open_until - (p ->> 'now')::timestamptz)))::int))
  from (select 1) one
  left join private.circuit_breakers b
    on b.deployment = p ->> 'deployment' and b.function_name = p ->> 'function_name'
   and b.merchant_id = (p ->> 'merchant_id')::uuid and b.environment = p ->> 'environment'
$$;
comment on function public.circuit_breaker_state(jsonb) is 'Whether a function is paused by its circuit breaker for one merchant and environment.';

-- circuit_breaker_record({deployment, function_name, merchant_id, environment, now, window_seconds, threshold, open_seconds}) -> {opened}
-- Counts one breach; the threshold-th breach inside the window opens the breaker for open_seconds.
create or replace function public.circuit_breaker_record(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_row private.circuit_breakers;
begin
  insert into private.circuit_breakers as b (deployment, function_name, merchant_id, environment, window_started_at, breaches)
  values (p ->> 'deployment', p ->> 'function_name', (p ->> 'merchant_id')::uuid, p ->> 'environment', v_now, 1)
  on conflict (deployment, function_name, merchant_id, environment) do update
    set breaches = case when b.window_started_at <= v_now - make_interval(secs => (p ->> 'window_seconds')::int)
                        then 1 else b.breaches + 1 end,
        window_started_at = case when b.window_started_at <= v_now - make_interval(secs => (p ->> 'window_seconds')::int)
                                 then v_now else b.window_started_at end
  returning * into v_row;
  if v_row.breaches >= (p ->> 'threshold')::int and (v_row.open_until is null or v_row.open_until <= v_now) then
    update private.circuit_breakers
    set open_until = v_now + make_interval(secs => (p ->> 'open_seconds')::int), breaches = 0, window_started_at = v_now
    where deployment = v_row.deployment and function_name = v_row.function_name
      and merchant_id = v_row.merchant_id and environment = v_row.environment;
    return jsonb_build_object('opened', true);
  end if;
  return jsonb_build_object('opened', false);
end $$;
comment on function public.circuit_breaker_record(jsonb) is 'Counts an SLO breach and opens the breaker when the window''s threshold is reached.';
