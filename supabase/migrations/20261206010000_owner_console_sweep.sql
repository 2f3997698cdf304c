-- ============================================================================
-- The minute cron sweeps the console's sign-ins and sessions a day after they stop counting
-- (owner_console_sweep; docs/decisions.md, D-730). Its deletes read them by when they were made.
-- ============================================================================
create index owner_sign_ins_created_idx on private.owner_sign_ins (created_at);
create index owner_sessions_created_idx on private.owner_sessions (created_at);
