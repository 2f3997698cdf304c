-- ============================================================================
-- The resource API's mandates (docs/resource-api.md#mandates): the mandate as
-- this surface shows it is built on mandate_json (the one shape of a mandate)
-- with this surface's names, and POST /v1/mandates issues and stores its answer
-- under the Idempotency-Key in one transaction.
-- ============================================================================

-- A mandate as the resource API shows it: mandate_json's fields (agent fields null when absent),
-- with id, scope, until, the ceiling in this surface's periods and what remains of it.
create or replace function private.mandate_resource_json(m private.mandates, p_at timestamptz) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object('agent_display_name', null, 'agent_descriptor', null)
    || (private.mandate_json(m, p_at) - array['mandate_id', 'scopes', 'expires_at', 'ceiling', 'step_up_of', 'updated_at'])
    || jsonb_build_object(
      'id', private.public_id('mdt_', m.id),
      'object', 'mandate',
      'scope', to_jsonb(m.scopes),
      'until', m.expires_at,
      'ceiling', case when m.ceiling_kind = 'none' then null else jsonb_build_object(
        'amount', m.ceiling_amount, 'currency', m.ceiling_currency, 'count', m.ceiling_count,
        'period', case m.ceiling_period when 'daily' then 'day' when 'weekly' then 'week'
                                        when 'monthly' then 'month' else 'lifetime' end) end,
      'remaining', case when m.ceiling_kind = 'none' then null
                        else coalesce(r.remaining_amount, r.remaining_count) end,
      'remaining_count', case when m.ceiling_kind = 'both' then r.remaining_count end,
      'period_resets_at', r.period_resets_at)
  from private.mandate_remaining(m, p_at) r
$$;
comment on function private.mandate_resource_json(private.mandates, timestamptz) is
  'A mandate as the resource API shows it (mandate_json in this surface''s names): remaining is the amount left when the ceiling has an amount, else the count left.';

-- resource_mandate_create(mandate_issue's params + {stored_response?: {record}}) -> the mandate (mandate_resource_json)
-- mandate_issue and, with an Idempotency-Key, its 201 answer stored in the same transaction: a
-- mandate is never issued without its answer, nor twice for one key.
create or replace function public.resource_mandate_create(p jsonb) returns jsonb
language plpgsql security definer set search_path = '' as $$
declare
  v_body jsonb;
begin
  perform public.mandate_issue(p);
  select private.mandate_resource_json(m, (p ->> 'now')::timestamptz) into v_body
  from private.mandates m where m.id = (p ->> 'id')::uuid;
  perform private.idempotency_store_act(p -> 'stored_response', 201, v_body, null);
  return v_body;
end $$;
comment on function public.resource_mandate_create(jsonb) is
  'POST /v1/mandates: issues the mandate and stores its answer under the Idempotency-Key in one transaction.';
