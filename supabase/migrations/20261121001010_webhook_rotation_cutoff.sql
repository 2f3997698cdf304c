-- ============================================================================
-- Webhook secret rotation: the overlap bounds every earlier secret
-- 20261121001000_webhooks.sql gave only the current secret an expiry on rotation, so after two
-- rotations within a day an older secret kept its own later expiry, and `overlap_seconds = 0`
-- (cutting off a leaked secret) left a secret from an earlier rotation signing. Now every secret
-- still signing is cut to at most now + overlap_seconds. (CREATE OR REPLACE keeps the grants.)
-- ============================================================================

-- webhook_secret_rotate({endpoint_id, sealed_secret, secret_hint, now, overlap_seconds})
--   -> endpoint + {previous_valid_until}
-- The secrets signing until now keep signing for at most overlap_seconds more (0 to 86400, default
-- 86400) beside the new one, so 0 cuts every earlier secret off at once; expired ones are deleted.
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
