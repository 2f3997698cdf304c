-- ============================================================================
-- A /v1 check that consumed is replayed by the mandate's ledger (issue 25): its
-- record in the response store names the mandate, and idempotency_begin sends
-- such a record to the ledger instead of replaying it verbatim. Records stored
-- before this change (at most 24 hours old) name none: this names theirs, so
-- a replay after a revocation is the refusal there too, never the first answer.
-- The mandate is the one in the record's path (mdt_<32 hex> or a bare uuid),
-- of the record's merchant and environment; no cast, so no path can fail it.
-- ============================================================================

update private.idempotency_keys k
set mandate_id = m.id
from private.mandates m
where k.mandate_id is null
  and k.state = 'done'
  and k.response_body ? 'consumption_id'
  and k.function_name ~ '^POST /v1/mandates/[^/]+/check$'
  and m.merchant_id = k.merchant_id
  and m.environment = k.environment
  and replace(m.id::text, '-', '') = lower(replace(regexp_replace(split_part(k.function_name, '/', 4), '^mdt_', ''), '-', ''));
