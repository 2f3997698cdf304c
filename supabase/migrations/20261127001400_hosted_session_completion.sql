-- ============================================================================
-- Hosted sessions: a completion is one transaction (docs/decisions.md, "Hosted sessions").
--
-- Before, a completion marked the row (completion_started_at) in one transaction, ran the act
-- (the capture with its receipt, or the enrolment) in others, and recorded the outcome in a last
-- one; a worker that died in between left the act recorded and the session to expire. Now the
-- edge runs begin, the act and finish in one database transaction: begin locks the session row
-- (FOR UPDATE NOWAIT: a second completion or a cancel meanwhile is refused at once, HA704) and
-- holds the lock to the end; finish records the outcome and session.completed; any error rolls
-- the act back with it. The mark, its minute of grace after expires_at and the release RPC are
-- gone: uncommitted, nobody else could see them.
--
-- The lock-and-refuse steps of consume, begin and cancel are one helper, private.hosted_session_lock.
-- ============================================================================

-- The row's shape loses the mark.
alter table private.hosted_sessions drop constraint hosted_sessions_ended;
alter table private.hosted_sessions drop column completion_started_at;
alter table private.hosted_sessions add constraint hosted_sessions_ended check (
  (state in ('completed', 'failed', 'cancelled', 'expired')) = (ended_at is not null)
  and (state in ('completed', 'failed', 'cancelled')) = (result is not null)
);
