-- ============================================================================
-- Devices: a person's WebAuthn credentials (register, look up, record a use,
-- list, revoke) and the challenges the service issues for them to sign (issue,
-- consume once). Functions only, each defined once (create or replace); the
-- tables are in supabase/migrations/20261127003100_devices.sql. The
-- cryptography (attestation, signatures) is shared/devices/; these functions
-- keep what it decided, atomically.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- Helpers
-- ----------------------------------------------------------------------------

-- A credential as the RPCs answer it (the public key as hex).
create or replace function private.device_credential_json(d private.device_credentials) returns jsonb
language sql immutable set search_path = '' as $$
  select jsonb_build_object(
    'device_id', d.id,
    'identity_id', d.identity_id,
    'environment', d.environment,
    'credential_id', d.credential_id,
    'public_key_hex', encode(d.public_key, 'hex'),
    'sign_count', d.sign_count,
    'transports', to_jsonb(d.transports),
    'aaguid', d.aaguid,
    'attestation_format', d.attestation_format,
    'attestation_verdict', d.attestation_verdict,
    'backup_eligible', d.backup_eligible,
    'backup_state', d.backup_state,
    'created_at', d.created_at,
    'last_used_at', d.last_used_at,
    'sign_count_regressed_at', d.sign_count_regressed_at,
    'revoked_at', d.revoked_at)
$$;
comment on function private.device_credential_json(private.device_credentials) is
  'A device credential as the device RPCs answer it: every column, the COSE public key as hex.';

-- ----------------------------------------------------------------------------
-- Credentials
-- ----------------------------------------------------------------------------

