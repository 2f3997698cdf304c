-- ============================================================================
-- The resource API /v1 (resource API 4, 9; docs/resource-api.md): the
-- merchant's pinned version, authentication that answers it, and the mandate
-- listing with keyset pagination in the resource API's shape.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- The merchant's pinned version (resource API 9: "when omitted, the account
-- default applies"). Pinned when the merchant is created, to the version
-- current then; a request's Service-Version header overrides it.
-- ----------------------------------------------------------------------------
alter table private.merchants add column api_version text not null default '2026-09-14'
  check (api_version ~ '^\d{4}-\d{2}-\d{2}$');
comment on column private.merchants.api_version is
  'The resource API version that answers this merchant''s requests sent without Service-Version; pinned at creation to the version current then.';

-- resource_api_authenticate({credential, now}) -> {key_id, merchant_id, environment, api_version}
-- The key (HA401 when unknown or revoked) and the merchant's pinned version in one round trip.
create or replace function public.resource_api_authenticate(p jsonb) returns jsonb
language sql security definer set search_path = '' as $$
  with authenticated as materialized (select private.request_authenticate(p) as caller)
  select a.caller || jsonb_build_object('api_version', m.api_version)
  from authenticated a
  join private.merchants m on m.id = (a.caller ->> 'merchant_id')::uuid
$$;
comment on function public.resource_api_authenticate(jsonb) is
  'Authenticates a resource API key and answers its merchant''s pinned version, in one round trip.';

-- ----------------------------------------------------------------------------
-- Mandates as the resource API shows them (2.3: id, status, granted_to, scope,
-- ceiling {amount, currency, period}, remaining, until; docs/resource-api.md).
-- ----------------------------------------------------------------------------
create or replace function private.mandate_resource_json(m private.mandates, p_at timestamptz) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'id', private.public_id('mdt_', m.id),
    'object', 'mandate',
    'status', private.mandate_effective_status(m, p_at),
    'granted_by', m.granted_by_ref,
    'granted_to', m.granted_to,
    'granted_to_kind', m.granted_to_kind,
    'agent_display_name', m.agent_display_name,
    'agent_descriptor', m.agent_descriptor,
    'scope', to_jsonb(m.scopes),
    'constraints', m.constraints,
    'ceiling', case when m.ceiling_kind = 'none' then null else jsonb_build_object(
      'amount', m.ceiling_amount, 'currency', m.ceiling_currency, 'count', m.ceiling_count,
      'period', case m.ceiling_period when 'daily' then 'day' when 'weekly' then 'week'
                                      when 'monthly' then 'month' else 'lifetime' end) end,
    'remaining', case when m.ceiling_kind = 'none' then null
                      else coalesce(r.remaining_amount, r.remaining_count) end,
    'remaining_count', case when m.ceiling_kind = 'both' then r.remaining_count end,
    'period_resets_at', r.period_resets_at,
    'until', m.expires_at,
    'assurance_level', m.assurance_level,
    'created_at', m.created_at,
    'revoked_at', m.revoked_at)
  from private.mandate_remaining(m, p_at) r
$$;
comment on function private.mandate_resource_json(private.mandates, timestamptz) is
  'A mandate as the resource API shows it: remaining is the amount left when the ceiling has an amount, else the count left.';

-- mandate_page({merchant_id, environment, now, limit, mandate_id?, granted_by?, granted_to?, status?,
--   after?: {created_at, id}}) -> {data: [mandate], more: boolean}
-- Newest first by (created_at, id); `after` is the last row of the previous page, so rows added
-- since (newer) never shift a later page. At most `limit` rows; `more` says whether another follows.
create or replace function public.mandate_page(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  with page as (
    select m as mandate, m.created_at, m.id
    from private.mandates m
    where m.merchant_id = (p ->> 'merchant_id')::uuid and m.environment = p ->> 'environment'
      and (not p ? 'mandate_id' or m.id = (p ->> 'mandate_id')::uuid)
      and (not p ? 'granted_by' or m.granted_by_ref = p ->> 'granted_by')
      and (not p ? 'granted_to' or m.granted_to = p ->> 'granted_to')
      and (not p ? 'after' or (m.created_at, m.id) < ((p -> 'after' ->> 'created_at')::timestamptz, (p -> 'after' ->> 'id')::uuid))
      and (not p ? 'status' or private.mandate_effective_status(m, (p ->> 'now')::timestamptz) = p ->> 'status')
    order by m.created_at desc, m.id desc
    limit (p ->> 'limit')::int + 1
  ), numbered as (
    select page.*, row_number() over (order by created_at desc, id desc) as n from page
  )
  select jsonb_build_object(
    'data', coalesce(jsonb_agg(private.mandate_resource_json(mandate, (p ->> 'now')::timestamptz) order by n)
                       filter (where n <= (p ->> 'limit')::int), '[]'::jsonb),
    'more', count(*) > (p ->> 'limit')::int,
    'last', (array_agg(jsonb_build_object('created_at', created_at, 'id', id) order by n)
             filter (where n <= (p ->> 'limit')::int))[(p ->> 'limit')::int])
  from numbered
$$;
comment on function public.mandate_page(jsonb) is
  'One page of this merchant''s mandates, newest first, filtered by id, granter, holder and effective status, after a keyset cursor.';
create index mandates_keyset_idx on private.mandates (merchant_id, environment, created_at desc, id desc);
comment on index private.mandates_keyset_idx is 'Pages of a merchant''s mandates, newest first, by (created_at, id).';
