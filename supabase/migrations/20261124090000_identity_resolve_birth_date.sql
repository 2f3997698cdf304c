-- ============================================================================
-- Age attributes (POST /v1/identity/attributes, age_over_18 and age_over_21):
-- identity_resolve's document now carries the verified document's date of
-- birth, so an age attribute is answered from the same read as
-- document_verified. Only this field is new; the rest is as before.
-- ============================================================================

create or replace function public.identity_resolve(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  select jsonb_build_object(
    'identity_id', i.id,
    'erased', i.erased_at is not null,
    'baseline', i.baseline,
    'template', (select jsonb_build_object('key_id', t.key_id, 'embedding', to_jsonb(t.embedding))
                 from private.face_templates t where t.identity_id = i.id),
    'document', (select jsonb_build_object('document_type', d.document_type, 'issuing_country', d.issuing_country,
                                           'expires_on', d.expires_on, 'date_of_birth', d.date_of_birth)
                 from private.identity_documents d
                 where d.identity_id = i.id and d.expires_on >= ((p ->> 'now')::timestamptz at time zone 'UTC')::date
                 order by d.expires_on desc limit 1),
    'consent_revoked', not exists (select 1 from private.consents c
                                   where c.identity_id = i.id and c.merchant_id = (p ->> 'merchant_id')::uuid
                                     and c.revoked_at is null),
    'session_active', case when p ? 'session_token_hash' then exists (
                        select 1 from private.sessions s
                        where s.token_hash = p ->> 'session_token_hash' and s.identity_id = i.id
                          and s.revoked_at is null and s.expires_at > (p ->> 'now')::timestamptz) end
  )
  from private.identities i
  where i.environment = p ->> 'environment'
    and exists (select 1 from private.consents c where c.identity_id = i.id and c.merchant_id = (p ->> 'merchant_id')::uuid)
    and i.id = coalesce(
      (p ->> 'user_id')::uuid,
      (select s.identity_id from private.subject_refs s
       where s.merchant_id = (p ->> 'merchant_id')::uuid and s.subject_ref = p ->> 'subject_ref'))
$$;
comment on function public.identity_resolve(jsonb) is
  'Everything the transaction sink and /v1 attributes need about one identity, in one read (the document''s date of birth answers age attributes).';
