/**
 * The hosted screen's JSON endpoints under /functions/v1/hosted-capture (the page and its assets
 * are served beside them by the same function):
 * - `POST /boot` `{session_token}`: exchanges the token as the service (hosted-session-consume's
 *   operation) for what the screen shows, the capture nonce and the screen credential;
 * - `POST /complete` (Authorization: Bearer <screen credential>) with the capture: judges it for
 *   the session's action and answers the outcome;
 * - `POST /cancel` (the same credential) `{reason?}`: the person ends the screen without a capture;
 * - `POST /handoff` `{session_token, ttl_seconds?}`: before boot, hands the session over to another
 *   device (handoff-register-public's operation, the token being the screen's only credential): the
 *   code, the phone's URL and its QR code; `POST /handoff/status` `{session_token, handoff_id}`: its state.
 * Every answer is `cache-control: no-store`; each route is rate limited per client IP (before the
 * body is read) and per session secret (screenLimits).
 */
import type { MiddlewareHandler } from "hono";
import { relyingPartyOf } from "../../shared/devices/ceremony";
import { afterAnswer } from "../../shared/edge/after-answer";
import { type AppEnv, type createFunctionApp, depsOf } from "../../shared/edge/app";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented, withDoc } from "../../shared/edge/openapi";
import { clientIp, type RateLimitRule, rateLimit } from "../../shared/edge/rate-limit";
import {
  handoffRegisterCodes,
  handoffSchema,
  handoffStatus,
  registeredHandoffSchema,
  registerHandoff,
  registerHandoffSchema,
  screenHandoffStatusSchema,
} from "../../shared/handoffs/handoff";
import { enrollmentFailureCodes } from "../../shared/identity/enrollment";
import { SCENARIO_HEADER, scenarioCodes } from "../../shared/identity/scenario";
import { bearerOf } from "../../shared/kernel/authenticate";
import { serviceBaseUrl } from "../../shared/kernel/config";
import { ApiError, type ErrorCode } from "../../shared/kernel/errors";
import { keyMaterialOf } from "../../shared/kernel/keys";
import { jsonObject } from "../../shared/kernel/validation";
import { sha256Hex } from "../../shared/lib/crypto";
import { bootAnswerSchema, sessionEndedSchema } from "../../shared/sessions/answers";
import { cancelSchema, cancelSession, completeSession } from "../../shared/sessions/complete";
import { consumeSchema } from "../../shared/sessions/consume";
import { bootScreen } from "../../shared/sessions/screen";
import { isScreenToken } from "../../shared/sessions/tokens";
import { themeAssetBases } from "../../shared/themes/theme";
import { deliverSoon } from "../../shared/webhooks/run";

type ScreenAuthenticated = { Variables: { screenToken: string; secretHash: string } };
type Booting = { Variables: { secretHash: string } };

/**
 * The screen's limits (per minute, sliding window; docs/decisions.md, D-263):
 * per session secret (the token at boot, the screen credential after), so one session
 * cannot be hammered, and per client IP, so one client cannot flood the endpoints. A person's
 * screen boots once, completes once (a few times after errors) and cancels once; an IP may be a
 * mobile carrier's NAT with thousands of phones behind it, hence its generous figures.
 */
export const screenLimits = {
  bootIp: { name: "hosted-capture-boot-ip", limit: 600, windowSeconds: 60 },
  bootSession: { name: "hosted-capture-boot-session", limit: 10, windowSeconds: 60 },
  completeIp: { name: "hosted-capture-complete-ip", limit: 300, windowSeconds: 60 },
  completeSession: { name: "hosted-capture-complete-session", limit: 10, windowSeconds: 60 },
  cancelIp: { name: "hosted-capture-cancel-ip", limit: 600, windowSeconds: 60 },
  cancelSession: { name: "hosted-capture-cancel-session", limit: 10, windowSeconds: 60 },
  handoffIp: { name: "hosted-capture-handoff-ip", limit: 600, windowSeconds: 60 },
  handoffSession: { name: "hosted-capture-handoff-session", limit: 10, windowSeconds: 60 },
  handoffStatusSession: { name: "hosted-capture-handoff-status-session", limit: 60, windowSeconds: 60 },
} satisfies Record<string, RateLimitRule>;

/** A per-IP limit. */
const perIp = (rule: RateLimitRule) => rateLimit((c) => ({ rule, identifier: `ip:${clientIp(c)}` }));

/** A per-session limit: the secret's SHA-256 names the budget (the limiter never sees a secret). */
const perSession = (rule: RateLimitRule) => rateLimit<AppEnv & Booting>((c) => ({ rule, identifier: `session:${c.var.secretHash}` }));

/** The hash of the session token a boot presents (after its body is read). */
const bootSecret: MiddlewareHandler<AppEnv & Booting & { Variables: { input: { session_token: string } } }> = async function bootSecret(
  c,
  next,
) {
  c.set("secretHash", await sha256Hex(c.var.input.session_token));
  await next();
};

