-- ============================================================================
-- A lifetime ceiling at zero is `exhausted`, derived like any other ceiling at
-- zero (issue 29, resource API 3.1: "active -> exhausted by consumption, the
-- ceiling reaches zero, no call needed"). Until now the consume that used the
-- last unit of a lifetime ceiling stored `consumed`, and reads reported
-- `consumed`, a status the resource API's state machine does not have. A
-- lifetime bucket never resets and consumptions are append-only, so the
-- derived `exhausted` is as final as the stored marker was: the marker is
-- retired, and the stored statuses are `active` and `revoked`.
-- Rows stored `consumed` go back to `active` (their remaining is zero, so they
-- read `exhausted`); updated_at is left as it was. The immutability trigger
-- refuses leaving `consumed`, so it is off for this one statement where it
-- exists (a fresh database gets it from supabase/domains/mandates.sql later).
-- ============================================================================

do $$
begin
  if exists (select 1 from pg_trigger where tgname = 'mandates_immutable' and tgrelid = 'private.mandates'::regclass) then
    alter table private.mandates disable trigger mandates_immutable;
    update private.mandates set status = 'active' where status = 'consumed';
    alter table private.mandates enable trigger mandates_immutable;
  else
    update private.mandates set status = 'active' where status = 'consumed';
  end if;
end $$;

alter table private.mandates drop constraint mandates_status_check;
alter table private.mandates add constraint mandates_status_check check (status in ('active', 'revoked'));

comment on column private.mandates.status is
  'Stored status: active or revoked. Reads report the effective status (expired, exhausted derived at read time).';
