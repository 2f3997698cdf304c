-- ============================================================================
-- Claim sessions and billing (resource API 1: "an abandoned hosted session is
-- never billed; a recognise session is free; a claim session follows the
-- claim rule"). Hosted sessions of mode claim are billed by the transaction
-- that stores their approved outcome, and refused at creation when the
-- month's allowance is used up. Triggers, so that whichever RPC creates or
-- completes a session, the rule holds.
-- ============================================================================

-- A claim session is refused at creation (HA440, 402 allowance_exhausted) when the merchant has no billed
-- claim left this month: the allowance is checked when the merchant opens the screen, not after the person
-- has been through it.
create or replace function private.hosted_session_claim_allowance() returns trigger
language plpgsql set search_path = '' as $$
begin
  if private.billing_allowance_left(new.merchant_id, new.environment, new.created_at) = 0 then
    raise exception 'the monthly allowance of billed claims is used up' using errcode = 'HA440',
      detail = jsonb_build_object(
        'allowance', (private.billing_standing(new.merchant_id, new.environment, new.created_at)).allowance,
        'resets_at', private.iso_utc((private.billing_month(new.created_at)).next_month_start))::text;
  end if;
  return new;
end $$;
comment on function private.hosted_session_claim_allowance() is 'Refuses a claim session at creation when the month''s allowance of billed claims is used up (HA440).';
create trigger hosted_sessions_claim_allowance before insert on private.hosted_sessions
  for each row when (new.action = 'claim') execute function private.hosted_session_claim_allowance();
comment on trigger hosted_sessions_claim_allowance on private.hosted_sessions is 'A claim session needs a billed claim left in the month''s allowance.';

-- A claim session that completes approved bills the person it claimed (once for life: a person billed before
-- is not billed again), in the transaction that stores the outcome: a cancelled, failed or expired session never
-- reaches it. Its allowance was checked at creation, so the completion is never refused for it.
create or replace function private.hosted_session_bill_claim() returns trigger
language plpgsql set search_path = '' as $$
declare
  v_identity uuid;
begin
  select identity_id into v_identity from private.subject_refs
  where merchant_id = new.merchant_id and subject_ref = new.result ->> 'facetoken';
  if v_identity is not null then
    perform private.billing_charge_claim(new.merchant_id, new.environment, v_identity, 'session',
      private.public_id('hs_', new.id), coalesce(new.ended_at, now()), false);
  end if;
  return new;
end $$;
comment on function private.hosted_session_bill_claim() is 'Bills the person an approved claim session claimed, in the outcome''s transaction (channel session, never refused).';
create trigger hosted_sessions_bill_claim after update of state on private.hosted_sessions
  for each row when (new.action = 'claim' and new.state = 'completed' and old.state <> 'completed'
                     and (new.result ->> 'approved')::boolean)
  execute function private.hosted_session_bill_claim();
comment on trigger hosted_sessions_bill_claim on private.hosted_sessions is 'A claim session follows the claim rule: billed when it completes approved.';
