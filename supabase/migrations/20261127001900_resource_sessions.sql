-- ============================================================================
-- Hosted sessions of the resource API (resource API 2.2, 3.2, 4.4, 4.5;
-- docs/resource-api.md#sessions): the same sessions as the function API's,
-- with four more actions, which are the /v1 modes (claim, recognise,
-- attribute, mandate), a 30-minute lifetime, the person's way back
-- (return_url, cancel_url) and what each mode needs (facetoken, attribute,
-- the mandate's terms), the merchant's branding and locale.
--
-- A session whose action is a mode is a /v1 session: it is created and read
-- only through /v1 (resource_session_create, resource_session_get), booted,
-- completed and cancelled by the same screen endpoints, expired by the same
-- tick with the same session.expired.
-- ============================================================================

alter table private.hosted_sessions
  drop constraint hosted_sessions_action_check,
  add constraint hosted_sessions_action_check
    check (action in ('enroll', 'login', 'authorize', 'sign', 'verify', 'claim', 'recognise', 'attribute', 'mandate')),
  drop constraint hosted_sessions_ttl_seconds_check,
  add column return_url text check (return_url ~ '^https://' and length(return_url) <= 2048),
  add column cancel_url text check (cancel_url ~ '^https://' and length(cancel_url) <= 2048),
  add column facetoken text check (length(facetoken) between 1 and 128),
  add column attribute text check (attribute ~ '^[a-z][a-z0-9_]{0,63}$'),
  add column mandate_terms jsonb check (jsonb_typeof(mandate_terms) = 'object'),
  add column branding jsonb check (jsonb_typeof(branding) = 'object'),
  add column locale text check (locale ~ '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$' and length(locale) <= 35),
  add constraint hosted_sessions_mode check (
    case when action in ('claim', 'recognise', 'attribute', 'mandate') then
           ttl_seconds = 1800 and return_url is not null and cancel_url is not null
           and (facetoken is not null) = (action <> 'claim')
           and (attribute is not null) = (action = 'attribute')
           and (mandate_terms is not null) = (action = 'mandate')
         else
           ttl_seconds between 60 and 900 and return_url is null and cancel_url is null and facetoken is null
           and attribute is null and mandate_terms is null and branding is null and locale is null
    end);
comment on column private.hosted_sessions.return_url is '/v1 sessions: the https URL the person lands on when the session ends (session_id and status appended); null on the function API''s.';
comment on column private.hosted_sessions.cancel_url is '/v1 sessions: where a person who abandons lands (the return_url when the merchant gave none).';
comment on column private.hosted_sessions.facetoken is '/v1 modes recognise, attribute and mandate: the merchant''s facetoken (subject_ref) of the person the session is for.';
comment on column private.hosted_sessions.attribute is '/v1 mode attribute: the predicate asked about the person.';
comment on column private.hosted_sessions.mandate_terms is '/v1 mode mandate: the mandate the person is asked to grant, as POST /v1/mandates takes it without granted_by and proof.';
comment on column private.hosted_sessions.branding is '/v1 sessions: the merchant''s branding for this session (logo_url, accent, domain, headline, footer_note); null: none.';
comment on column private.hosted_sessions.locale is '/v1 sessions: the BCP 47 locale the screen speaks; null: the person''s browser.';
