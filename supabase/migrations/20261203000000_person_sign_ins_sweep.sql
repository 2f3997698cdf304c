-- ============================================================================
-- Persons: the minute cron also sweeps the person's old sign-ins
-- (person_passkey_sweep; docs/decisions.md, D-702). Its delete reads them by the
-- time they were started, which bounds when they stop counting.
-- ============================================================================

create index person_sign_ins_created_idx on private.person_sign_ins (created_at);
