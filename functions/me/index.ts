/**
 * /functions/v1/me: the person's own page on the service's origin (docs/decisions.md, D-465 to
 * D-467). The person signs in by proving presence (shared/persons/session.ts), holds a short session
 * in a `__Host-` cookie, and sees and revokes what they authorised at every merchant. Every route
 * refuses a request from another site; every state-changing one also needs the session's CSRF token.
 */
import type { Context, MiddlewareHandler } from "hono";
import * as v from "valibot";
import { firstPartyRelyingParty } from "../../shared/devices/ceremony";
import {
  deviceListSchema,
  renameDeviceSchema,
  renamedDeviceSchema,
  revokeDeviceSchema,
  revokedDeviceSchema,
} from "../../shared/devices/devices";
import { afterAnswer } from "../../shared/edge/after-answer";
import { type AppEnv, createFunctionApp, depsOf } from "../../shared/edge/app";
import { cookieOf, csrfGuard, newBrowserSecret, sameOrigin, sessionCookies, setHostCookie } from "../../shared/edge/cookie-session";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented, withDoc } from "../../shared/edge/openapi";
import { clientAddressBudget, type RateLimitRule, rateLimit } from "../../shared/edge/rate-limit";
import { serviceBaseUrl } from "../../shared/kernel/config";
import { ApiError } from "../../shared/kernel/errors";
import { jsonObject } from "../../shared/kernel/validation";
import { canonicalUuid } from "../../shared/lib/uuid";
import {
  consentLedgerSchema,
  erasedSchema,
  exportCreatedSchema,
  exportFileSchema,
  passkeyOptionsAnswerSchema,
  personDisclosuresSchema,
  personMandatesSchema,
  personMerchantsSchema,
  personReceiptsSchema,
  personSessionSchema,
  revokedSchema,
  signedInSchema,
  signedOutSchema,
  signInStartedSchema,
  withdrawnSchema,
} from "../../shared/persons/answers";
import {
  listPersonMerchants,
  personDeliveryScope,
  readConsentLedger,
  withdrawConsent,
  withdrawSchema,
} from "../../shared/persons/consents";
import { listPersonDevices, renamePersonDevice, revokePersonDevice } from "../../shared/persons/devices";
import { erasePerson, eraseSchema, presenceSchema, startPresenceProof } from "../../shared/persons/erasure";
import { createExport, takeExport } from "../../shared/persons/export";
import { listPersonMandates, revokePersonMandates, revokeSchema } from "../../shared/persons/mandates";
import { passkeyOptionsSchema, passkeySignInSchema, startPasskeyOptions, startPasskeySignIn } from "../../shared/persons/passkey";
import { listPersonDisclosures, listPersonReceipts } from "../../shared/persons/records";
import {
  authenticatePersonSession,
  endPersonSession,
  finishPersonSignIn,
  PERSON_SESSION_TTL_SECONDS,
  type PersonSession,
  SIGN_IN_SCREEN_TTL_SECONDS,
  sessionAnswer,
  startPersonSignIn,
} from "../../shared/persons/session";
import { deliverSoon } from "../../shared/webhooks/run";
import { mountPage } from "./page";

/** The browser's sign-in secret and the person's session (D-466): host-only, never sent cross-site, never read by a script. */
const cookies = sessionCookies("me");

/**
 * Rate limits (D-466, D-600): per client address (an IPv6 client by its /64) for the sign-in's
 * start; the finish per sign-in (the page asks 40 times a minute while the screen is open, so
 * persons behind one address do not spend each other's budget), with a wider per-address guard;
 * per session for everything after it.
 */
export const meLimits = {
  signInIp: { name: "me-sign-in-ip", limit: 10, windowSeconds: 600 },
  finishSignIn: { name: "me-sign-in-finish", limit: 60, windowSeconds: 60 },
  finishIp: { name: "me-sign-in-finish-ip", limit: 600, windowSeconds: 60 },
  passkeyIp: { name: "me-passkey-ip", limit: 30, windowSeconds: 600 },
  session: { name: "me-session", limit: 120, windowSeconds: 60 },
} as const satisfies Record<string, RateLimitRule>;

type Signed = { Variables: { person: PersonSession } };

