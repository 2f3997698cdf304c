/**
 * Hosted-session expiry and webhook delivery (cron, every minute, one worker so that an expiry's
 * event goes out in the tick that wrote it): each tick first stores the expiry of hosted sessions that
 * expired unfinished, writing their session.expired events (shared/sessions/expire.ts), and deletes
 * the device challenges expired for a day (shared/devices/challenges.ts) and the person's page's
 * passkey sign-in challenges and refusals and its sign-ins a day old (shared/persons/sweep.ts) and the
 * console's sign-ins and sessions a day over (shared/management/sweep.ts) and the MCP authorization
 * endpoint's sign-ins a day over (shared/agents/sweep.ts), then runs
 * one pass of shared/webhooks/run.ts at the tick's scheduled time: fan new outbox events out into
 * deliveries, claim the due ones, send them signed, record the results (docs/webhooks.md). It serves no HTTP: every request answers
 * 404 FUNCTION_NOT_FOUND. Tests drive its ticks through Miniflare's scheduled-event API at a time
 * they choose (tests/harness/own-service.ts).
 */
import { sweepAgentSignIns } from "../../shared/agents/sweep";
import { sweepDeviceChallenges } from "../../shared/devices/challenges";
import { cronWorker } from "../../shared/edge/cron";
import { sweepConsoleSignIns } from "../../shared/management/sweep";
import { sweepPasskeySignIns } from "../../shared/persons/sweep";
import { expireSessions } from "../../shared/sessions/expire";
import { passClock, passOptions, runOutbox } from "../../shared/webhooks/run";

export default cronWorker("session-expiry-and-webhooks", async (sql, config, at) => {
  const sessionsExpired = await expireSessions(sql, at);
  const challengesSwept = await sweepDeviceChallenges(sql, at);
  const passkeys = await sweepPasskeySignIns(sql, at);
  const passkeysSwept = passkeys.challenges + passkeys.refusals + passkeys.sign_ins;
  const consoleSwept = await sweepConsoleSignIns(sql, at);
  const agentSignInsSwept = await sweepAgentSignIns(sql, at);
  const summary = await runOutbox(sql, passOptions(config, passClock(at)));
  const busy =
    sessionsExpired ||
    challengesSwept ||
    passkeysSwept ||
    consoleSwept.sign_ins ||
    consoleSwept.sessions ||
    agentSignInsSwept ||
    summary.claimed ||
    summary.fanned_out_events ||
    summary.errors.length;
  return busy
    ? {
        sessions_expired: sessionsExpired,
        device_challenges_swept: challengesSwept,
        passkey_challenges_swept: passkeys.challenges,
        passkey_refusals_swept: passkeys.refusals,
        person_sign_ins_swept: passkeys.sign_ins,
        owner_sign_ins_swept: consoleSwept.sign_ins,
        owner_sessions_swept: consoleSwept.sessions,
        agent_sign_ins_swept: agentSignInsSwept,
        ...summary,
      }
    : null;
});
