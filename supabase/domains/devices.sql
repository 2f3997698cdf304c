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
    'revoked_at', d.revoked_at,
    'name', d.name,
    'registered_via', d.registered_via,
    'key_thumbprint', d.key_thumbprint,
    'user_handle', d.user_handle)
$$;
comment on function private.device_credential_json(private.device_credentials) is
  'A device credential as the device RPCs answer it: every column, the COSE public key as hex.';

-- private.device_event(device, type, data, at): the event of type (device.registered, device.revoked) to every
-- merchant that holds the person (a pseudonym and a standing consent), each with its own subject_ref, written
-- in the caller's transaction. Returns how many merchants it was written for.
create or replace function private.device_event(d private.device_credentials, p_type text, p_data jsonb, p_at timestamptz)
returns integer language plpgsql set search_path = '' as $$
declare
  v_count integer := 0;
  r record;
begin
  for r in
    select s.merchant_id, s.subject_ref from private.subject_refs s
    where s.identity_id = d.identity_id and private.consent_state(d.identity_id, s.merchant_id) = 'active'
    order by s.merchant_id
  loop
    perform private.outbox_emit(r.merchant_id, d.environment, p_type,
      jsonb_build_object('device_id', 'dev_' || replace(d.id::text, '-', ''), 'subject_ref', r.subject_ref) || p_data, p_at);
    v_count := v_count + 1;
  end loop;
  return v_count;
end $$;
comment on function private.device_event(private.device_credentials, text, jsonb, timestamptz) is
  'Writes a device event to the outbox for every merchant holding the person (pseudonym and standing consent), with that merchant''s subject_ref.';

-- ----------------------------------------------------------------------------
-- Credentials
-- ----------------------------------------------------------------------------