/** The person's session from its cookie (its idle timeout moved on), then its per-session limit. */
const personSession: MiddlewareHandler<AppEnv & Signed> = withDoc(
  async function personSession(c, next) {
    c.set("person", await authenticatePersonSession(depsOf(c.var), cookieOf(c, cookies.session)));
    await next();
  },
  { answers: ["PERSON_SESSION_REQUIRED", "PERSON_SESSION_EXPIRED"] },
);

/** The service's own relying party: the RP ID of every passkey the hosted screen registered. */
const relyingPartyOf = (c: { var: AppEnv["Variables"]; req: { url: string } }) =>
  firstPartyRelyingParty(serviceBaseUrl(c.var.config, c.req.url));

const perSession = rateLimit<AppEnv & Signed>((c) => ({ rule: meLimits.session, identifier: `person:${c.var.person.sessionId}` }));
const perIp = (rule: RateLimitRule) => rateLimit((c) => ({ rule, identifier: clientAddressBudget(c) }));

/** Every state-changing request carries the session's CSRF token in `x-csrf-token`. */
const csrf = csrfGuard<AppEnv & Signed>((c) => c.var.person);

const signInSchema = v.pipe(
  jsonObject,
  v.strictObject({
    merchant_id: v.pipe(v.string(), v.maxLength(64)),
    environment: v.picklist(["test", "live"]),
  }),
);
const finishSchema = v.pipe(jsonObject, v.strictObject({ session_id: v.pipe(v.string(), v.maxLength(64)) }));

const app = createFunctionApp("me");
mountPage(app);
app.use(noStore);

app.post(
  "/sign-in",
  documented({
    summary: "Start signing in: a capture screen to prove presence on",
    success: { status: 201, description: "The capture screen, bound to this browser by a cookie", schema: signInStartedSchema },
    answers: ["not_found"],
  }),
  sameOrigin,
  perIp(meLimits.signInIp),
  input("json", signInSchema),
  async (c) => {
    const merchantId = canonicalUuid(c.var.input.merchant_id);
    if (!merchantId) throw new ApiError("not_found");
    const browserSecret = newBrowserSecret();
    const tenant = { merchantId, environment: c.var.input.environment };
    const started = await startPersonSignIn(depsOf(c.var), tenant, browserSecret, serviceBaseUrl(c.var.config, c.req.url));
    setHostCookie(c, cookies.signIn, browserSecret, SIGN_IN_SCREEN_TTL_SECONDS * 3);
    return c.json(started, 201);
  },
);

app.post(
  "/passkey/options",
  documented({
    summary: "Start a passkey sign-in: the options of navigator.credentials.get, with a challenge for this browser",
    success: { status: 200, description: "The options, bound to this browser by a cookie", schema: passkeyOptionsAnswerSchema },
  }),
  sameOrigin,
  perIp(meLimits.signInIp),
  input("json", passkeyOptionsSchema),
  async (c) => {
    const browserSecret = newBrowserSecret();
    const started = await startPasskeyOptions(depsOf(c.var), c.var.input.environment, browserSecret, relyingPartyOf(c));
    setHostCookie(c, cookies.signIn, browserSecret, SIGN_IN_SCREEN_TTL_SECONDS * 3);
    return c.json(started);
  },
);

app.post(
  "/passkey/sign-in",
  documented({
    summary: "Sign in with a passkey: the assertion names the person, a capture screen for them alone confirms the face",
    success: { status: 201, description: "The capture screen; the finish is the same as the link's", schema: signInStartedSchema },
    answers: ["UNAUTHORIZED_DEVICE", "SIGN_IN_FAILED"],
  }),
  sameOrigin,
  perIp(meLimits.passkeyIp),
  input("json", passkeySignInSchema),
  async (c) => {
    const baseUrl = serviceBaseUrl(c.var.config, c.req.url);
    const started = await startPasskeySignIn(depsOf(c.var), c.var.input, cookieOf(c, cookies.signIn) ?? "", relyingPartyOf(c), baseUrl);
    return c.json(started, 201);
  },
);

