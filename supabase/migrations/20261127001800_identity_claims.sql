-- ============================================================================
-- Claims and attributes on the resource API (POST /v1/identity/claims and
-- /v1/identity/attributes; docs/resource-api.md). A claim is an enrolment of
-- a person with the merchant, recorded as a capture with its receipt and
-- billed (private.billing_charge_claim), in one transaction. An attribute
-- answer uses its capture as an act. Recognitions write nothing.
-- ============================================================================

comment on table private.captures is
  'What an act recorded at its instant: process-biovital-transaction''s acts, and the claims of POST /v1/identity/claims (ACTION_SIGNUP). The proof mandate-issue accepts for five minutes.';
