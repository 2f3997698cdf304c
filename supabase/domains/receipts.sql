-- ============================================================================
-- Receipts: read one, and anchor them in Merkle batches.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- ============================================================================
-- Receipt verification and anchoring (docs/receipts.md)
-- The tables are in 20261121000600_captures_receipts.sql; capture_record inserts each receipt
-- with its capture. Here: the read for receipt-verify, and the two calls of the anchoring
-- worker. The worker builds the Merkle tree in TypeScript (shared/receipts/merkle.ts);
-- receipt_anchor_record re-checks every proof against the stored seals with the same
-- construction before it writes anything.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- Merkle fold: the SQL twin of shared/receipts/merkle.ts#verifyInclusion
-- ----------------------------------------------------------------------------
-- leaf = SHA-256(0x00 || seal bytes); step = SHA-256(0x01 || left || right), the sibling on the side
-- the proof names. Returns the root (hex) the proof leads to, or null for a malformed proof.
create or replace function private.merkle_fold(p_seal text, p_proof jsonb) returns text
language plpgsql immutable parallel safe set search_path = '' as $$
declare
  v_node bytea;
  v_step jsonb;
  v_sibling bytea;
begin
  if p_seal is null or p_seal !~ '^[0-9a-f]{64}$' or jsonb_typeof(p_proof) is distinct from 'array' then
    return null;
  end if;
  v_node := sha256(decode('00', 'hex') || decode(p_seal, 'hex'));
  for v_step in select value from jsonb_array_elements(p_proof) loop
    if jsonb_typeof(v_step) is distinct from 'object' or coalesce(v_step ->> 'hash', '') !~ '^[0-9a-f]{64}$' then
      return null;
    end if;
    v_sibling := decode(v_step ->> 'hash', 'hex');
    if v_step ->> 'side' = 'left' then
      v_node := sha256(decode('01', 'hex') || v_sibling || v_node);
    elsif v_step ->> 'side' = 'right' then
      v_node := sha256(decode('01', 'hex') || v_node || v_sibling);
    else
      return null;
    end if;
  end loop;
  return encode(v_node, 'hex');
end $$;
comment on function private.merkle_fold(text, jsonb) is 'Folds a seal with its inclusion proof ([{hash, side}]) into the Merkle root it leads to; null when the proof is malformed.';

-- ============================================================================
-- RPCs
-- ============================================================================

-- receipt_get({id} | {code}) -> {id, code, environment, jws, seal, issued_at, inclusion_proof, anchor} | null
-- anchor is {id, root, leaf_count, sink, sink_reference, anchored_at, confirmed_at} or null (confirmed_at null: pending). Nothing about the
-- capture or the identity is read: receipt-verify answers only from the signed payload.
create or replace function public.receipt_get(p jsonb) returns jsonb
language plpgsql stable security definer set search_path = '' as $$
declare
  v_receipt private.receipts;
  v_anchor private.receipt_anchors;
begin
  if p ? 'id' then
    select * into v_receipt from private.receipts where id = (p ->> 'id')::uuid;
  elsif p ? 'code' then
    select * into v_receipt from private.receipts where code = p ->> 'code';
  else
    raise exception 'id or code is required' using errcode = '22023';
  end if;
  if v_receipt.id is null then
    return null;
  end if;
  if v_receipt.anchor_id is not null then
    select * into v_anchor from private.receipt_anchors where id = v_receipt.anchor_id;
  end if;
  return jsonb_build_object(
    'id', v_receipt.id,
    'code', v_receipt.code,
    'environment', v_receipt.environment,
    'jws', v_receipt.jws,
    'seal', v_receipt.seal,
    'issued_at', v_receipt.issued_at,
    'inclusion_proof', v_receipt.inclusion_proof,
    'anchor', case when v_anchor.id is null then null else jsonb_build_object(
      'id', v_anchor.id,
      'root', v_anchor.root,
      'leaf_count', v_anchor.leaf_count,
      'sink', v_anchor.sink,
      'sink_reference', v_anchor.sink_reference,
      'anchored_at', v_anchor.created_at,
      'confirmed_at', v_anchor.confirmed_at) end);
end $$;
comment on function public.receipt_get(jsonb) is 'One receipt by id or code with its anchor (root, sink) when it has one; null when unknown.';

