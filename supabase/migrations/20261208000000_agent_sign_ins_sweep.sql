-- ============================================================================
-- The minute cron sweeps the MCP authorization endpoint's sign-ins a day after they stop counting
-- (agent_sign_in_sweep; docs/decisions.md, D-751). Its delete reads them by when they were started.
-- ============================================================================
create index agent_sign_ins_created_idx on private.agent_sign_ins (created_at);
