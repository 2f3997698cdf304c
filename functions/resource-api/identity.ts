/**
 * /v1/identity (resource API 2.1, 4.1 to 4.3): claims, recognitions and attributes, each an
 * adapter over the identity operations (shared/identity/). Claims and attributes take an
 * Idempotency-Key; recognitions are stateless and need none.
 */
import { Hono } from "hono";
import { attributeSchema, proveAttribute } from "../../shared/identity/attributes";
import { claimPerson, claimSchema } from "../../shared/identity/claims";
import { recognisePerson, recognitionSchema } from "../../shared/identity/recognitions";
import { type AppEnv, depsOf } from "../../shared/platform/app";
import type { Config } from "../../shared/platform/config";
import { serviceBaseUrl } from "../../shared/platform/config";
import type { Sql } from "../../shared/platform/db/client";
import { idempotency } from "../../shared/platform/idempotency";
import { input } from "../../shared/platform/input";
import { requireSecret, signingKeysOf, templatesOf } from "../../shared/platform/keys";
import { documented } from "../../shared/platform/openapi";
import { secretKey } from "./auth";
import { idempotencyScope } from "./idempotency";

/** The templates and the pseudonym secret every identity route needs. */
async function recognitionKeysOf(vars: { config: Config; db(url?: string): Sql }) {
  return { templates: await templatesOf(vars), subjectRefSecret: requireSecret(vars.config, "SUBJECT_REF_SECRET") };
}

export const identity = new Hono<AppEnv>();

identity.post(
  "/claims",
  documented({
    summary: "Claim the live person of a proof for the merchant (enrol, receipt, bill)",
    success: { status: 201, description: "The claim: the facetoken, the receipt and the metadata" },
    answers: [
      "CONSENT_REQUIRED",
      "LIVENESS_REQUIRED",
      "DOCUMENT_REQUIRED",
      "ALREADY_CLAIMED",
      "ALLOWANCE_EXHAUSTED",
      "CAPTURE_REPLAYED",
      "IDENTITY_UNREACHABLE",
      "IDENTITY_CREATE_FAILED",
      "TEMPLATE_STORE_FAILED",
      "SESSION_MINT_FAILED",
      "TEMPLATE_STORE_UNAVAILABLE",
    ],
  }),
  secretKey("claims"),
  idempotency(idempotencyScope),
  input("json", claimSchema),
  async (c) => {
    const { config } = c.var;
    const keys = { ...(await recognitionKeysOf(c.var)), signing: () => signingKeysOf(config) };
    const options = { receiptBaseUrl: serviceBaseUrl(config, c.req.url), storedResponse: c.var.storedResponse };
    c.header("cache-control", "no-store");
    return c.json(await claimPerson(depsOf(c.var), keys, c.var.principal, c.var.input, options), 201);
  },
);

identity.post(
  "/recognitions",
  documented({
    summary: "Recognise the live person of a proof among the merchant's persons (free, writes nothing)",
    answers: ["LIVENESS_REQUIRED", "TEMPLATE_STORE_UNAVAILABLE"],
  }),
  secretKey("recognitions"),
  input("json", recognitionSchema),
  async (c) => {
    c.header("cache-control", "no-store");
    return c.json(await recognisePerson(depsOf(c.var), await recognitionKeysOf(c.var), c.var.principal, c.var.input));
  },
);

identity.post(
  "/attributes",
  documented({
    summary: "Answer one predicate about a person the merchant holds, proven live now",
    answers: [
      "LIVENESS_REQUIRED",
      "IDENTITY_MISMATCH",
      "ACCESS_REVOKED",
      "DOCUMENT_REQUIRED",
      "CAPTURE_REPLAYED",
      "TEMPLATE_STORE_UNAVAILABLE",
    ],
  }),
  secretKey("attributes"),
  idempotency(idempotencyScope),
  input("json", attributeSchema),
  async (c) => {
    const answer = await proveAttribute(depsOf(c.var), await recognitionKeysOf(c.var), c.var.principal, c.var.input, c.var.storedResponse);
    c.header("cache-control", "no-store");
    return c.json(answer);
  },
);