-- device_credential_register({environment, now, identity_id, device_id, credential_id, public_key_hex,
--   sign_count, transports, aaguid, attestation_format, attestation_verdict, backup_eligible, backup_state,
--   device_binding, registered_via?, key_thumbprint?, user_handle?, document_lds_sha256?})
--   -> {registered: true, device} | {registered: false, reason: identity_unknown | credential_exists | document_not_on_record}
-- With document_lds_sha256 (a re-proof by document), the document must be on record for this very identity and
-- unexpired today: checked here so that a document erased meanwhile registers nothing. Writes device.registered
-- for every merchant holding the person (device_binding is the caller's verdict: shared/devices/policy.ts).
create or replace function public.device_credential_register(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_env text := p ->> 'environment';
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_row private.device_credentials;
begin
  perform 1 from private.identities
  where id = (p ->> 'identity_id')::uuid and environment = v_env and erased_at is null;
  if not found then
    return jsonb_build_object('registered', false, 'reason', 'identity_unknown');
  end if;
  if p ? 'document_lds_sha256' and not exists (
    select 1 from private.identity_documents d
    where d.identity_id = (p ->> 'identity_id')::uuid and d.lds_sha256 = p ->> 'document_lds_sha256'
      and d.expires_on >= (v_now at time zone 'UTC')::date) then
    return jsonb_build_object('registered', false, 'reason', 'document_not_on_record');
  end if;
  -- The unique (environment, credential_id) decides a race between two registrations of one
  -- credential: the loser gets no row back, never a second owner.
  insert into private.device_credentials (
    id, identity_id, environment, credential_id, public_key, sign_count, transports, aaguid,
    attestation_format, attestation_verdict, backup_eligible, backup_state, created_at, registered_via, key_thumbprint, user_handle)
  values (
    (p ->> 'device_id')::uuid, (p ->> 'identity_id')::uuid, v_env, p ->> 'credential_id',
    decode(p ->> 'public_key_hex', 'hex'), (p ->> 'sign_count')::bigint,
    coalesce(array(select jsonb_array_elements_text(p -> 'transports')), '{}'),
    (p ->> 'aaguid')::uuid, p ->> 'attestation_format', p ->> 'attestation_verdict',
    (p ->> 'backup_eligible')::boolean, (p ->> 'backup_state')::boolean, v_now,
    coalesce(p ->> 'registered_via', 'enroll'), p ->> 'key_thumbprint', p ->> 'user_handle')
  on conflict (environment, credential_id) do nothing
  returning * into v_row;
  if not found then
    return jsonb_build_object('registered', false, 'reason', 'credential_exists');
  end if;
  perform private.device_event(v_row, 'device.registered', jsonb_build_object(
    'device_binding', p ->> 'device_binding', 'registered_via', v_row.registered_via, 'created_at', private.iso_utc(v_row.created_at)), v_now);
  return jsonb_build_object('registered', true, 'device', private.device_credential_json(v_row));
end $$;
comment on function public.device_credential_register(jsonb) is
  'Registers a verified WebAuthn credential for an identity of that environment (with a document re-proof, only while that document is on record for it) and writes device.registered to the merchants holding the person; a credential id already registered there is refused (credential_exists), never given a second owner.';

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

-- device_credentials_list({environment, identity_id, session_token_hash?, now?}) -> {devices: [...]} (newest first,
--   revoked included) | HA802 (the presented first-party session is revoked or expired)
create or replace function public.device_credentials_list(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
begin
  perform private.require_live_session(p ->> 'session_token_hash', (p ->> 'identity_id')::uuid, (p ->> 'now')::timestamptz);
  return (
    select jsonb_build_object('devices', coalesce(jsonb_agg(private.device_credential_json(d) order by d.created_at desc, d.id), '[]'::jsonb))
    from private.device_credentials d
    where d.environment = p ->> 'environment' and d.identity_id = (p ->> 'identity_id')::uuid);
end $$;
comment on function public.device_credentials_list(jsonb) is
  'An identity''s devices in one environment, newest first, revoked ones included (with revoked_at); with a session token hash, only while that first-party session is live.';

-- device_credential_revoke({environment, identity_id, device_id, now, session_token_hash?})
--   -> {device: {...} | null, already_revoked} | HA802
create or replace function public.device_credential_revoke(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_row private.device_credentials;
begin
  perform private.require_live_session(p ->> 'session_token_hash', (p ->> 'identity_id')::uuid, v_now);
  -- The row lock orders the revocation against an assertion's use (device_credential_use): either that
  -- use was before it, or it reads the revocation.
  select * into v_row from private.device_credentials
  where id = (p ->> 'device_id')::uuid and environment = p ->> 'environment' and identity_id = (p ->> 'identity_id')::uuid
  for update;
  if not found then
    return jsonb_build_object('device', null, 'already_revoked', false);
  end if;
  -- Revoking twice keeps the first instant, and the event is written once.
  if v_row.revoked_at is not null then
    return jsonb_build_object('device', private.device_credential_json(v_row), 'already_revoked', true);
  end if;
  update private.device_credentials set revoked_at = v_now where id = v_row.id returning * into v_row;
  perform private.device_event(v_row, 'device.revoked', jsonb_build_object('revoked_at', private.iso_utc(v_row.revoked_at)), v_now);
  return jsonb_build_object('device', private.device_credential_json(v_row), 'already_revoked', false);
end $$;
comment on function public.device_credential_revoke(jsonb) is
  'Revokes one of the identity''s own devices from now on and writes device.revoked to the merchants holding the person (once: a repeat keeps the first instant and answers already_revoked); another person''s or an unknown device answers null.';

-- device_credential_rename({environment, identity_id, device_id, name, now, session_token_hash?}) -> {device: {...} | null} | HA802
create or replace function public.device_credential_rename(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_row private.device_credentials;
begin
  perform private.require_live_session(p ->> 'session_token_hash', (p ->> 'identity_id')::uuid, (p ->> 'now')::timestamptz);
  update private.device_credentials set name = p ->> 'name'
  where id = (p ->> 'device_id')::uuid and environment = p ->> 'environment' and identity_id = (p ->> 'identity_id')::uuid
  returning * into v_row;
  if not found then
    return jsonb_build_object('device', null);
  end if;
  return jsonb_build_object('device', private.device_credential_json(v_row));
end $$;
comment on function public.device_credential_rename(jsonb) is
  'Names one of the identity''s own devices (revoked ones too: the list still shows them); another person''s or an unknown device answers null.';

-- device_credential_by_key({environment, key_thumbprint}) -> {device: {...} | null}
create or replace function public.device_credential_by_key(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('device', (
    select private.device_credential_json(d) from private.device_credentials d
    where d.environment = p ->> 'environment' and d.key_thumbprint = p ->> 'key_thumbprint'
    order by d.created_at desc limit 1))
$$;
comment on function public.device_credential_by_key(jsonb) is
  'The credential whose public key has this JWK thumbprint in this environment (revoked ones too: the caller refuses them by name), or null.';

-- ----------------------------------------------------------------------------
-- Additions: a new device approved by a registered one
-- ----------------------------------------------------------------------------

-- private.device_addition_json(addition, at): the addition as its merchant and the approving device read it.
create or replace function private.device_addition_json(a private.device_additions, p_at timestamptz) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'addition_id', 'dad_' || replace(a.id::text, '-', ''),
    'merchant_id', a.merchant_id,
    'environment', a.environment,
    'state', case when a.approved_at is not null then 'approved' when a.expires_at <= p_at then 'expired' else 'pending' end,
    'credential_id', a.credential_id,
    'registration', a.registration,
    'created_at', a.created_at,
    'expires_at', a.expires_at,
    'approved_at', a.approved_at,
    'device', (select private.device_credential_json(d) from private.device_credentials d where d.id = a.device_id))
$$;
comment on function private.device_addition_json(private.device_additions, timestamptz) is
  'A device addition''s state (pending, approved, expired), the registration it carries and, once approved, the credential it registered.';

-- device_addition_create({id, merchant_id, environment, code_hash, registration, credential_id, ttl_seconds, now})
--   -> {created: true, addition} | {created: false, reason: credential_exists}
create or replace function public.device_addition_create(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_row private.device_additions;
begin
  if (p ->> 'ttl_seconds')::integer not between 30 and 600 then
    raise exception 'ttl_seconds must be 30 to 600' using errcode = '22023';
  end if;
  if exists (select 1 from private.device_credentials where environment = p ->> 'environment' and credential_id = p ->> 'credential_id') then
    return jsonb_build_object('created', false, 'reason', 'credential_exists');
  end if;
  insert into private.device_additions (id, merchant_id, environment, code_hash, registration, credential_id, created_at, expires_at)
  values ((p ->> 'id')::uuid, (p ->> 'merchant_id')::uuid, p ->> 'environment', p ->> 'code_hash', p -> 'registration',
          p ->> 'credential_id', v_now, v_now + make_interval(secs => (p ->> 'ttl_seconds')::integer))
  returning * into v_row;
  return jsonb_build_object('created', true, 'addition', private.device_addition_json(v_row, v_now));
end $$;
comment on function public.device_addition_create(jsonb) is
  'Stores a new device''s verified registration as an addition awaiting approval, for ttl_seconds (30 to 600); a credential already registered in the environment is refused.';

-- device_addition_get({now} + {addition_id, merchant_id, environment} | {code_hash}) -> addition json | null
-- The merchant's key reads its own additions; the approval code reads its one (an expired one too, to say so).
create or replace function public.device_addition_get(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select private.device_addition_json(a, (p ->> 'now')::timestamptz) from private.device_additions a
  where case when p ? 'code_hash' then a.code_hash = p ->> 'code_hash'
             else a.id = (p ->> 'addition_id')::uuid and a.merchant_id = (p ->> 'merchant_id')::uuid
                  and a.environment = p ->> 'environment' end
$$;
comment on function public.device_addition_get(jsonb) is 'A device addition by its id (the merchant''s key) or its approval code''s hash, or null.';

-- device_addition_approve({code_hash, merchant_id, environment, approver_device_id, identity_id, device_id, device_binding, now})
--   -> {approved: true, addition} | {approved: false, reason: addition_unknown | addition_expired | addition_approved
--      | credential_revoked | credential_exists | identity_unknown}
-- The addition is locked, then the approving device (its verified assertion's: not revoked meanwhile), then the
-- credential is registered for the approver's person with device.registered, all in this transaction.
create or replace function public.device_addition_approve(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  a private.device_additions;
  v_approver private.device_credentials;
  v_registered jsonb;
begin
  select * into a from private.device_additions
  where code_hash = p ->> 'code_hash' and merchant_id = (p ->> 'merchant_id')::uuid and environment = p ->> 'environment'
  for update;
  if not found then
    return jsonb_build_object('approved', false, 'reason', 'addition_unknown');
  elsif a.approved_at is not null then
    return jsonb_build_object('approved', false, 'reason', 'addition_approved');
  elsif a.expires_at <= v_now then
    return jsonb_build_object('approved', false, 'reason', 'addition_expired');
  end if;
  select * into v_approver from private.device_credentials
  where id = (p ->> 'approver_device_id')::uuid and environment = a.environment and identity_id = (p ->> 'identity_id')::uuid
  for share;
  if not found or (v_approver.revoked_at is not null and v_approver.revoked_at <= v_now) then
    return jsonb_build_object('approved', false, 'reason', 'credential_revoked');
  end if;
  v_registered := public.device_credential_register(a.registration || jsonb_build_object(
    'environment', a.environment, 'now', v_now, 'identity_id', v_approver.identity_id, 'device_id', p ->> 'device_id',
    'device_binding', p ->> 'device_binding', 'registered_via', 'device_approval'));
  if not (v_registered ->> 'registered')::boolean then
    return jsonb_build_object('approved', false, 'reason', v_registered ->> 'reason');
  end if;
  update private.device_additions
     set approved_at = v_now, approved_by = v_approver.id, device_id = (v_registered -> 'device' ->> 'device_id')::uuid
   where id = a.id
  returning * into a;
  return jsonb_build_object('approved', true, 'addition', private.device_addition_json(a, v_now));
end $$;
comment on function public.device_addition_approve(jsonb) is
  'Approves a pending, unexpired device addition with a registered, unrevoked device of a person: registers the new credential as theirs (device.registered) and marks the addition approved, in one transaction.';

-- ----------------------------------------------------------------------------
-- Challenges
-- ----------------------------------------------------------------------------

-- device_challenge_issue({merchant_id, environment, purpose, challenge_hash, now, ttl_seconds, user_handle?}) -> {expires_at}
-- user_handle: the user.id of the registration options issued with the challenge (the hosted screen's boot).
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
  insert into private.device_challenges (id, merchant_id, environment, purpose, challenge_hash, created_at, expires_at, user_handle)
  values (gen_random_uuid(), (p ->> 'merchant_id')::uuid, p ->> 'environment', p ->> 'purpose', p ->> 'challenge_hash',
          v_now, v_now + make_interval(secs => v_ttl), p ->> 'user_handle')
  returning expires_at into v_expires;
  return jsonb_build_object('expires_at', v_expires);
end $$;
comment on function public.device_challenge_issue(jsonb) is
  'Stores a newly issued device challenge (its hash) for one merchant, environment and purpose, live for ttl_seconds, with the user handle of the registration options issued with it, if any.';

-- private.device_challenge_closed({merchant_id, environment, purpose, challenge_hash}) -> 'unknown' | 'used' | 'expired'
-- Why a challenge is not open for the merchant, environment and purpose asking: another merchant's,
-- environment's or purpose's challenge reads as unknown.
create or replace function private.device_challenge_closed(p jsonb) returns text
language plpgsql stable security definer set search_path = '' as $$
declare
  v_row private.device_challenges;
begin
  select * into v_row from private.device_challenges
  where challenge_hash = p ->> 'challenge_hash'
    and merchant_id = (p ->> 'merchant_id')::uuid
    and environment = p ->> 'environment'
    and purpose = p ->> 'purpose';
  return case when not found then 'unknown' when v_row.consumed_at is not null then 'used' else 'expired' end;
end $$;
comment on function private.device_challenge_closed(jsonb) is
  'Why a device challenge is not open to the merchant, environment and purpose asking: unknown (never issued to them), used, or expired.';

-- device_challenge_consume({merchant_id, environment, purpose, challenge_hash, now})
--   -> {outcome: consumed, user_handle} | {outcome: unknown | used | expired}
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
    return jsonb_build_object('outcome', 'consumed', 'user_handle', v_row.user_handle);
  end if;
  return jsonb_build_object('outcome', private.device_challenge_closed(p));
end $$;
comment on function public.device_challenge_consume(jsonb) is
  'Takes a device challenge once, before it expires, for the merchant, environment and purpose it was issued for, answering the user handle issued with it; says why not otherwise (unknown, used, expired).';

-- device_challenge_user_handle({merchant_id, environment, purpose, challenge_hash, now, user_handle})
--   -> {outcome: open, user_handle} | {outcome: unknown | used | expired}
-- Registration options built for a challenge issued without them (device-add's options, for a
-- challenge from device-challenge): the user handle is recorded with the open challenge once; options
-- asked again for it answer the handle recorded first, so the registration's handle is one.
create or replace function public.device_challenge_user_handle(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_handle text;
begin
  update private.device_challenges
     set user_handle = coalesce(user_handle, p ->> 'user_handle')
   where challenge_hash = p ->> 'challenge_hash'
     and merchant_id = (p ->> 'merchant_id')::uuid
     and environment = p ->> 'environment'
     and purpose = p ->> 'purpose'
     and consumed_at is null
     and expires_at > (p ->> 'now')::timestamptz
  returning user_handle into v_handle;
  if found then
    return jsonb_build_object('outcome', 'open', 'user_handle', v_handle);
  end if;
  return jsonb_build_object('outcome', private.device_challenge_closed(p));
end $$;
comment on function public.device_challenge_user_handle(jsonb) is
  'Records the user handle of registration options built for an open device challenge, once (the first stays), and answers it; says why not when the challenge is not open (unknown, used, expired).';

-- device_challenges_sweep({now}) -> {deleted}
-- The minute cron (session-expiry-and-webhooks) deletes challenges that expired more than a day ago:
-- used or not, none can count any more, and a day keeps a refusal's challenge readable (used,
-- expired) for the support of an integration.
create or replace function public.device_challenges_sweep(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_cutoff timestamptz := private.sweep_cutoff(v_now);
  v_deleted integer;
begin
  if v_now is null then
    raise exception 'now is required' using errcode = '22023';
  end if;
  delete from private.device_challenges where expires_at < v_cutoff;
  get diagnostics v_deleted = row_count;
  return jsonb_build_object('deleted', v_deleted);
end $$;
comment on function public.device_challenges_sweep(jsonb) is
  'Deletes device challenges that expired more than a day before now (the minute cron): none of them can count any more.';