app.post(
  "/sign-in/finish",
  documented({
    summary: "Finish signing in once the screen identified the person",
    success: { status: 200, description: "Signed in: the session's cookie is set", schema: signedInSchema },
    answers: ["SIGN_IN_PENDING", "SIGN_IN_FAILED"],
  }),
  sameOrigin,
  perIp(meLimits.finishIp),
  input("json", finishSchema),
  rateLimit<AppEnv & { Variables: { input: v.InferOutput<typeof finishSchema> } }>((c) => ({
    rule: meLimits.finishSignIn,
    identifier: `sign-in:${c.var.input.session_id}`,
  })),
  async (c: Context<AppEnv & { Variables: { input: v.InferOutput<typeof finishSchema> } }>) => {
    const signedIn = await finishPersonSignIn(depsOf(c.var), c.var.input.session_id, cookieOf(c, cookies.signIn) ?? "");
    setHostCookie(c, cookies.session, signedIn.token, PERSON_SESSION_TTL_SECONDS);
    setHostCookie(c, cookies.signIn, "", 0);
    return c.json(signedIn.answer);
  },
);

app.get(
  "/session",
  documented({
    summary: "The session: its environment and its ends",
    success: { status: 200, description: "Signed in", schema: personSessionSchema },
  }),
  sameOrigin,
  personSession,
  perSession,
  (c) => c.json(sessionAnswer(c.var.person)),
);

app.post(
  "/sign-out",
  documented({ summary: "Sign out", success: { status: 200, description: "Signed out", schema: signedOutSchema } }),
  sameOrigin,
  personSession,
  csrf,
  async (c) => {
    const ended = await endPersonSession(depsOf(c.var), c.var.person);
    setHostCookie(c, cookies.session, "", 0);
    return c.json(ended);
  },
);

app.get(
  "/mandates",
  documented({
    summary: "Every mandate the person granted, at every merchant",
    success: { status: 200, description: "The mandates", schema: personMandatesSchema },
  }),
  sameOrigin,
  personSession,
  perSession,
  async (c) => c.json(await listPersonMandates(depsOf(c.var), c.var.person)),
);

app.post(
  "/mandates/revoke",
  documented({
    summary: "Revoke one mandate, or every standing mandate of one agent at one merchant",
    success: { status: 200, description: "Revoked", schema: revokedSchema },
    answers: ["not_found"],
  }),
  sameOrigin,
  personSession,
  perSession,
  csrf,
  input("json", revokeSchema),
  async (c) => {
    const revoked = await revokePersonMandates(depsOf(c.var), c.var.person, c.var.input);
    afterAnswer(
      c,
      "webhooks",
      deliverSoon((sql) => personDeliveryScope(sql, c.var.person)),
    );
    return c.json(revoked);
  },
);

app.get(
  "/merchants",
  documented({
    summary: "The merchants that hold the person, with the consents given each",
    success: { status: 200, description: "The merchants", schema: personMerchantsSchema },
  }),
  sameOrigin,
  personSession,
  perSession,
  async (c) => c.json(await listPersonMerchants(depsOf(c.var), c.var.person)),
);

app.get(
  "/consent-ledger",
  documented({
    summary: "The person's consent ledger, readable, with its hash chain checked",
    success: { status: 200, description: "The ledger", schema: consentLedgerSchema },
  }),
  sameOrigin,
  personSession,
  perSession,
  async (c) => c.json(await readConsentLedger(depsOf(c.var), c.var.person)),
);

app.post(
  "/consents/withdraw",
  documented({
    summary: "Withdraw consent at one merchant (revoke-consent's effect)",
    success: { status: 200, description: "Withdrawn", schema: withdrawnSchema },
    answers: ["not_found"],
  }),
  sameOrigin,
  personSession,
  perSession,
  csrf,
  input("json", withdrawSchema),
  async (c) => {
    const withdrawn = await withdrawConsent(depsOf(c.var), c.var.person, c.var.input);
    afterAnswer(
      c,
      "webhooks",
      deliverSoon((sql) => personDeliveryScope(sql, c.var.person)),
    );
    return c.json(withdrawn);
  },
);

app.get(
  "/disclosures",
  documented({
    summary: "What each merchant received about the person (claims by key, never a value)",
    success: { status: 200, description: "The disclosures", schema: personDisclosuresSchema },
  }),
  sameOrigin,
  personSession,
  perSession,
  async (c) => c.json(await listPersonDisclosures(depsOf(c.var), c.var.person)),
);

