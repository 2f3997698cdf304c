/**
 * POST /functions/v1/process-biovital-transaction (spec 4.4): the authorisation sink
 * (shared/transactions/transact.ts). Server key or first-party user JWT; replay guard; optional
 * Idempotency-Key, also with a mandate (an exact retry is replayed before its nonce is claimed, and the act stores its
 * answer in its own transaction); rate limited per merchant and environment; circuit breaker per merchant.
 * A mandate standing in is one round trip when this isolate knows the caller (./stand-in.ts, D-740).
 */

import { relyingPartyOf } from "../../shared/devices/ceremony";
import { type AppEnv, createFunctionApp, depsOf } from "../../shared/edge/app";
import { type Authenticated, secretKeyOrUserAuth } from "../../shared/edge/auth";
import { circuitBreaker } from "../../shared/edge/circuit-breaker";
import { idempotency, idempotencyKeyOf } from "../../shared/edge/idempotency";
import { input } from "../../shared/edge/input";
import { documented } from "../../shared/edge/openapi";
import { type RateLimitRule, rateLimit, tenantBudget } from "../../shared/edge/rate-limit";
import { transactionOutcomeSchema } from "../../shared/identity/answers";
import { forcedScenario, SCENARIO_HEADER, scenarioCodes } from "../../shared/identity/scenario";
import { keyMaterialOf } from "../../shared/kernel/keys";
import { issueRuleCodes } from "../../shared/mandates/issue";
import { transactionSchema } from "../../shared/transactions/input";
import { transact } from "../../shared/transactions/transact";
import { standInInOneCall } from "./stand-in";

const NAME = "process-biovital-transaction";
/** Per merchant and environment, counted before the breaker and the body (docs/decisions.md, D-074). */
const TRANSACTION_LIMIT: RateLimitRule = { name: NAME, limit: 1200, windowSeconds: 60 };

const app = createFunctionApp(NAME);

app.post(
  "/",
  documented({
    summary: "Record an act of a live person: identify, judge and sign a receipt",
    description: "With mandate_id, a mandate's refusal is 200 with success false, allowed false and a reason (spec 7.2).",
    success: { status: 200, description: "Approved with its receipt, or a mandate's refusal", schema: transactionOutcomeSchema },
    answers: [
      ...scenarioCodes,
      // A grant's terms (`grant`) are judged by mandate-issue's rules, with their codes.
      ...issueRuleCodes,
      "IDENTITY_MISMATCH",
      "FACE_MATCH_BELOW_THRESHOLD",
      "BIOMETRIC_LIVENESS_FAILED",
      "COERCION_DETECTED",
      "DOCUMENT_REQUIRED",
      "UNAUTHORIZED_DEVICE",
      "ACCESS_REVOKED",
      "CAPTURE_REPLAYED",
    ],
  }),
  standInInOneCall(NAME, TRANSACTION_LIMIT),
  secretKeyOrUserAuth({ replay: "idempotent", breaker: NAME }),
  rateLimit<AppEnv & Authenticated>((c) => ({ rule: TRANSACTION_LIMIT, identifier: tenantBudget(c.var.principal) })),
  circuitBreaker(NAME),
  idempotency(NAME),
  input("json", transactionSchema),
  async (c) => {
    const { principal } = c.var;
    const scenario = forcedScenario(c.req.header(SCENARIO_HEADER), principal.environment);
    const keys = await keyMaterialOf(c.var);
    const idempotencyKey = idempotencyKeyOf(c.req.raw.headers) ?? undefined;
    // Authentication (or the response store) claimed it before the act: the stand-in's key without an Idempotency-Key (D-426).
    const replayNonce = c.req.header("x-service-nonce");
    const storedResponse = c.var.storedResponse;
    const device = { assertion: c.var.input.device_assertion, rp: relyingPartyOf(c.var.config, c.req.url) };
    const options = { scenario, idempotencyKey, replayNonce, storedResponse, device };
    c.header("content-language", c.var.locale);
    return c.json(await transact(depsOf(c.var), keys, principal, c.var.input, options));
  },
);

export default app;
