-- ============================================================================
-- Webhook key rotation: re-sealing endpoint secrets under a new WEBHOOK_SECRET_KEY
-- The database never holds the key or a secret in the clear, so the CLI reads the sealed
-- secrets, opens each with the previous key and seals it again with the new one
-- (shared/webhooks/endpoints.ts, resealSecrets), then writes them back here in one
-- transaction. A secret rotated or deleted in between is left as it is (compare and set).
-- ============================================================================

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

-- Grants (the rules of 20261121009000_rpc_grants.sql, stated again for what this file creates)
revoke execute on function public.webhook_secrets_sealed(jsonb) from public;
revoke execute on function public.webhook_secrets_reseal(jsonb) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    execute 'grant execute on function public.webhook_secrets_sealed(jsonb), public.webhook_secrets_reseal(jsonb) to service_role';
  end if;
end $$;