app.get(
  "/receipts",
  documented({
    summary: "The person's own acts, approved with their receipt and refused",
    success: { status: 200, description: "The acts", schema: personReceiptsSchema },
  }),
  sameOrigin,
  personSession,
  perSession,
  async (c) => c.json(await listPersonReceipts(depsOf(c.var), c.var.person, serviceBaseUrl(c.var.config, c.req.url))),
);

app.get(
  "/devices",
  documented({
    summary: "The person's devices (passkeys), newest first, revoked ones included",
    success: { status: 200, description: "The devices", schema: deviceListSchema },
  }),
  sameOrigin,
  personSession,
  perSession,
  async (c) => c.json(await listPersonDevices(depsOf(c.var), c.var.person)),
);

app.post(
  "/devices/revoke",
  documented({
    summary: "Revoke one of the person's devices (device.revoked to the merchants)",
    success: { status: 200, description: "Revoked, or already so", schema: revokedDeviceSchema },
    answers: ["not_found"],
  }),
  sameOrigin,
  personSession,
  perSession,
  csrf,
  input("json", revokeDeviceSchema),
  async (c) => {
    const revoked = await revokePersonDevice(depsOf(c.var), c.var.person, c.var.input);
    afterAnswer(
      c,
      "webhooks",
      deliverSoon((sql) => personDeliveryScope(sql, c.var.person)),
    );
    return c.json(revoked);
  },
);

app.post(
  "/devices/rename",
  documented({
    summary: "Name one of the person's devices",
    success: { status: 200, description: "Renamed", schema: renamedDeviceSchema },
    answers: ["not_found"],
  }),
  sameOrigin,
  personSession,
  perSession,
  csrf,
  input("json", renameDeviceSchema),
  async (c) => c.json(await renamePersonDevice(depsOf(c.var), c.var.person, c.var.input)),
);

app.post(
  "/exports",
  documented({
    summary: "Generate the export of everything held about the person",
    success: { status: 201, description: "Generated: download it once, before it expires", schema: exportCreatedSchema },
  }),
  sameOrigin,
  personSession,
  perSession,
  csrf,
  async (c) => c.json(await createExport(depsOf(c.var), c.var.person), 201),
);

app.get(
  "/exports/:id",
  documented({
    summary: "Download the export file, once",
    success: { status: 200, description: "The export file (an attachment)", schema: exportFileSchema },
    answers: ["not_found"],
  }),
  sameOrigin,
  personSession,
  perSession,
  async (c) => {
    const content = await takeExport(depsOf(c.var), c.var.person, c.req.param("id") ?? "");
    c.header("content-disposition", 'attachment; filename="my-data.json"');
    return c.json(content);
  },
);

app.post(
  "/presence",
  documented({
    summary: "Open a capture screen to confirm an erasure by proving presence again",
    success: { status: 201, description: "The capture screen, bound to this session", schema: signInStartedSchema },
    answers: ["not_found"],
  }),
  sameOrigin,
  personSession,
  perSession,
  csrf,
  input("json", presenceSchema),
  async (c) => c.json(await startPresenceProof(depsOf(c.var), c.var.person, c.var.input, serviceBaseUrl(c.var.config, c.req.url)), 201),
);

app.post(
  "/erase",
  documented({
    summary: "Erase the person at one merchant or at every merchant (irreversible)",
    success: { status: 200, description: "Erased", schema: erasedSchema },
    answers: ["not_found", "PRESENCE_PROOF_INVALID"],
  }),
  sameOrigin,
  personSession,
  perSession,
  csrf,
  input("json", eraseSchema),
  async (c) => {
    // read before the erasure ends them: the merchants it tells
    const told = await personDeliveryScope(c.var.db(), c.var.person);
    const erased = await erasePerson(depsOf(c.var), c.var.person, c.var.input);
    afterAnswer(c, "webhooks", deliverSoon(told));
    if (erased.identity_erased) setHostCookie(c, cookies.session, "", 0);
    return c.json(erased);
  },
);

export default app;
