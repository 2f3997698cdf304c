/**
 * /v1/identity (resource API 2.1, 4.1 to 4.3): claims, recognitions and attributes, each an
 * adapter over the identity operations (shared/identity/). Claims and attributes take an
 * Idempotency-Key; recognitions are stateless and need none.
 */
import { Hono } from "hono";
import { relyingPartyOf } from "../../shared/devices/ceremony";
import { type AppEnv, depsOf } from "../../shared/edge/app";
import { idempotency } from "../../shared/edge/idempotency";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { attributeAnswerSchema, attributeSchema, proveAttribute } from "../../shared/identity/attributes";
import { claimAnswerSchema, claimPerson, claimSchema } from "../../shared/identity/claims";
import { enrollmentFailureCodes } from "../../shared/identity/enrollment";
import { recognisePerson, recognitionAnswerSchema, recognitionSchema } from "../../shared/identity/recognitions";
import { serviceBaseUrl } from "../../shared/kernel/config";
import type { ErrorCode } from "../../shared/kernel/errors";
import { keyMaterialOf } from "../../shared/kernel/keys";
import { secretKey } from "./auth";
import { idempotencyScope } from "./idempotency";

/** What a presence proof can be refused with, on every identity route. */
const PROOF_CODES: ErrorCode[] = ["LIVENESS_REQUIRED", "UNAUTHORIZED_DEVICE", "CAPTURE_REPLAYED", "TEMPLATE_STORE_UNAVAILABLE"];

export const identity = new Hono<AppEnv>();

identity.post(
  "/claims",
  documented({
    summary: "Claim a live person (billed once per person)",
    description:
      "Enrols the live person of the proof with this merchant and answers their facetoken and the act's signed receipt. Billed once per person for life; a person the merchant holds already is 409 already_claimed with the facetoken held. Send an Idempotency-Key: a retry answers the original 201.",
    success: { status: 201, description: "The claim: the person's facetoken and the act's receipt", schema: claimAnswerSchema },
    answers: [
      ...PROOF_CODES,
      "CONSENT_REQUIRED",
      "DOCUMENT_REQUIRED",
      "ALREADY_CLAIMED",
      "IDENTITY_UNREACHABLE",
      "ALLOWANCE_EXHAUSTED",
      ...enrollmentFailureCodes,
    ],
  }),
  noStore,
  secretKey("claims"),
  idempotency(idempotencyScope),
  input("json", claimSchema),
  async (c) => {
    const { config } = c.var;
    const keys = await keyMaterialOf(c.var);
    const rp = relyingPartyOf(config, c.req.url);
    const options = { receiptBaseUrl: serviceBaseUrl(config, c.req.url), storedResponse: c.var.storedResponse, rp };
    return c.json(await claimPerson(depsOf(c.var), keys, c.var.principal, c.var.input, options), 201);
  },
);

identity.post(
  "/recognitions",
  documented({
    summary: "Recognise a live person (free, writes nothing)",
    description:
      "Whether the live person of the proof is one this merchant has claimed, and their facetoken. Free, stateless; the capture stays usable.",
    success: { status: 200, description: "Who the live person is for this merchant, or no one", schema: recognitionAnswerSchema },
    answers: PROOF_CODES,
  }),
  noStore,
  secretKey("recognitions"),
  input("json", recognitionSchema),
  async (c) => {
    const rp = relyingPartyOf(c.var.config, c.req.url);
    return c.json(await recognisePerson(depsOf(c.var), await keyMaterialOf(c.var), c.var.principal, c.var.input, rp));
  },
);

identity.post(
  "/attributes",
  documented({
    summary: "Prove one attribute of a person (for example age_over_18)",
    description:
      "The attribute's truth for the person of facetoken, who must be the live person of the proof: document_verified, age_over_18, age_over_21 (from the verified document's date of birth). An attribute nothing on record can prove is 403 document_required, not false.",
    success: { status: 200, description: "The attribute's truth for the person", schema: attributeAnswerSchema },
    answers: [...PROOF_CODES, "DOCUMENT_REQUIRED", "IDENTITY_MISMATCH", "ACCESS_REVOKED"],
  }),
  noStore,
  secretKey("attributes"),
  idempotency(idempotencyScope),
  input("json", attributeSchema),
  async (c) => {
    const rp = relyingPartyOf(c.var.config, c.req.url);
    const keys = await keyMaterialOf(c.var);
    const answer = await proveAttribute(depsOf(c.var), keys, c.var.principal, c.var.input, c.var.storedResponse, rp);
    return c.json(answer);
  },
);