-- receipts_pending_anchor({now, limit?}) -> {receipts: [{id, seal}]}
-- Live receipts not yet anchored and issued at or before the pass's clock, oldest first (the
-- order is the leaf order). Sandbox receipts are never returned: they carry no public seal.
-- A read without locks; receipt_anchor_record is the guard against two runs taking one receipt.
create or replace function public.receipts_pending_anchor(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('receipts', coalesce(jsonb_agg(jsonb_build_object('id', r.id, 'seal', r.seal) order by r.issued_at, r.id), '[]'::jsonb))
  from (
    select id, seal, issued_at
    from private.receipts
    where environment = 'live'
      and anchor_id is null
      and issued_at <= (p ->> 'now')::timestamptz
    order by issued_at, id
    limit least(greatest(coalesce((p ->> 'limit')::int, 1000), 1), 10000)
  ) r
$$;
comment on function public.receipts_pending_anchor(jsonb) is 'The oldest live receipts still waiting for an anchor, as {id, seal}, up to limit (1 to 10000, default 1000).';

-- receipt_anchor_record({root, sink, sink_reference, now, confirmed?, publication?, receipts: [{id, proof}]})
--   -> {recorded: true, anchor_id, leaf_count} | {recorded: false, unclaimable}
-- One transaction: lock the batch's receipts (in id order, so two runs cannot deadlock), and only if
-- every one is still a live receipt without an anchor, and every proof leads from its stored seal
-- to root, insert the anchor and set each receipt's anchor_id and inclusion_proof. A batch that lost
-- any receipt to a concurrent run writes nothing and answers recorded: false; the worker re-reads.
-- A chain's anchor is written before its transaction is sent (D-515): pending (confirmed false) with the
-- publication to follow up; the local sink's is confirmed at once, and announces its grants then.
create or replace function public.receipt_anchor_record(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_root text := p ->> 'root';
  v_now timestamptz := (p ->> 'now')::timestamptz;
  v_items jsonb := p -> 'receipts';
  v_count int;
  v_distinct int;
  v_claimable int;
  v_bad int;
  v_anchor uuid;
begin
  if v_root is null or v_root !~ '^[0-9a-f]{64}$' or v_now is null or coalesce(p ->> 'sink', '') = ''
     or jsonb_typeof(v_items) is distinct from 'array' or jsonb_array_length(v_items) = 0 then
    raise exception 'root, sink, now and a non-empty receipts array are required' using errcode = '22023';
  end if;
  select count(*), count(distinct (e ->> 'id')::uuid) into v_count, v_distinct from jsonb_array_elements(v_items) e;
  if v_count <> v_distinct then
    raise exception 'a receipt appears twice in the batch' using errcode = '22023';
  end if;

  perform 1 from private.receipts r
  where r.id in (select (e ->> 'id')::uuid from jsonb_array_elements(v_items) e)
  order by r.id
  for update;

  select count(*) into v_claimable
  from private.receipts r
  where r.id in (select (e ->> 'id')::uuid from jsonb_array_elements(v_items) e)
    and r.environment = 'live'
    and r.anchor_id is null;
  if v_claimable <> v_count then
    return jsonb_build_object('recorded', false, 'unclaimable', v_count - v_claimable);
  end if;

  select count(*) into v_bad
  from private.receipts r
  join jsonb_array_elements(v_items) e on r.id = (e ->> 'id')::uuid
  where private.merkle_fold(r.seal, e -> 'proof') is distinct from v_root;
  if v_bad > 0 then
    raise exception '% inclusion proof(s) do not lead from the stored seal to the root', v_bad using errcode = '22023';
  end if;

  insert into private.receipt_anchors (root, leaf_count, sink, sink_reference, created_at, publication)
  values (v_root, v_count, p ->> 'sink', p ->> 'sink_reference', v_now, nullif(p -> 'publication', 'null'::jsonb))
  returning id into v_anchor;

  update private.receipts r
  set anchor_id = v_anchor, inclusion_proof = e -> 'proof'
  from jsonb_array_elements(v_items) e
  where r.id = (e ->> 'id')::uuid;

  if coalesce((p ->> 'confirmed')::boolean, true) then
    perform private.receipt_anchor_announce(v_anchor, v_now);
  end if;

  return jsonb_build_object('recorded', true, 'anchor_id', v_anchor, 'leaf_count', v_count);
end $$;
comment on function public.receipt_anchor_record(jsonb) is 'Writes one anchor (confirmed, or pending its publication) and every receipt''s inclusion proof atomically; refuses (recorded: false) a batch of which any receipt is sandbox, unknown or already anchored, and raises on a proof that does not reach the root.';

-- ----------------------------------------------------------------------------
-- Following a publication up (D-515): confirmation, replacement, reorg repair
-- ----------------------------------------------------------------------------

-- The anchor's root is confirmed: marks it so and, the first time only, sends mandate.granted of every grant
-- whose capture's receipt it holds (resource API 6: sent once, after the grant is anchored). The anchor row
-- is locked first: mandate_issue locks it shared, so each grant is announced by exactly one of the two.
create or replace function private.receipt_anchor_announce(p_anchor uuid, p_now timestamptz) returns void
language plpgsql set search_path = '' as $$
declare
  v_first timestamptz;
  v_mandate private.mandates;
begin
  select first_confirmed_at into v_first from private.receipt_anchors where id = p_anchor for update;
  update private.receipt_anchors set confirmed_at = p_now, first_confirmed_at = coalesce(first_confirmed_at, p_now)
  where id = p_anchor;
  if v_first is not null then
    return;
  end if;
  for v_mandate in
    select m.* from private.mandates m join private.receipts r on r.capture_id = m.capture_id
    where r.anchor_id = p_anchor and m.environment = 'live'
    order by m.created_at, m.id
  loop
    perform private.mandate_granted_emit(v_mandate, p_now);
  end loop;
end $$;
comment on function private.receipt_anchor_announce(uuid, timestamptz) is 'Marks an anchor confirmed; on its first confirmation sends mandate.granted of the grants whose receipts it holds.';

-- receipt_anchors_open({sink}) -> {anchors: [{id, root, sink_reference, confirmed, publication}]}
-- What the anchoring pass follows up on this sink: every anchor not final yet (D-650), oldest first: pending,
-- confirmed but still within a reorg's reach, and those recorded before publications were kept (D-339:
-- confirmed, publication null), which the pass reads back from the chain by their reference.
create or replace function public.receipt_anchors_open(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object('anchors', coalesce(jsonb_agg(jsonb_build_object(
    'id', a.id, 'root', a.root, 'sink_reference', a.sink_reference, 'confirmed', a.confirmed_at is not null,
    'publication', a.publication) order by a.created_at, a.id), '[]'::jsonb))
  from private.receipt_anchors a
  where a.sink = p ->> 'sink' and a.final_at is null
$$;
comment on function public.receipt_anchors_open(jsonb) is 'The anchors of a sink not final yet (pending, confirmed within a reorg''s reach, or recorded before publications were kept), for the pass to confirm, replace, repair or finalise.';

-- receipt_anchor_follow({anchor_id, sink_reference, confirmed, final?, publication, now}) -> {confirmed, announced}
-- Records where an anchor's publication stands: confirmed (the first time, its grants are announced), final
-- (confirmed beyond a reorg's reach: no longer followed, D-650), or pending again (not yet deep enough, replaced
-- at other fees, republished after a reorg took it out). The root and the receipts' proofs never change: only
-- how the root is published.
create or replace function public.receipt_anchor_follow(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_anchor private.receipt_anchors;
  v_now timestamptz := (p ->> 'now')::timestamptz;
begin
  select * into v_anchor from private.receipt_anchors where id = (p ->> 'anchor_id')::uuid for update;
  if not found or v_now is null or jsonb_typeof(p -> 'confirmed') is distinct from 'boolean' then
    raise exception 'a known anchor_id, now and confirmed are required' using errcode = '22023';
  end if;
  update private.receipt_anchors
  set sink_reference = p ->> 'sink_reference', publication = coalesce(nullif(p -> 'publication', 'null'::jsonb), publication),
      confirmed_at = case when (p ->> 'confirmed')::boolean then confirmed_at else null end,
      final_at = case when (p ->> 'confirmed')::boolean then final_at else null end
  where id = v_anchor.id;
  if (p ->> 'confirmed')::boolean and v_anchor.confirmed_at is null then
    perform private.receipt_anchor_announce(v_anchor.id, v_now);
  end if;
  -- Final only once confirmed (above, or before): the pass stops following it.
  if (p ->> 'confirmed')::boolean and coalesce((p ->> 'final')::boolean, false) then
    update private.receipt_anchors set final_at = coalesce(final_at, v_now) where id = v_anchor.id;
  end if;
  return jsonb_build_object('confirmed', (p ->> 'confirmed')::boolean,
    'announced', (p ->> 'confirmed')::boolean and v_anchor.first_confirmed_at is null);
end $$;
comment on function public.receipt_anchor_follow(jsonb) is 'Records where an anchor''s publication stands (confirmed, final, or pending again with its new publication); its first confirmation announces its grants.';
