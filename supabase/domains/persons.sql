-- ============================================================================
-- Persons: a person's own page (issue 31): the sign-in by presence, the
-- person's session, and what the page reads and does at every merchant.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- person_sign_in_begin({session: hosted_session_create's input, browser_hash})
--   -> {started: true, session} | {started: false}
-- Opens the hosted login session of the merchant the person came from, bound to the browser that
-- asked, in one transaction; nothing is opened for a merchant that does not exist.
create or replace function public.person_sign_in_begin(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_session jsonb := p -> 'session';
  v_created jsonb;
begin
  if not exists (select 1 from private.merchants where id = (v_session ->> 'merchant_id')::uuid) then
    return jsonb_build_object('started', false);
  end if;
  v_created := public.hosted_session_create(v_session);
  insert into private.person_sign_ins (session_id, browser_hash, created_at)
  values ((v_session ->> 'id')::uuid, p ->> 'browser_hash', (v_session ->> 'now')::timestamptz);
  return jsonb_build_object('started', true, 'session', v_created);
end $$;
comment on function public.person_sign_in_begin(jsonb) is 'Opens a hosted login session for a person''s sign-in to their own page, bound to one browser.';

-- person_sign_in_finish({session_id, browser_hash, now, person_session: {id, token_hash, csrf_hash, idle_seconds,
--   ttl_seconds}}) -> {signed_in: true, environment, expires_at, idle_expires_at} | {signed_in: false, reason}
-- reason: unknown (no such sign-in for this browser), used, pending (the screen has not identified anyone
-- yet: ask again), refused (the capture was refused, cancelled or the session expired), stale (identified
-- too long ago: private.sign_in_stale_at), unreachable (the identity was erased meanwhile). Only a sign-in that
-- succeeds is used up; it opens the person's session in the same transaction.
create or replace function public.person_sign_in_finish(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_new jsonb := p -> 'person_session';
  v_sign private.person_sign_ins;
  v_session private.hosted_sessions;
  v_identity private.identities;
  v_row private.person_sessions;
  v_refusal text;
begin
  select * into v_sign from private.person_sign_ins
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
  if v_refusal = 'refused' and v_sign.device_id is not null then
    -- A passkey sign-in whose face was refused counts against the credential's lockout, once.
    insert into private.person_passkey_refusals (environment, credential_id, reason, refused_at, sign_in_session_id)
    select d.environment, d.credential_id, 'face_refused', v_now, v_sign.session_id
    from private.device_credentials d where d.id = v_sign.device_id
    on conflict (sign_in_session_id) do nothing;
  end if;
  if v_refusal is not null then
    return jsonb_build_object('signed_in', false, 'reason', v_refusal);
  end if;
  select i.* into v_identity
  from private.subject_refs r join private.identities i on i.id = r.identity_id
  where r.merchant_id = v_session.merchant_id and r.subject_ref = v_session.result ->> 'subject_ref'
    and i.environment = v_session.environment and i.erased_at is null;
  if not found then
    return jsonb_build_object('signed_in', false, 'reason', 'unreachable');
  end if;
  -- A passkey sign-in: the face confirmed is the passkey's person, and the passkey was not revoked meanwhile.
  if v_sign.device_id is not null and not exists (
    select 1 from private.device_credentials d
    where d.id = v_sign.device_id and d.identity_id = v_identity.id and (d.revoked_at is null or d.revoked_at > v_now)) then
    return jsonb_build_object('signed_in', false, 'reason', 'refused');
  end if;
  update private.person_sign_ins set used_at = v_now where session_id = v_sign.session_id;
  insert into private.person_sessions (id, token_hash, csrf_hash, identity_id, environment, proof, proof_session_id, device_id,
                                       idle_seconds, created_at, last_seen_at, expires_at)
  values ((v_new ->> 'id')::uuid, v_new ->> 'token_hash', v_new ->> 'csrf_hash', v_identity.id, v_identity.environment,
          case when v_sign.device_id is null then 'hosted_login' else 'passkey' end, v_session.id, v_sign.device_id,
          (v_new ->> 'idle_seconds')::int, v_now, v_now, v_now + make_interval(secs => (v_new ->> 'ttl_seconds')::int))
  returning * into v_row;
  return jsonb_build_object('signed_in', true, 'environment', v_row.environment, 'expires_at', v_row.expires_at,
                            'idle_expires_at', least(v_row.expires_at, v_now + make_interval(secs => v_row.idle_seconds)));
end $$;
comment on function public.person_sign_in_finish(jsonb) is 'Signs the person in once from a completed hosted login session, for the browser it was bound to: opens their session.';

-- person_passkey_challenge_issue({environment, challenge_hash, browser_hash, ttl_seconds, now}) -> {expires_at}
-- A challenge for a passkey sign-in to the person's page, for the browser that asked (its sign-in cookie's hash).
create or replace function public.person_passkey_challenge_issue(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  insert into private.person_passkey_challenges (challenge_hash, environment, browser_hash, created_at, expires_at)
  values (p ->> 'challenge_hash', p ->> 'environment', p ->> 'browser_hash', (p ->> 'now')::timestamptz,
          (p ->> 'now')::timestamptz + make_interval(secs => (p ->> 'ttl_seconds')::int))
  returning jsonb_build_object('expires_at', expires_at)
$$;
comment on function public.person_passkey_challenge_issue(jsonb) is 'Issues a single-use challenge for a passkey sign-in to a person''s page, bound to one browser.';

-- The lockout of a credential's passkey sign-in (D-466, D-602): the end of its lock at p_now, or null. Five
-- refusals within fifteen minutes lock it for fifteen minutes from the fifth; no refusal is counted while locked.
create or replace function private.person_passkey_locked_until(p_environment text, p_credential_id text, p_now timestamptz)
returns timestamptz
language sql stable set search_path = '' as $$
  select case when count(*) >= 5 then max(refused_at) + interval '15 minutes' end
  from private.person_passkey_refusals
  where environment = p_environment and credential_id = p_credential_id
    and refused_at > p_now - interval '15 minutes' and refused_at <= p_now
$$;
comment on function private.person_passkey_locked_until(text, text, timestamptz) is
  'When a credential''s passkey sign-in lock ends (five refusals within fifteen minutes lock it fifteen minutes), or null.';

-- person_passkey_attempt({environment, challenge_hash, browser_hash, credential_id, now})
--   -> {challenge: consumed | unknown | used | expired, locked_until, device, merchant_id}
-- Takes the challenge once for this browser (whatever the assertion then proves), says whether the credential's
-- sign-in is locked, and answers the credential (private.device_credential_json, null when unknown in this
-- environment) with the merchant whose hosted screen will confirm the face: the earliest that holds the person
-- under a consent that stands (null when none does).
create or replace function public.person_passkey_attempt(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_challenge private.person_passkey_challenges;
  v_outcome text;
  v_device private.device_credentials;
  v_merchant uuid;
begin
  select * into v_challenge from private.person_passkey_challenges
  where challenge_hash = p ->> 'challenge_hash' and environment = p ->> 'environment' and browser_hash = p ->> 'browser_hash'
  for update;
  v_outcome := case
    when not found then 'unknown'
    when v_challenge.consumed_at is not null then 'used'
    when v_challenge.expires_at <= v_now then 'expired'
    else 'consumed' end;
  if v_outcome in ('consumed', 'expired') then
    update private.person_passkey_challenges set consumed_at = v_now where challenge_hash = v_challenge.challenge_hash;
  end if;
  select * into v_device from private.device_credentials
  where environment = p ->> 'environment' and credential_id = p ->> 'credential_id';
  if found then
    select r.merchant_id into v_merchant from private.subject_refs r
    where r.identity_id = v_device.identity_id and private.consent_state(r.identity_id, r.merchant_id) = 'active'
    order by r.created_at, r.merchant_id limit 1;
  end if;
  return jsonb_build_object(
    'challenge', v_outcome,
    'locked_until', private.person_passkey_locked_until(p ->> 'environment', p ->> 'credential_id', v_now),
    'device', case when v_device.id is null then null else private.device_credential_json(v_device) end,
    'merchant_id', v_merchant);
end $$;
comment on function public.person_passkey_attempt(jsonb) is
  'Consumes a passkey sign-in''s challenge once for its browser; answers the lockout, the credential and the merchant whose screen confirms the face.';

-- person_passkey_refused({environment, credential_id, reason, now}) -> {locked_until}
create or replace function public.person_passkey_refused(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  with recorded as (
    insert into private.person_passkey_refusals (environment, credential_id, reason, refused_at)
    values (p ->> 'environment', p ->> 'credential_id', p ->> 'reason', (p ->> 'now')::timestamptz)
    returning 1)
  select jsonb_build_object('locked_until',
    (select case when count(*) + 1 >= 5 then (p ->> 'now')::timestamptz + interval '15 minutes' end
     from private.person_passkey_refusals
     where environment = p ->> 'environment' and credential_id = p ->> 'credential_id'
       and refused_at > (p ->> 'now')::timestamptz - interval '15 minutes')) from recorded
$$;
comment on function public.person_passkey_refused(jsonb) is 'Counts a refused passkey sign-in against its credential''s lockout; answers when the lock ends, if it now holds.';

-- person_passkey_sweep({now}) -> {challenges, refusals, sign_ins}
-- The minute cron (session-expiry-and-webhooks) deletes what of the person's sign-in can no longer count, as
-- device_challenges_sweep does for device challenges: passkey challenges that expired more than a day ago (used
-- or not), refusals recorded more than a day ago (the lockout reads fifteen minutes back and a lock lasts
-- fifteen minutes), and sign-ins (by presence or by passkey) that stopped counting more than a day ago
-- (private.sign_in_counts_until). The day (private.sweep_cutoff) keeps a recent one readable for support, as it
-- does for a device challenge. A sign-in a refusal still names waits for that refusal's sweep (its foreign key).
create or replace function public.person_passkey_sweep(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_cutoff timestamptz := private.sweep_cutoff(v_now);
  v_challenges integer;
  v_refusals integer;
  v_sign_ins integer;
begin
  if v_now is null then
    raise exception 'now is required' using errcode = '22023';
  end if;
  delete from private.person_passkey_challenges where expires_at < v_cutoff;
  get diagnostics v_challenges = row_count;
  delete from private.person_passkey_refusals where refused_at < v_cutoff;
  get diagnostics v_refusals = row_count;
  -- created_at bounds the scan (person_sign_ins_created_idx): a sign-in stops counting after it was started.
  delete from private.person_sign_ins g
  using private.hosted_sessions s
  where s.id = g.session_id
    and g.created_at < v_cutoff
    and private.sign_in_counts_until(g.used_at, s) < v_cutoff
    and not exists (select 1 from private.person_passkey_refusals r where r.sign_in_session_id = g.session_id);
  get diagnostics v_sign_ins = row_count;
  return jsonb_build_object('challenges', v_challenges, 'refusals', v_refusals, 'sign_ins', v_sign_ins);
end $$;
comment on function public.person_passkey_sweep(jsonb) is
  'Deletes passkey sign-in challenges that expired, refusals recorded, and sign-ins that stopped counting, more than a day before now (the minute cron).';

-- person_passkey_sign_in_begin({session: hosted_session_create's input, browser_hash, identity_id, device_id})
--   -> {started: true, session} | {started: false}
-- Opens the hosted login session that confirms the face of the person a passkey named: at session.merchant_id,
-- which must hold them under a consent that stands, for that person alone (the session's facetoken is their
-- pseudonym there: another face is subject_mismatch), bound to the browser that asked and to the passkey.
create or replace function public.person_passkey_sign_in_begin(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_session jsonb := p -> 'session';
  v_identity uuid := (p ->> 'identity_id')::uuid;
  v_merchant uuid := (v_session ->> 'merchant_id')::uuid;
  v_created jsonb;
begin
  if private.consent_state(v_identity, v_merchant) <> 'active' then
    return jsonb_build_object('started', false);
  end if;
  v_created := public.hosted_session_create(v_session);
  update private.hosted_sessions set facetoken = (
    select r.subject_ref from private.subject_refs r where r.merchant_id = v_merchant and r.identity_id = v_identity)
  where id = (v_session ->> 'id')::uuid;
  insert into private.person_sign_ins (session_id, browser_hash, created_at, device_id)
  values ((v_session ->> 'id')::uuid, p ->> 'browser_hash', (v_session ->> 'now')::timestamptz, (p ->> 'device_id')::uuid);
  return jsonb_build_object('started', true, 'session', v_created);
end $$;
comment on function public.person_passkey_sign_in_begin(jsonb) is
  'Opens the hosted login session that confirms the face of the person a passkey named, for that person alone, bound to one browser.';

-- person_session_touch({token_hash, now}) -> {session_id, identity_id, environment, csrf_hash, expires_at,
--   idle_expires_at} | {reason: 'unknown' | 'ended' | 'expired'}
-- Authenticates a request of the person's session and moves its idle timeout on. unknown: no such token;
-- ended: signed out (or the identity erased); expired: past its absolute end or idle for too long.
create or replace function public.person_session_touch(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_row private.person_sessions;
begin
  select * into v_row from private.person_sessions where token_hash = p ->> 'token_hash' for update;
  if not found then
    return jsonb_build_object('reason', 'unknown');
  end if;
  if v_row.ended_at is not null then
    return jsonb_build_object('reason', 'ended');
  end if;
  if v_now >= v_row.expires_at or v_now >= v_row.last_seen_at + make_interval(secs => v_row.idle_seconds) then
    return jsonb_build_object('reason', 'expired');
  end if;
  update private.person_sessions set last_seen_at = greatest(last_seen_at, v_now) where id = v_row.id
  returning * into v_row;
  return jsonb_build_object('session_id', v_row.id, 'identity_id', v_row.identity_id, 'environment', v_row.environment,
    'csrf_hash', v_row.csrf_hash, 'expires_at', v_row.expires_at,
    'idle_expires_at', least(v_row.expires_at, v_row.last_seen_at + make_interval(secs => v_row.idle_seconds)));
end $$;
comment on function public.person_session_touch(jsonb) is 'Authenticates a person''s session by its token''s hash and moves its idle timeout on; why not otherwise.';

-- person_session_end({session_id, now}) -> {ended: true}
create or replace function public.person_session_end(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  with ended as (
    update private.person_sessions set ended_at = (p ->> 'now')::timestamptz, ended_reason = 'signed_out'
    where id = (p ->> 'session_id')::uuid and ended_at is null
    returning id)
  select jsonb_build_object('ended', true)
$$;
comment on function public.person_session_end(jsonb) is 'Signs a person''s session out: its cookie authenticates nothing after.';

-- A mandate as the person's page shows it: the mandate's fields (without the merchant's pseudonym for the
-- person), the merchant by id and name, what remains this period and the last five consumptions.
create or replace function private.person_mandate_json(m private.mandates, p_at timestamptz) returns jsonb
language sql stable set search_path = '' as $$
  select (private.mandate_json(m, p_at) - 'granted_by')
    || jsonb_build_object(
      'merchant', (select jsonb_build_object('merchant_id', x.id, 'name', x.name) from private.merchants x where x.id = m.merchant_id),
      'remaining', (select jsonb_build_object('amount', r.remaining_amount, 'currency', m.ceiling_currency, 'count', r.remaining_count,
                                              'period_resets_at', r.period_resets_at)
                    from private.mandate_remaining(m, p_at) r),
      'last_consumptions', coalesce((
        select jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
          'consumption_id', private.public_id('cns_', c.id), 'scope', c.scope, 'amount', c.amount, 'currency', c.currency,
          'created_at', c.created_at)) order by c.created_at desc, c.id desc)
        from (select * from private.mandate_consumptions where mandate_id = m.id order by created_at desc, id desc limit 5) c),
        '[]'::jsonb))
$$;
comment on function private.person_mandate_json(private.mandates, timestamptz) is 'A mandate as its granting person sees it: merchant, remaining this period, last five consumptions; no pseudonym.';

-- person_mandates({identity_id, environment, now}) -> [mandate as person_mandate_json]
-- Every mandate the person granted, at every merchant of the environment, newest first (at most 500).
create or replace function public.person_mandates(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select coalesce(jsonb_agg(j order by created_at desc, id desc), '[]'::jsonb)
  from (
    select private.person_mandate_json(m, (p ->> 'now')::timestamptz) as j, m.created_at, m.id
    from private.mandates m
    where m.granted_by = (p ->> 'identity_id')::uuid and m.environment = p ->> 'environment'
    order by m.created_at desc, m.id desc
    limit 500) listed
$$;
comment on function public.person_mandates(jsonb) is 'Every mandate one person granted in one environment, at every merchant, as their page shows it.';

-- person_mandate_revoke({identity_id, environment, now, reason?, mandate_id} |
--                       {identity_id, environment, now, reason?, merchant_id, granted_to})
--   -> {revoked: [{mandate_id, already_revoked, revoked_at}]} | null
-- The person revokes one mandate, or every standing mandate of one agent at one merchant, as the granting
-- human of mandate-revoke: each through public.mandate_revoke (its row lock, its mandate.revoked to the
-- merchant), in one transaction. null when the mandate is not the person's, or the agent holds none of theirs.
create or replace function public.person_mandate_revoke(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_ids uuid[];
  v_id uuid;
  v_done jsonb := '[]'::jsonb;
  v_one jsonb;
begin
  if p ? 'mandate_id' then
    select array_agg(m.id) into v_ids from private.mandates m
    where m.id = (p ->> 'mandate_id')::uuid and m.granted_by = (p ->> 'identity_id')::uuid and m.environment = p ->> 'environment';
  else
    select array_agg(m.id order by m.created_at, m.id) into v_ids from private.mandates m
    where m.merchant_id = (p ->> 'merchant_id')::uuid and m.granted_to = p ->> 'granted_to'
      and m.granted_by = (p ->> 'identity_id')::uuid and m.environment = p ->> 'environment'
      and private.mandate_effective_status(m, v_now) in ('active', 'exhausted');
  end if;
  if v_ids is null then
    return null;
  end if;
  foreach v_id in array v_ids loop
    v_one := public.mandate_revoke(jsonb_build_object('by', 'granting_human', 'identity_id', p ->> 'identity_id',
      'environment', p ->> 'environment', 'mandate_id', v_id, 'reason', p ->> 'reason', 'now', v_now));
    v_done := v_done || jsonb_build_array(jsonb_build_object('mandate_id', v_one ->> 'mandate_id',
      'already_revoked', (v_one ->> 'already_revoked')::boolean, 'revoked_at', v_one -> 'revoked_at'));
  end loop;
  return jsonb_build_object('revoked', v_done);
end $$;
comment on function public.person_mandate_revoke(jsonb) is 'The granting person revokes one of their mandates, or every standing one of one agent at one merchant, each as mandate-revoke does.';

-- person_merchants({identity_id, environment}) -> [{merchant_id, name, known_since, consent_state, consents: [...]}]
-- Each merchant that holds the person (a pseudonym was recorded for them there), oldest first, with every consent
-- the person gave it: version, retention, when granted, until when retained, and how and when it ended.
create or replace function public.person_merchants(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'merchant_id', m.id, 'name', m.name, 'known_since', r.created_at,
    'consent_state', private.consent_state(r.identity_id, m.id),
    'consents', coalesce((
      select jsonb_agg(jsonb_build_object(
        'version', c.version, 'retention_days', c.retention_days, 'granted_at', c.granted_at,
        'retained_until', c.granted_at + make_interval(days => c.retention_days), 'ended_at', c.revoked_at,
        'ended_by', (select e.kind from private.consent_ledger e
                     where e.refers_to = c.id and e.kind in ('consent_withdrawn', 'consent_expired')))
        order by c.granted_at)
      from private.consents c where c.identity_id = r.identity_id and c.merchant_id = m.id), '[]'::jsonb))
    order by r.created_at, m.id), '[]'::jsonb)
  from private.subject_refs r
  join private.identities i on i.id = r.identity_id
  join private.merchants m on m.id = r.merchant_id
  where r.identity_id = (p ->> 'identity_id')::uuid and i.environment = p ->> 'environment'
$$;
comment on function public.person_merchants(jsonb) is 'The merchants that hold one person, each with the consents the person gave it and how they ended.';

-- person_consent_ledger({identity_id}) -> {entries: [...], verification: {ok, entries, breaks: [{seq, reason}]}}
-- The person's hash-chained consent ledger in order, readable: each entry's kind, merchant, time, the entry it
-- ends, what it recorded (a consent's version and retention; a disclosure's purpose, claims by key and type and
-- whether each was disclosed, never a value; an end's reason), and its hashes; then the chain checked.
create or replace function public.person_consent_ledger(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object(
    'entries', coalesce((
      select jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
        'seq', l.seq, 'kind', l.kind,
        'merchant', jsonb_build_object('merchant_id', m.id, 'name', m.name),
        'recorded_at', l.recorded_at,
        'ends_seq', (select t.seq from private.consent_ledger t where t.id = l.refers_to),
        'version', l.payload ->> 'version', 'retention_days', (l.payload ->> 'retention_days')::int,
        'purpose', l.payload ->> 'transaction_type',
        'claims', (select jsonb_agg(jsonb_build_object('key', c ->> 'key', 'disclosure_type', c ->> 'disclosure_type',
                                                        'status', c ->> 'status'))
                   from jsonb_array_elements(case when l.kind = 'disclosure' then l.payload -> 'claims' end) c),
        'disclosure_expires_at', case when l.kind = 'disclosure' then l.payload ->> 'expires_at' end,
        'reason', l.payload ->> 'reason',
        'prev_hash', l.prev_hash, 'row_hash', l.row_hash)) order by l.seq)
      from private.consent_ledger l join private.merchants m on m.id = l.merchant_id
      where l.identity_id = (p ->> 'identity_id')::uuid), '[]'::jsonb),
    'verification', (
      select jsonb_build_object('ok', v -> 'ok', 'entries', v -> 'entries',
        'breaks', coalesce((select jsonb_agg(jsonb_build_object('seq', b -> 'seq', 'reason', b -> 'reason'))
                            from jsonb_array_elements(v -> 'breaks') b), '[]'::jsonb))
      from public.consent_ledger_verify(jsonb_build_object('identity_id', p ->> 'identity_id')) v))
$$;
comment on function public.person_consent_ledger(jsonb) is 'One person''s consent ledger in readable form, with its hash chain checked; no disclosed value.';

-- person_consent_withdraw({identity_id, environment, merchant_id, now, reason?})
--   -> revoke-consent's answer without the pseudonym | null
-- The person withdraws their consent with one merchant: exactly revoke-consent by subject_ref (the ledger's
-- consent_withdrawn entries, the disclosures' documents deleted, the first-party sessions with the merchant
-- revoked; the retention cron then erases what the consent covered), and the merchant hears of it with a
-- consent.withdrawn event, once. null when the merchant does not hold the person.
create or replace function public.person_consent_withdraw(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_ref text;
  v_done jsonb;
begin
  select r.subject_ref into v_ref from private.subject_refs r join private.identities i on i.id = r.identity_id
  where r.identity_id = (p ->> 'identity_id')::uuid and r.merchant_id = (p ->> 'merchant_id')::uuid
    and i.environment = p ->> 'environment';
  if v_ref is null or private.consent_state((p ->> 'identity_id')::uuid, (p ->> 'merchant_id')::uuid) = 'missing' then
    return null;
  end if;
  v_done := public.consent_revoke(jsonb_build_object('merchant_id', p ->> 'merchant_id', 'environment', p ->> 'environment',
    'subject_ref', v_ref, 'now', v_now) || case when p ? 'reason' then jsonb_build_object('reason', p ->> 'reason') else '{}' end);
  if not (v_done ->> 'already_revoked')::boolean then
    perform private.outbox_emit((p ->> 'merchant_id')::uuid, p ->> 'environment', 'consent.withdrawn',
      jsonb_build_object('subject_ref', v_ref, 'withdrawn_at', v_now, 'withdrawn_by', 'person'), v_now);
  end if;
  return v_done - 'subject_ref';
end $$;
comment on function public.person_consent_withdraw(jsonb) is 'The person withdraws their consent with one merchant, as revoke-consent does, and the merchant gets consent.withdrawn.';

-- person_disclosures({identity_id}) -> [{disclosure_seq, merchant, disclosed_at, purpose, claims, expires_at, revoked_at}]
-- What each merchant received about the person, newest first: which claims (by key, how, and whether each was
-- disclosed), when, for which purpose, until when, and whether it was revoked since. The ledger holds no value,
-- so none is answered.
create or replace function public.person_disclosures(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'disclosure_seq', l.seq,
    'merchant', jsonb_build_object('merchant_id', m.id, 'name', m.name),
    'disclosed_at', l.recorded_at,
    'purpose', l.payload ->> 'transaction_type',
    'claims', coalesce((select jsonb_agg(jsonb_build_object('key', c ->> 'key', 'disclosure_type', c ->> 'disclosure_type',
                                                             'status', c ->> 'status'))
                        from jsonb_array_elements(l.payload -> 'claims') c), '[]'::jsonb),
    'expires_at', l.payload ->> 'expires_at',
    'revoked_at', (select e.recorded_at from private.consent_ledger e where e.refers_to = l.id and e.kind = 'disclosure_revoked'))
    order by l.seq desc), '[]'::jsonb)
  from private.consent_ledger l join private.merchants m on m.id = l.merchant_id
  where l.identity_id = (p ->> 'identity_id')::uuid and l.kind = 'disclosure'
$$;
comment on function public.person_disclosures(jsonb) is 'What each merchant received about one person: claims by key, when, for which purpose; never a value.';

-- person_receipts({identity_id, environment}) -> [{transaction_id, merchant, action, purpose, approved, refusal, assurance_level,
--   amount, created_at, receipt}] at most 200, newest first
-- The person's own acts at every merchant, approved (with the receipt's id and code, for receipt-verify) and refused
-- (with why). Amounts whose personal data the retention erased stay null.
create or replace function public.person_receipts(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select coalesce(jsonb_agg(j order by created_at desc, id desc), '[]'::jsonb)
  from (
    select c.id, c.created_at, jsonb_build_object(
      'transaction_id', c.id,
      'merchant', jsonb_build_object('merchant_id', m.id, 'name', m.name),
      'action', c.action, 'purpose', c.purpose,
      'approved', r.id is not null,
      'refusal', case when r.id is null then coalesce(c.refusal_code, c.liveness_reason,
                                                      case when not c.liveness_passed then 'liveness_failed' end) end,
      'assurance_level', c.assurance_level,
      'amount', case when c.amount_minor is not null then jsonb_build_object('minor', c.amount_minor, 'currency', c.currency) end,
      'created_at', c.created_at,
      'receipt', case when r.id is not null then jsonb_build_object('receipt_id', r.id, 'code', r.code, 'issued_at', r.issued_at) end) as j
    from private.captures c
    join private.merchants m on m.id = c.merchant_id
    left join private.receipts r on r.capture_id = c.id
    where c.identity_id = (p ->> 'identity_id')::uuid and c.environment = p ->> 'environment'
    order by c.created_at desc, c.id desc
    limit 200) listed
$$;
comment on function public.person_receipts(jsonb) is 'One person''s own acts at every merchant, approved with their receipt (for receipt-verify) and refused with why.';

-- person_presence_begin({session: hosted_session_create's input, person_session_id, identity_id})
--   -> {started: true, session} | {started: false}
-- Opens a fresh hosted login session for the person's session to confirm an erasure with, at the merchant named
-- (session.merchant_id), only when that merchant holds the person under a consent that stands (the face is
-- identified among its persons).
create or replace function public.person_presence_begin(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_session jsonb := p -> 'session';
  v_created jsonb;
begin
  if private.consent_state((p ->> 'identity_id')::uuid, (v_session ->> 'merchant_id')::uuid) <> 'active' then
    return jsonb_build_object('started', false);
  end if;
  v_created := public.hosted_session_create(v_session);
  insert into private.person_presence_proofs (session_id, person_session_id, created_at)
  values ((v_session ->> 'id')::uuid, (p ->> 'person_session_id')::uuid, (v_session ->> 'now')::timestamptz);
  return jsonb_build_object('started', true, 'session', v_created);
end $$;
comment on function public.person_presence_begin(jsonb) is 'Opens a hosted login session bound to a person''s session, to confirm an erasure by proving presence again.';

-- person_erase({identity_id, environment, person_session_id, presence_session_id, merchant_id?, now})
--   -> {erased: true, merchants, identity_erased} | {erased: false, reason} | null
-- The person erases themselves at one merchant (merchant_id) or at every merchant that holds them, confirmed by a
-- fresh presence proof of this session: completed, approved, the same person, at most five minutes old, once
-- (reason: unknown, used, pending, refused, stale, mismatch). At each merchant, in one transaction: every standing
-- mandate revoked as the granting human (mandate.revoked), the consent withdrawn as revoke-consent does, what every
-- ended consent covered erased now (private.consent_erase_covered, as the retention cron would), and one
-- identity.erased event, which says nothing else. Once no consent stands anywhere the identity is erased: the
-- template, documents and baseline go, and so do the person's sessions, devices and aliases. null when the merchant
-- named does not hold the person.
create or replace function public.person_erase(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_identity uuid := (p ->> 'identity_id')::uuid;
  v_env text := p ->> 'environment';
  v_proof private.person_presence_proofs;
  v_session private.hosted_sessions;
  v_held record;
  v_mandate uuid;
  v_grant uuid;
  v_merchants int := 0;
  v_erased_at timestamptz;
begin
  if p ? 'merchant_id' and not exists (
    select 1 from private.subject_refs where identity_id = v_identity and merchant_id = (p ->> 'merchant_id')::uuid) then
    return null;
  end if;
  select * into v_proof from private.person_presence_proofs
  where session_id = (p ->> 'presence_session_id')::uuid and person_session_id = (p ->> 'person_session_id')::uuid
  for update;
  if not found then
    return jsonb_build_object('erased', false, 'reason', 'unknown');
  end if;
  if v_proof.used_at is not null then
    return jsonb_build_object('erased', false, 'reason', 'used');
  end if;
  select * into v_session from private.hosted_sessions where id = v_proof.session_id;
  if v_session.state in ('open', 'opened') and v_session.expires_at > v_now then
    return jsonb_build_object('erased', false, 'reason', 'pending');
  end if;
  if v_session.state <> 'completed' or (v_session.result ->> 'approved') is distinct from 'true' then
    return jsonb_build_object('erased', false, 'reason', 'refused');
  end if;
  if v_session.ended_at < v_now - interval '5 minutes' then
    return jsonb_build_object('erased', false, 'reason', 'stale');
  end if;
  if not exists (select 1 from private.subject_refs
                 where merchant_id = v_session.merchant_id and subject_ref = v_session.result ->> 'subject_ref'
                   and identity_id = v_identity) then
    return jsonb_build_object('erased', false, 'reason', 'mismatch');
  end if;
  update private.person_presence_proofs set used_at = v_now where session_id = v_proof.session_id;

  for v_held in
    select r.merchant_id, r.subject_ref from private.subject_refs r
    where r.identity_id = v_identity and (not p ? 'merchant_id' or r.merchant_id = (p ->> 'merchant_id')::uuid)
    order by r.created_at, r.merchant_id
  loop
    for v_mandate in
      select m.id from private.mandates m
      where m.merchant_id = v_held.merchant_id and m.granted_by = v_identity and m.environment = v_env
        and private.mandate_effective_status(m, v_now) in ('active', 'exhausted')
      order by m.created_at, m.id
    loop
      perform public.mandate_revoke(jsonb_build_object('by', 'granting_human', 'identity_id', v_identity,
        'environment', v_env, 'mandate_id', v_mandate, 'reason', 'erased by the person', 'now', v_now));
    end loop;
    if private.consent_state(v_identity, v_held.merchant_id) = 'active' then
      perform public.consent_revoke(jsonb_build_object('merchant_id', v_held.merchant_id, 'environment', v_env,
        'subject_ref', v_held.subject_ref, 'now', v_now, 'reason', 'erased by the person'));
    end if;
    perform 1 from private.consent_chain_heads where identity_id = v_identity for update;
    for v_grant in
      select g.id from private.consent_ledger g
      where g.identity_id = v_identity and g.merchant_id = v_held.merchant_id and g.kind = 'consent_granted'
        and exists (select 1 from private.consent_ledger e where e.refers_to = g.id and e.kind in ('consent_withdrawn', 'consent_expired'))
        and not exists (select 1 from private.consent_ledger x where x.refers_to = g.id and x.kind = 'data_erased')
      order by g.recorded_at
    loop
      perform private.consent_erase_covered(v_grant, v_identity, v_held.merchant_id, v_now);
    end loop;
    perform private.outbox_emit(v_held.merchant_id, v_env, 'identity.erased',
      jsonb_build_object('subject_ref', v_held.subject_ref, 'erased_at', v_now), v_now);
    v_merchants := v_merchants + 1;
  end loop;

  select erased_at into v_erased_at from private.identities where id = v_identity;
  if v_erased_at is not null then
    update private.person_sessions set ended_at = v_now, ended_reason = 'erased' where identity_id = v_identity and ended_at is null;
    update private.device_credentials set revoked_at = v_now where identity_id = v_identity and revoked_at is null;
    delete from private.aliases where identity_id = v_identity;
  end if;
  return jsonb_build_object('erased', true, 'merchants', v_merchants, 'identity_erased', v_erased_at is not null);
end $$;
comment on function public.person_erase(jsonb) is 'The person erases themselves at one merchant or all, confirmed by a fresh presence proof: mandates revoked, consent withdrawn, data erased now, identity.erased to each.';

-- person_export_create({id, identity_id, environment, now, ttl_seconds}) -> {export_id, expires_at}
-- Generates the person's export now (docs/functions.md#me, "The export file"): the identity's dates and documents
-- on record (never the template), each merchant with its pseudonym and consents, every mandate, the consent
-- ledger and its verification, the disclosures and the acts, each as the page's own reads answer them. Deletes the
-- content of every export that expired meanwhile.
create or replace function public.person_export_create(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_identity uuid := (p ->> 'identity_id')::uuid;
  v_person jsonb := jsonb_build_object('identity_id', p ->> 'identity_id', 'environment', p ->> 'environment', 'now', p ->> 'now');
  v_row private.person_exports;
begin
  update private.person_exports set content = null where content is not null and expires_at <= v_now;
  insert into private.person_exports (id, identity_id, content, created_at, expires_at)
  select (p ->> 'id')::uuid, i.id, jsonb_build_object(
      'format', 'me-export/1',
      'generated_at', v_now,
      'environment', i.environment,
      'identity', jsonb_build_object(
        'enrolled_at', i.created_at,
        'documents', coalesce((select jsonb_agg(jsonb_build_object('document_type', d.document_type,
                                 'issuing_country', d.issuing_country, 'expires_on', d.expires_on, 'verified_at', d.verified_at)
                                 order by d.verified_at)
                               from private.identity_documents d where d.identity_id = i.id), '[]'::jsonb)),
      'merchants', (select coalesce(jsonb_agg(m || jsonb_build_object('subject_ref', r.subject_ref)), '[]'::jsonb)
                    from jsonb_array_elements(public.person_merchants(v_person)) m
                    join private.subject_refs r on r.identity_id = i.id and r.merchant_id = (m ->> 'merchant_id')::uuid),
      'mandates', public.person_mandates(v_person),
      'consent_ledger', public.person_consent_ledger(v_person),
      'disclosures', public.person_disclosures(v_person),
      'acts', public.person_receipts(v_person)),
    v_now, v_now + make_interval(secs => (p ->> 'ttl_seconds')::int)
  from private.identities i
  where i.id = v_identity and i.environment = p ->> 'environment' and i.erased_at is null
  returning * into v_row;
  if v_row.id is null then
    return null;
  end if;
  return jsonb_build_object('export_id', private.public_id('exp_', v_row.id), 'expires_at', v_row.expires_at);
end $$;
comment on function public.person_export_create(jsonb) is 'Generates one person''s export file now, downloadable once until it expires; deletes expired exports'' content.';

-- person_export_take({id, identity_id, now}) -> {content} | null
-- The export file, once: its content is deleted as it is answered. null when it is not the person's, was
-- downloaded, or expired.
create or replace function public.person_export_take(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  with taken as (
    update private.person_exports x set content = null, downloaded_at = (p ->> 'now')::timestamptz
    from (select id, content from private.person_exports
          where id = (p ->> 'id')::uuid and identity_id = (p ->> 'identity_id')::uuid
            and content is not null and expires_at > (p ->> 'now')::timestamptz
          for update) old
    where x.id = old.id
    returning old.content)
  select jsonb_build_object('content', content) from taken
$$;
comment on function public.person_export_take(jsonb) is 'Answers a person''s export file once, deleting its content; null when not theirs, taken or expired.';