/**
 * The screen credential of `Authorization: Bearer hsc_…`, checked for its form before the body is
 * read (`401 SCREEN_TOKEN_REQUIRED` without one, `401 SCREEN_TOKEN_INVALID` when malformed); the
 * operation's own RPC finds its session.
 */
const screenCredential: MiddlewareHandler<AppEnv & ScreenAuthenticated> = withDoc(
  async function screenCredential(c, next) {
    const token = bearerOf(c.req.header("authorization"));
    if (!token) throw new ApiError("SCREEN_TOKEN_REQUIRED");
    if (!isScreenToken(token)) throw new ApiError("SCREEN_TOKEN_INVALID");
    c.set("screenToken", token);
    c.set("secretHash", await sha256Hex(token));
    await next();
  },
  { answers: ["SCREEN_TOKEN_REQUIRED", "SCREEN_TOKEN_INVALID"] },
);

/** What an ended, expiring or busy session answers to the screen's calls on it. */
const SESSION_STATE_CODES = ["SESSION_ENDED", "COMPLETION_IN_PROGRESS", "SESSION_EXPIRED"] as const satisfies readonly ErrorCode[];

export function mountScreenApi(app: ReturnType<typeof createFunctionApp>) {
  app.post(
    "/boot",
    documented({
      summary: "Boot the screen with the session token",
      success: { status: 200, description: "The session as the screen needs it", schema: bootAnswerSchema },
      answers: ["not_found", "SESSION_ALREADY_CONSUMED", ...SESSION_STATE_CODES],
    }),
    noStore,
    perIp(screenLimits.bootIp),
    input("json", consumeSchema),
    bootSecret,
    perSession(screenLimits.bootSession),
    async (c) => {
      const { config } = c.var;
      const bases = themeAssetBases(config.THEME_ASSETS_BASE_URL, serviceBaseUrl(config, c.req.url));
      const rp = relyingPartyOf(config, c.req.url);
      return c.json(await bootScreen(depsOf(c.var), c.var.input.session_token, bases, rp));
    },
  );

  app.post(
    "/complete",
    documented({
      summary: "Complete the session with the capture",
      success: { status: 200, description: "How the session ended", schema: sessionEndedSchema },
      answers: [
        ...scenarioCodes,
        "CONSENT_REQUIRED",
        ...SESSION_STATE_CODES,
        "CAPTURE_REPLAYED",
        "ENROLLMENT_RACE",
        "FACE_TEMPLATE_REQUIRED",
        ...enrollmentFailureCodes,
        "TEMPLATE_STORE_UNAVAILABLE",
      ],
    }),
    noStore,
    perIp(screenLimits.completeIp),
    screenCredential,
    perSession(screenLimits.completeSession),
    input("json", jsonObject),
    async (c) => {
      const keys = { ...(await keyMaterialOf(c.var)), rp: relyingPartyOf(c.var.config, c.req.url) };
      const { ended, merchantId } = await completeSession(
        depsOf(c.var),
        keys,
        c.var.screenToken,
        c.var.input,
        c.req.header(SCENARIO_HEADER),
      );
      // the return channel (resource API 4.4): the merchant hears of the end as the person lands on its return_url
      afterAnswer(c, "webhooks", deliverSoon([{ merchant_id: merchantId }]));
      return c.json(ended);
    },
  );

  app.post(
    "/cancel",
    documented({
      summary: "Cancel the session",
      success: { status: 200, description: "How the session ended", schema: sessionEndedSchema },
      answers: SESSION_STATE_CODES,
    }),
    noStore,
    perIp(screenLimits.cancelIp),
    screenCredential,
    perSession(screenLimits.cancelSession),
    input("json", cancelSchema),
    async (c) => {
      const { ended, merchantId } = await cancelSession(depsOf(c.var), c.var.screenToken, c.var.input);
      afterAnswer(c, "webhooks", deliverSoon([{ merchant_id: merchantId }]));
      return c.json(ended);
    },
  );

  app.post(
    "/handoff",
    documented({
      summary: "Hand the session off to a phone",
      success: { status: 201, description: "The handoff code, the phone's URL and its QR code", schema: registeredHandoffSchema },
      answers: handoffRegisterCodes,
    }),
    noStore,
    perIp(screenLimits.handoffIp),
    input("json", registerHandoffSchema),
    bootSecret,
    perSession(screenLimits.handoffSession),
    async (c) => {
      const baseUrl = serviceBaseUrl(c.var.config, c.req.url);
      return c.json(await registerHandoff(depsOf(c.var), null, baseUrl, c.var.input), 201);
    },
  );

  app.post(
    "/handoff/status",
    documented({
      summary: "The handoff's state",
      success: { status: 200, description: "The handoff", schema: handoffSchema },
      answers: ["not_found"],
    }),
    noStore,
    perIp(screenLimits.handoffIp),
    input("json", screenHandoffStatusSchema),
    bootSecret,
    perSession(screenLimits.handoffStatusSession),
    async (c) => {
      const { session_token: sessionToken, handoff_id: handoffId } = c.var.input;
      return c.json(await handoffStatus(depsOf(c.var), { sessionToken }, handoffId));
    },
  );
}
