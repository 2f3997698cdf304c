-- ============================================================================
-- Captures (the transaction sink's record), receipts and their anchors
-- ============================================================================

-- ----------------------------------------------------------------------------
-- Subject references: which pseudonym a merchant holds for which identity
-- ----------------------------------------------------------------------------
create table private.subject_refs (
  merchant_id uuid not null references private.merchants (id),
  subject_ref text not null check (subject_ref ~ '^sub_[0-9a-f]{48}$'),
  identity_id uuid not null references private.identities (id),
  created_at timestamptz not null,
  primary key (merchant_id, subject_ref),
  unique (merchant_id, identity_id)
);
comment on table private.subject_refs is 'The subject_ref (HMAC pseudonym) each merchant was given for an identity, so the merchant can name the person back as user_id.';
comment on column private.subject_refs.merchant_id is 'Merchant that holds the pseudonym.';
comment on column private.subject_refs.subject_ref is 'HMAC of identity id and merchant id under a secret held outside the database.';
comment on column private.subject_refs.identity_id is 'The identity behind the pseudonym.';
comment on column private.subject_refs.created_at is 'When the merchant first received it.';

-- ----------------------------------------------------------------------------
-- Enrollment capture nonces: a descriptor enrols at most once
-- ----------------------------------------------------------------------------
create table private.enrollment_nonces (
  environment text not null check (environment in ('test', 'live')),
  capture_nonce text not null check (length(capture_nonce) between 8 and 128),
  used_at timestamptz not null,
  primary key (environment, capture_nonce)
);
comment on table private.enrollment_nonces is 'capture_nonce values already used by an enrollment; a replayed descriptor cannot mint a second session.';
comment on column private.enrollment_nonces.environment is 'test or live.';
comment on column private.enrollment_nonces.capture_nonce is 'The nonce the enrolling descriptor was bound to.';
comment on column private.enrollment_nonces.used_at is 'When it was used.';

-- ----------------------------------------------------------------------------
-- Captures
-- ----------------------------------------------------------------------------
create table private.captures (
  id uuid primary key,
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  identity_id uuid not null references private.identities (id),
  action text not null check (action in ('ACTION_LOGIN', 'ACTION_PAYMENT', 'ACTION_SIGN', 'ACTION_SIGNUP', 'ACTION_MANDATE')),
  service_hash text not null,
  amount_minor bigint check (amount_minor >= 0),
  currency text check (currency ~ '^[A-Z]{3}$'),
  capture_nonce text not null check (length(capture_nonce) between 8 and 128),
  liveness_passed boolean not null,
  liveness_reason text,
  coercion_signal boolean not null,
  assurance_level text check (assurance_level in ('face', 'face_voice', 'face_voice_doc')),
  face_similarity real,
  engine_version text not null,
  scenario text,
  created_at timestamptz not null,
  unique (environment, capture_nonce)
);
comment on table private.captures is 'What process-biovital-transaction recorded at the instant of an act: the proof mandate-issue accepts for five minutes.';
comment on column private.captures.id is 'transaction_id, and the proof.capture_id of mandate-issue.';
comment on column private.captures.merchant_id is 'Merchant that submitted the capture.';
comment on column private.captures.environment is 'test or live.';
comment on column private.captures.identity_id is 'The identity whose template the live face was matched against.';
comment on column private.captures.action is 'ACTION_LOGIN, ACTION_PAYMENT, ACTION_SIGN, ACTION_SIGNUP (or ACTION_MANDATE when a mandate stood in).';
comment on column private.captures.service_hash is 'The merchant''s own reference for the act, echoed on receipts.';
comment on column private.captures.amount_minor is 'Amount in the minor unit, when the act carries money.';
comment on column private.captures.currency is 'ISO 4217 currency of amount_minor.';
comment on column private.captures.capture_nonce is 'Nonce the descriptor was bound to; a descriptor is accepted once.';
comment on column private.captures.liveness_passed is 'Engine verdict on liveness, frozen at the instant of the act.';
comment on column private.captures.liveness_reason is 'Engine reason when liveness failed (no_pulse, av_desync, ...).';
comment on column private.captures.coercion_signal is 'Engine coercion signal, frozen at the instant of the act.';
comment on column private.captures.assurance_level is 'face_voice, or face_voice_doc when a valid document was on record; face for a face-only step-up.';
comment on column private.captures.face_similarity is 'Cosine similarity of the live face to the identity''s template.';
comment on column private.captures.engine_version is 'Presence engine version that judged the capture.';
comment on column private.captures.scenario is 'Sandbox scenario header that forced a failure path, if any.';
comment on column private.captures.created_at is 'Server time of the act.';
create index captures_identity_idx on private.captures (identity_id, created_at desc);

-- ----------------------------------------------------------------------------
-- Anchors: Merkle roots of batches of live receipts
-- ----------------------------------------------------------------------------
create table private.receipt_anchors (
  id uuid primary key default gen_random_uuid(),
  root text not null check (root ~ '^[0-9a-f]{64}$'),
  leaf_count int not null check (leaf_count > 0),
  sink text not null,
  sink_reference text,
  created_at timestamptz not null
);
comment on table private.receipt_anchors is 'Merkle roots over batches of live receipts, as recorded by the anchoring sink.';
comment on column private.receipt_anchors.id is 'Anchor id.';
comment on column private.receipt_anchors.root is 'Merkle root (SHA-256 hex) of the batch.';
comment on column private.receipt_anchors.leaf_count is 'Number of receipts in the batch.';
comment on column private.receipt_anchors.sink is 'Where the root was published (local records it here; a chain sink would add a transaction id).';
comment on column private.receipt_anchors.sink_reference is 'The sink''s own reference for the publication, when it has one.';
comment on column private.receipt_anchors.created_at is 'When the root was recorded.';

-- ----------------------------------------------------------------------------
-- Receipts
-- ----------------------------------------------------------------------------
create table private.receipts (
  id uuid primary key,
  code text not null unique check (code ~ '^RCPT-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$'),
  capture_id uuid not null unique references private.captures (id),
  merchant_id uuid not null references private.merchants (id),
  environment text not null check (environment in ('test', 'live')),
  jws text not null,
  seal text not null check (seal ~ '^[0-9a-f]{64}$'),
  anchor_id uuid references private.receipt_anchors (id),
  inclusion_proof jsonb,
  issued_at timestamptz not null
);
comment on table private.receipts is 'Signed receipts of accepted acts. The JWS carries nothing personal; anyone can verify it with the published keys.';
comment on column private.receipts.id is 'Receipt id.';
comment on column private.receipts.code is 'Short public code for receipt-verify.';
comment on column private.receipts.capture_id is 'The capture the receipt attests.';
comment on column private.receipts.merchant_id is 'Merchant the act was done for.';
comment on column private.receipts.environment is 'test receipts are never anchored (no public seal).';
comment on column private.receipts.jws is 'Compact JWS (EdDSA) of the receipt payload.';
comment on column private.receipts.seal is 'immutability_seal: SHA-256 of the JWS; the Merkle leaf for live receipts.';
comment on column private.receipts.anchor_id is 'Anchor whose Merkle root includes this receipt (live only, once anchored).';
comment on column private.receipts.inclusion_proof is 'Sibling hashes from the leaf to the anchor root: [{hash, side}].';
comment on column private.receipts.issued_at is 'When the receipt was signed.';
create index receipts_unanchored_idx on private.receipts (issued_at) where environment = 'live' and anchor_id is null;

-- ============================================================================
-- RPCs
-- ============================================================================

-- identity_enroll({environment, merchant_id, now, capture_nonce, identity_id, existing, subject_ref, key_id, embedding,
--                  match_threshold, consent: {version, retention_days}, session: {token_hash, expires_at},
--                  presented_session_hash?, baseline?}) -> {identity_id, created}
-- Enrollments of one environment are serialised by an advisory lock; a new identity is created only if,
-- under that lock, no stored template matches (a racing enrollment of the same face raises HA410 and the
-- edge searches again). Each stage raises its own SQLSTATE so the API can name what failed.
create or replace function public.identity_enroll(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_identity_id uuid := (p ->> 'identity_id')::uuid;
  v_env text := p ->> 'environment';
  v_merchant uuid := (p ->> 'merchant_id')::uuid;
  v_best jsonb;
begin
  if p ? 'presented_session_hash' and exists (
    select 1 from private.sessions
    where token_hash = p ->> 'presented_session_hash' and revoked_at is null and expires_at > v_now
  ) then
    raise exception 'a session is already present on this device' using errcode = 'HA408';
  end if;

  begin
    insert into private.enrollment_nonces (environment, capture_nonce, used_at) values (v_env, p ->> 'capture_nonce', v_now);
  exception when unique_violation then
    raise exception 'capture nonce already used' using errcode = 'HA411';
  end;

  perform pg_advisory_xact_lock(hashtext('enroll:' || v_env));

  if (p ->> 'existing')::boolean then
    if not exists (select 1 from private.identities where id = v_identity_id and environment = v_env and erased_at is null) then
      raise exception 'identity unreachable' using errcode = 'HA409';
    end if;
  else
    v_best := public.face_template_search(jsonb_build_object(
      'environment', v_env, 'key_id', p ->> 'key_id', 'embedding', p -> 'embedding', 'limit', 1, 'exact', true)) -> 0;
    if v_best is not null and (v_best ->> 'similarity')::real >= (p ->> 'match_threshold')::real then
      raise exception 'a concurrent enrollment stored this face' using errcode = 'HA410';
    end if;
    begin
      insert into private.identities (id, environment, baseline, created_at) values (v_identity_id, v_env, p -> 'baseline', v_now);
    exception when others then
      raise exception 'identity insert failed: %', sqlerrm using errcode = 'HA501';
    end;
    begin
      insert into private.face_templates (identity_id, environment, key_id, embedding, created_at)
      values (v_identity_id, v_env, p ->> 'key_id', array(select jsonb_array_elements_text(p -> 'embedding')::real), v_now);
    exception when others then
      raise exception 'template insert failed: %', sqlerrm using errcode = 'HA502';
    end;
  end if;

  insert into private.subject_refs (merchant_id, subject_ref, identity_id, created_at)
  values (v_merchant, p ->> 'subject_ref', v_identity_id, v_now)
  on conflict do nothing;

  insert into private.consents (identity_id, merchant_id, version, retention_days, granted_at)
  values (v_identity_id, v_merchant, p -> 'consent' ->> 'version', (p -> 'consent' ->> 'retention_days')::int, v_now);

  begin
    insert into private.sessions (identity_id, merchant_id, environment, token_hash, created_at, expires_at)
    values (v_identity_id, v_merchant, v_env, p -> 'session' ->> 'token_hash', v_now, (p -> 'session' ->> 'expires_at')::timestamptz);
  exception when others then
    raise exception 'session insert failed: %', sqlerrm using errcode = 'HA503';
  end;

  return jsonb_build_object('identity_id', v_identity_id, 'created', not (p ->> 'existing')::boolean);
end $$;
comment on function public.identity_enroll(jsonb) is 'Creates (or re-attaches) an identity with its protected template, consent, subject_ref and first session, atomically.';

-- subject_ref_record({merchant_id, subject_ref, identity_id, now}) -> {}
create or replace function public.subject_ref_record(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  insert into private.subject_refs (merchant_id, subject_ref, identity_id, created_at)
  values ((p ->> 'merchant_id')::uuid, p ->> 'subject_ref', (p ->> 'identity_id')::uuid, (p ->> 'now')::timestamptz)
  on conflict do nothing
  returning '{}'::jsonb
$$;
comment on function public.subject_ref_record(jsonb) is 'Remembers that a merchant was given this subject_ref for an identity.';

-- identity_resolve({merchant_id, environment, user_id?, subject_ref?, session_token_hash?, now}) -> identity facts | null
-- user_id is the identity id (first-party callers); subject_ref is the merchant's pseudonym.
-- session_active reports whether the presented first-party session is still live (not revoked, not expired).
create or replace function public.identity_resolve(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object(
    'identity_id', i.id,
    'erased', i.erased_at is not null,
    'baseline', i.baseline,
    'template', (select jsonb_build_object('key_id', t.key_id, 'embedding', to_jsonb(t.embedding))
                 from private.face_templates t where t.identity_id = i.id),
    'document', (select jsonb_build_object('document_type', d.document_type, 'issuing_country', d.issuing_country,
                                           'expires_on', d.expires_on)
                 from private.identity_documents d
                 where d.identity_id = i.id and d.expires_on >= ((p ->> 'now')::timestamptz at time zone 'UTC')::date
                 order by d.expires_on desc limit 1),
    'consent_revoked', not exists (select 1 from private.consents c
                                   where c.identity_id = i.id and c.merchant_id = (p ->> 'merchant_id')::uuid
                                     and c.revoked_at is null)
                       and exists (select 1 from private.consents c
                                   where c.identity_id = i.id and c.merchant_id = (p ->> 'merchant_id')::uuid),
    'session_active', case when p ? 'session_token_hash' then exists (
                        select 1 from private.sessions s
                        where s.token_hash = p ->> 'session_token_hash' and s.identity_id = i.id
                          and s.revoked_at is null and s.expires_at > (p ->> 'now')::timestamptz) end
  )
  from private.identities i
  where i.environment = p ->> 'environment'
    and i.id = coalesce(
      (p ->> 'user_id')::uuid,
      (select s.identity_id from private.subject_refs s
       where s.merchant_id = (p ->> 'merchant_id')::uuid and s.subject_ref = p ->> 'subject_ref'))
$$;
comment on function public.identity_resolve(jsonb) is 'Everything the transaction sink needs about one identity, in one read.';

-- capture_record({capture: {...}, receipt: {...} | null, document: {...} | null, baseline: {...} | null}) -> {capture_id}
-- The capture, its receipt, a newly verified document and the refreshed baseline, in one transaction.
create or replace function public.capture_record(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  c jsonb := p -> 'capture';
begin
  begin
    insert into private.captures (id, merchant_id, environment, identity_id, action, service_hash, amount_minor, currency,
      capture_nonce, liveness_passed, liveness_reason, coercion_signal, assurance_level, face_similarity, engine_version,
      scenario, created_at)
    values ((c ->> 'id')::uuid, (c ->> 'merchant_id')::uuid, c ->> 'environment', (c ->> 'identity_id')::uuid, c ->> 'action',
      c ->> 'service_hash', (c ->> 'amount_minor')::bigint, c ->> 'currency', c ->> 'capture_nonce',
      (c ->> 'liveness_passed')::boolean, c ->> 'liveness_reason', (c ->> 'coercion_signal')::boolean, c ->> 'assurance_level',
      (c ->> 'face_similarity')::real, c ->> 'engine_version', c ->> 'scenario', (c ->> 'created_at')::timestamptz);
  exception when unique_violation then
    raise exception 'capture nonce already used' using errcode = 'HA411';
  end;

  if jsonb_typeof(p -> 'document') = 'object' then
    insert into private.identity_documents (identity_id, document_type, issuing_country, expires_on, face_match_score, verified_at)
    values ((c ->> 'identity_id')::uuid, p -> 'document' ->> 'document_type', p -> 'document' ->> 'issuing_country',
      (p -> 'document' ->> 'expires_on')::date, (p -> 'document' ->> 'face_match_score')::real, (c ->> 'created_at')::timestamptz);
  end if;

  if jsonb_typeof(p -> 'baseline') = 'object' then
    update private.identities set baseline = p -> 'baseline' where id = (c ->> 'identity_id')::uuid;
  end if;

  if jsonb_typeof(p -> 'receipt') = 'object' then
    insert into private.receipts (id, code, capture_id, merchant_id, environment, jws, seal, issued_at)
    values ((p -> 'receipt' ->> 'id')::uuid, p -> 'receipt' ->> 'code', (c ->> 'id')::uuid, (c ->> 'merchant_id')::uuid,
      c ->> 'environment', p -> 'receipt' ->> 'jws', p -> 'receipt' ->> 'seal', (c ->> 'created_at')::timestamptz);
  end if;
  return jsonb_build_object('capture_id', c ->> 'id');
end $$;
comment on function public.capture_record(jsonb) is 'Writes a capture with its receipt (and any newly verified document) atomically; a reused capture nonce raises HA411.';

-- ============================================================================
-- Circuit breaker (503 SLO_BREACH_PAUSED)
-- ============================================================================
create table private.circuit_breakers (
  deployment text not null,
  function_name text not null,
  environment text not null check (environment in ('test', 'live')),
  window_started_at timestamptz not null,
  breaches int not null default 0,
  open_until timestamptz,
  primary key (deployment, function_name, environment)
);
comment on table private.circuit_breakers is 'SLO breaches per function and environment; enough breaches inside a window pause the function.';
comment on column private.circuit_breakers.deployment is 'DEPLOYMENT_ID of the workers: a canary''s failures never pause the stable deployment.';
comment on column private.circuit_breakers.function_name is 'The guarded function.';
comment on column private.circuit_breakers.environment is 'test or live: a failing sandbox never pauses production.';
comment on column private.circuit_breakers.window_started_at is 'Start of the current counting window.';
comment on column private.circuit_breakers.breaches is 'SLO breaches (5xx or over the latency objective) counted in the window.';
comment on column private.circuit_breakers.open_until is 'While in the future the function answers 503 SLO_BREACH_PAUSED; afterwards it is half-open.';

-- circuit_breaker_state({deployment, function_name, environment, now}) -> {open, retry_after_seconds}
create or replace function public.circuit_breaker_state(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object(
    'open', coalesce(b.open_until > (p ->> 'now')::timestamptz, false),
    'retry_after_seconds', greatest(1, ceil(extract(epoch from (b.open_until - (p ->> 'now')::timestamptz)))::int))
  from (select 1) one
  left join private.circuit_breakers b
    on b.deployment = p ->> 'deployment' and b.function_name = p ->> 'function_name' and b.environment = p ->> 'environment'
$$;
comment on function public.circuit_breaker_state(jsonb) is 'Whether a function is paused by its circuit breaker.';

-- circuit_breaker_record({deployment, function_name, environment, now, window_seconds, threshold, open_seconds}) -> {opened}
-- Counts one breach; the threshold-th breach inside the window opens the breaker for open_seconds.
create or replace function public.circuit_breaker_record(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_row private.circuit_breakers;
begin
  insert into private.circuit_breakers as b (deployment, function_name, environment, window_started_at, breaches)
  values (p ->> 'deployment', p ->> 'function_name', p ->> 'environment', v_now, 1)
  on conflict (deployment, function_name, environment) do update
    set breaches = case when b.window_started_at <= v_now - make_interval(secs => (p ->> 'window_seconds')::int)
                        then 1 else b.breaches + 1 end,
        window_started_at = case when b.window_started_at <= v_now - make_interval(secs => (p ->> 'window_seconds')::int)
                                 then v_now else b.window_started_at end
  returning * into v_row;
  if v_row.breaches >= (p ->> 'threshold')::int and (v_row.open_until is null or v_row.open_until <= v_now) then
    update private.circuit_breakers
    set open_until = v_now + make_interval(secs => (p ->> 'open_seconds')::int), breaches = 0, window_started_at = v_now
    where deployment = v_row.deployment and function_name = v_row.function_name and environment = v_row.environment;
    return jsonb_build_object('opened', true);
  end if;
  return jsonb_build_object('opened', false);
end $$;
comment on function public.circuit_breaker_record(jsonb) is 'Counts an SLO breach and opens the breaker when the window''s threshold is reached.';
