-- ============================================================================
-- The outbox: events written in the transaction of the act they report.
-- Functions and triggers only, each defined once (create or replace); the
-- tables they use are in supabase/migrations. Applied after the migrations by
-- scripts/local/migrations.ts, which drops any function no domain file defines.
-- ============================================================================

-- outbox_emit(merchant_id, environment, type, data, created_at) -> event id
-- Called only from inside other RPCs, so the event commits or rolls back with the change.
create or replace function private.outbox_emit(p_merchant_id uuid, p_environment text, p_type text, p_data jsonb, p_created_at timestamptz)
returns uuid language sql set search_path = '' as $$
  insert into private.outbox_events (merchant_id, environment, type, data, created_at)
  values (p_merchant_id, p_environment, p_type, p_data, p_created_at)
  returning id
$$;
comment on function private.outbox_emit(uuid, text, text, jsonb, timestamptz) is 'Appends an event to the outbox inside the caller''s transaction.';
