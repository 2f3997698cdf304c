-- ============================================================================
-- mandate.at_limit warns before the agent is refused (issue 29, resource API 6:
-- "the remaining ceiling crossed the configured threshold, before the agent is
-- refused"). With the old default, 0, the event fired only when a consumption
-- landed exactly on zero: a mandate whose next act overshoots what is left was
-- refused (ceiling_exceeded) with no warning ever sent. The default is now 20:
-- the event is written by the consumption that leaves a fifth of the period's
-- ceiling or less, and again by the one that uses the last of it.
-- Merchants still on 0 had the old default (nothing told 0 apart from a choice,
-- and no merchant could have chosen "no warning before a refusal" knowingly),
-- so they move to 20; the CLI sets any other value from 0 to 99.
-- ============================================================================

alter table private.merchants alter column at_limit_threshold_percent set default 20;

update private.merchants set at_limit_threshold_percent = 20 where at_limit_threshold_percent = 0;

comment on column private.merchants.at_limit_threshold_percent is
  'mandate.at_limit fires when a consumption takes the remaining ceiling of its period to at most this percentage of the ceiling, and again when it reaches zero (0: only at zero). Default 20: a warning before the agent''s first refusal.';
