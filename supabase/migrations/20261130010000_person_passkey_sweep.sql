-- ============================================================================
-- Persons: the minute cron sweeps the passkey sign-in's old refusals
-- (person_passkey_sweep; docs/decisions.md, D-610). The challenges' sweep reads
-- their expires_at index; this one serves the refusals' by the time recorded.
-- ============================================================================

create index person_passkey_refusals_refused_idx on private.person_passkey_refusals (refused_at);
