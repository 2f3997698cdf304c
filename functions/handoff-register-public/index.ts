/**
 * /functions/v1/handoff-register-public (spec section 5): a hosted session begun on one device,
 * finished on another (shared/handoffs/handoff.ts).
 * - `POST /` (publishable or secret key) `{session_token, ttl_seconds?}`: registers a single-use
 *   handoff code for the merchant's unopened session; 201 with the code, the phone's URL and its QR code;
 * - `GET /status?handoff_id=` (the same keys): the handoff's state and its session's;
 * - `POST /claim` (no key: the code is the credential) `{handoff_code}`: the session token, once.
 * Every answer is `cache-control: no-store`.
 */

import { type AppEnv, createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuth, type KeyAuthenticated } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { clientIp, rateLimit, tenantBudget } from "../../shared/edge/rate-limit";
import {
  claimedHandoffSchema,
  claimHandoff,
  claimHandoffSchema,
  handoffRegisterCodes,
  handoffSchema,
  handoffStatus,
  handoffStatusSchema,
  registeredHandoffSchema,
  registerHandoff,
  registerHandoffSchema,
} from "../../shared/handoffs/handoff";
import { serviceBaseUrl } from "../../shared/kernel/config";

const limits = {
  register: { name: "handoff-register", limit: 60, windowSeconds: 60 },
  status: { name: "handoff-status", limit: 600, windowSeconds: 60 },
  // generous: a mobile carrier's NAT puts many phones behind one address; a code is 256 bits, never guessed
  claim: { name: "handoff-claim-ip", limit: 300, windowSeconds: 60 },
};

const app = createFunctionApp("handoff-register-public");

app.use(noStore);

app.post(
  "/",
  documented({
    summary: "Register a handoff to a phone",
    success: { status: 201, description: "The handoff code, the phone's URL and its QR code", schema: registeredHandoffSchema },
    answers: handoffRegisterCodes,
  }),
  apiKeyAuth("publishable"),
  rateLimit<AppEnv & KeyAuthenticated>((c) => ({ rule: limits.register, identifier: tenantBudget(c.var.principal) })),
  input("json", registerHandoffSchema),
  async (c) => {
    const baseUrl = serviceBaseUrl(c.var.config, c.req.url);
    return c.json(await registerHandoff(depsOf(c.var), c.var.principal, baseUrl, c.var.input), 201);
  },
);

app.get(
  "/status",
  documented({
    summary: "A handoff's state",
    success: { status: 200, description: "The handoff", schema: handoffSchema },
    answers: ["not_found"],
  }),
  apiKeyAuth("publishable"),
  rateLimit<AppEnv & KeyAuthenticated>((c) => ({ rule: limits.status, identifier: tenantBudget(c.var.principal) })),
  input("query", handoffStatusSchema),
  async (c) => c.json(await handoffStatus(depsOf(c.var), c.var.principal, c.var.input.handoff_id)),
);

app.post(
  "/claim",
  documented({
    summary: "Claim a handoff code on the phone",
    success: { status: 200, description: "The session token and the handoff", schema: claimedHandoffSchema },
    answers: ["HANDOFF_CODE_INVALID", "SESSION_ALREADY_CONSUMED", "SESSION_EXPIRED"],
  }),
  rateLimit<AppEnv>((c) => ({ rule: limits.claim, identifier: clientIp(c) })),
  input("json", claimHandoffSchema),
  async (c) => c.json(await claimHandoff(depsOf(c.var), c.var.input)),
);

export default app;