-- device_credential_register({environment, now, identity_id, device_id, credential_id, public_key_hex,
--   sign_count, transports, aaguid, attestation_format, attestation_verdict, backup_eligible, backup_state})
--   -> {registered: true, device} | {registered: false, reason: identity_unknown | credential_exists}
create or replace function public.device_credential_register(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_env text := p ->> 'environment';
  v_row private.device_credentials;
begin
  perform 1 from private.identities
  where id = (p ->> 'identity_id')::uuid and environment = v_env and erased_at is null;
  if not found then
    return jsonb_build_object('registered', false, 'reason', 'identity_unknown');
  end if;
  -- The unique (environment, credential_id) decides a race between two registrations of one
  -- credential: the loser gets no row back, never a second owner.
  insert into private.device_credentials (
    id, identity_id, environment, credential_id, public_key, sign_count, transports, aaguid,
    attestation_format, attestation_verdict, backup_eligible, backup_state, created_at)
  values (
    (p ->> 'device_id')::uuid, (p ->> 'identity_id')::uuid, v_env, p ->> 'credential_id',
    decode(p ->> 'public_key_hex', 'hex'), (p ->> 'sign_count')::bigint,
    coalesce(array(select jsonb_array_elements_text(p -> 'transports')), '{}'),
    (p ->> 'aaguid')::uuid, p ->> 'attestation_format', p ->> 'attestation_verdict',
    (p ->> 'backup_eligible')::boolean, (p ->> 'backup_state')::boolean, (p ->> 'now')::timestamptz)
  on conflict (environment, credential_id) do nothing
  returning * into v_row;
  if not found then
    return jsonb_build_object('registered', false, 'reason', 'credential_exists');
  end if;
  return jsonb_build_object('registered', true, 'device', private.device_credential_json(v_row));
end $$;
comment on function public.device_credential_register(jsonb) is
  'Registers a verified WebAuthn credential for an identity of that environment; a credential id already registered there is refused (credential_exists), never given a second owner.';

-- device_credential_get({environment, credential_id}) -> {device: {...} | null}
create or replace function public.device_credential_get(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('device', (
    select private.device_credential_json(d) from private.device_credentials d
    where d.environment = p ->> 'environment' and d.credential_id = p ->> 'credential_id'))
$$;
comment on function public.device_credential_get(jsonb) is
  'The credential with this WebAuthn credential id in this environment (revoked ones too: the caller refuses them by name), or null.';

-- device_credential_use({environment, device_id, identity_id, sign_count, backup_state, now})
--   -> {outcome: used | regressed | revoked | unknown, sign_count}
create or replace function public.device_credential_use(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_count bigint := (p ->> 'sign_count')::bigint;
  v_row private.device_credentials;
begin
  -- The row lock orders concurrent assertions of one credential, so each compares its counter
  -- with the one the previous accepted assertion stored.
  select * into v_row from private.device_credentials
  where id = (p ->> 'device_id')::uuid and environment = p ->> 'environment'
    and identity_id = (p ->> 'identity_id')::uuid
  for update;
  if not found then
    return jsonb_build_object('outcome', 'unknown');
  end if;
  if v_row.revoked_at is not null and v_row.revoked_at <= v_now then
    return jsonb_build_object('outcome', 'revoked', 'sign_count', v_row.sign_count);
  end if;
  -- An authenticator that counts must count up (WebAuthn 6.1.1); zero on both sides is one that
  -- does not count. A regression is kept (the flag) and the assertion refused.
  if (v_count <> 0 or v_row.sign_count <> 0) and v_count <= v_row.sign_count then
    update private.device_credentials set sign_count_regressed_at = v_now where id = v_row.id;
    return jsonb_build_object('outcome', 'regressed', 'sign_count', v_row.sign_count);
  end if;
  update private.device_credentials
     set sign_count = v_count, backup_state = (p ->> 'backup_state')::boolean, last_used_at = v_now
   where id = v_row.id;
  return jsonb_build_object('outcome', 'used', 'sign_count', v_count);
end $$;
comment on function public.device_credential_use(jsonb) is
  'Records an accepted assertion: the new counter, backup state and last use; a counter that did not rise on a counting authenticator is flagged (sign_count_regressed_at) and answered regressed, a revoked credential revoked.';

-- device_credentials_list({environment, identity_id}) -> {devices: [...]} (newest first, revoked included)
create or replace function public.device_credentials_list(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('devices', coalesce(jsonb_agg(private.device_credential_json(d) order by d.created_at desc, d.id), '[]'::jsonb))
  from private.device_credentials d
  where d.environment = p ->> 'environment' and d.identity_id = (p ->> 'identity_id')::uuid
$$;
comment on function public.device_credentials_list(jsonb) is 'An identity''s devices in one environment, newest first, revoked ones included (with revoked_at).';

-- device_credential_revoke({environment, identity_id, device_id, now}) -> {device: {...} | null}
create or replace function public.device_credential_revoke(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_row private.device_credentials;
begin
  -- Revoking twice keeps the first instant.
  update private.device_credentials
     set revoked_at = coalesce(revoked_at, (p ->> 'now')::timestamptz)
   where id = (p ->> 'device_id')::uuid and environment = p ->> 'environment'
     and identity_id = (p ->> 'identity_id')::uuid
  returning * into v_row;
  if not found then
    return jsonb_build_object('device', null);
  end if;
  return jsonb_build_object('device', private.device_credential_json(v_row));
end $$;
comment on function public.device_credential_revoke(jsonb) is
  'Revokes one of the identity''s own devices from now on (idempotent: the first revocation''s instant stays); another person''s or an unknown device answers null.';

-- ----------------------------------------------------------------------------
-- Challenges
-- ----------------------------------------------------------------------------

-- device_challenge_issue({merchant_id, environment, purpose, challenge_hash, now, ttl_seconds}) -> {expires_at}
create or replace function public.device_challenge_issue(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_ttl integer := (p ->> 'ttl_seconds')::integer;
  v_expires timestamptz;
begin
  if v_now is null or v_ttl is null or v_ttl not between 1 and 600 then
    raise exception 'now and ttl_seconds (1 to 600) are required' using errcode = '22023';
  end if;
  insert into private.device_challenges (id, merchant_id, environment, purpose, challenge_hash, created_at, expires_at)
  values (gen_random_uuid(), (p ->> 'merchant_id')::uuid, p ->> 'environment', p ->> 'purpose', p ->> 'challenge_hash',
          v_now, v_now + make_interval(secs => v_ttl))
  returning expires_at into v_expires;
  return jsonb_build_object('expires_at', v_expires);
end $$;
comment on function public.device_challenge_issue(jsonb) is
  'Stores a newly issued device challenge (its hash) for one merchant, environment and purpose, live for ttl_seconds.';

-- device_challenge_consume({merchant_id, environment, purpose, challenge_hash, now})
--   -> {outcome: consumed | unknown | used | expired}
create or replace function public.device_challenge_consume(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_row private.device_challenges;
begin
  -- One statement takes it: of two concurrent consumers of one challenge, the second finds
  -- consumed_at set when it re-checks the row and gets nothing back.
  update private.device_challenges
     set consumed_at = v_now
   where challenge_hash = p ->> 'challenge_hash'
     and merchant_id = (p ->> 'merchant_id')::uuid
     and environment = p ->> 'environment'
     and purpose = p ->> 'purpose'
     and consumed_at is null
     and expires_at > v_now
  returning * into v_row;
  if found then
    return jsonb_build_object('outcome', 'consumed');
  end if;
  -- Why not: another merchant's, environment's or purpose's challenge reads as unknown.
  select * into v_row from private.device_challenges
  where challenge_hash = p ->> 'challenge_hash'
    and merchant_id = (p ->> 'merchant_id')::uuid
    and environment = p ->> 'environment'
    and purpose = p ->> 'purpose';
  return jsonb_build_object('outcome', case
    when not found then 'unknown'
    when v_row.consumed_at is not null then 'used'
    else 'expired' end);
end $$;
comment on function public.device_challenge_consume(jsonb) is
  'Takes a device challenge once, before it expires, for the merchant, environment and purpose it was issued for; says why not otherwise (unknown, used, expired).';

-- device_challenges_sweep({now}) -> {deleted}
-- The minute cron (session-expiry-and-webhooks) deletes challenges that expired more than a day ago:
-- used or not, none can count any more, and a day keeps a refusal's challenge readable (used,
-- expired) for the support of an integration.
create or replace function public.device_challenges_sweep(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_deleted integer;
begin
  if v_now is null then
    raise exception 'now is required' using errcode = '22023';
  end if;
  delete from private.device_challenges where expires_at < v_now - interval '1 day';
  get diagnostics v_deleted = row_count;
  return jsonb_build_object('deleted', v_deleted);
end $$;
comment on function public.device_challenges_sweep(jsonb) is
  'Deletes device challenges that expired more than a day before now (the minute cron): none of them can count any more.';
