-- ============================================================================
-- Captures and receipts: what the transaction sink records at the instant of
-- an act (the proof mandate-issue accepts), the signed receipt of an accepted
-- act, and the Merkle anchors receipts are later bound to. The RPCs that read
-- and anchor receipts are in 20261121000700_receipt_anchoring.sql.
-- ============================================================================

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
comment on column private.captures.capture_nonce is 'Nonce the descriptor was bound to; a capture acts once (private.capture_nonces).';
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
