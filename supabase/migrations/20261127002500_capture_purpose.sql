-- ============================================================================
-- What a capture was made for (issue 25). A capture proved presence for one
-- purpose the person was shown: a login, a payment, a signature, an enrolment,
-- an agent's verification card (which authorises nothing), a /v1 attribute, or
-- the grant of a mandate with its terms. Only a grant capture proves a grant
-- (mandate_issue), of the terms it showed, once. A refused act is recorded with
-- the code it was refused for, so its capture is used up like any other act.
-- ============================================================================

alter table private.captures
  add column purpose text check (purpose in ('login', 'payment', 'sign', 'enroll', 'verify', 'attribute', 'grant')),
  add column grant_terms_digest text check (grant_terms_digest ~ '^[0-9a-f]{64}$'),
  add column granted_mandate_id uuid references private.mandates (id),
  add column refusal_code text,
  add constraint captures_grant_shows_terms check ((purpose = 'grant') = (grant_terms_digest is not null)),
  add constraint captures_grants_once unique (granted_mandate_id);

comment on column private.captures.purpose is
  'What the person was shown and proved presence for: login, payment, sign, enroll, verify (an agent verification card: authorises nothing), attribute (a /v1 attribute), grant (a mandate''s terms). Null on a mandate''s stand-in and on rows recorded before purposes.';
comment on column private.captures.grant_terms_digest is
  'For a grant capture: SHA-256 (hex) of the canonical terms the person was shown (shared/mandates/issue.ts#grantTermsDigest); mandate_issue proves only a mandate with these terms.';
comment on column private.captures.granted_mandate_id is
  'The mandate this grant capture proved, set by mandate_issue in the issue''s transaction: a grant capture proves one mandate.';
comment on column private.captures.refusal_code is
  'The sink''s refusal code when the act was refused (IDENTITY_MISMATCH, FACE_MATCH_BELOW_THRESHOLD, BIOMETRIC_LIVENESS_FAILED, COERCION_DETECTED, DOCUMENT_REQUIRED); null on an approval.';
