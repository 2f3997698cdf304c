/**
 * /v1/receipts/{id}/verify (resource API 4.9, 5.2): public and free, no key; fair use per client
 * IP. `{id}` is a receipt's id or its code as a person might type it; the answer is receipt-verify's.
 */
import { Hono } from "hono";
import { type AppEnv, depsOf } from "../../shared/edge/app";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { clientIp, rateLimit } from "../../shared/edge/rate-limit";
import { signingKeysOf } from "../../shared/kernel/keys";
import { canonicalUuid } from "../../shared/lib/uuid";
import { receiptVerificationSchema, verifyStoredReceipt } from "../../shared/receipts/verify";
import { RATE_LIMIT_HEADER_PREFIX, receiptVerifyRule } from "./limits";
import { requestedVersion } from "./version";

export const receipts = new Hono<AppEnv>();

receipts.get(
  "/:id/verify",
  documented({
    summary: "Verify a receipt (public, no key)",
    success: { status: 200, description: "The verification", schema: receiptVerificationSchema },
    answers: ["UNSUPPORTED_VERSION", "INVALID_INPUT", "not_found"],
  }),
  noStore,
  rateLimit((c) => ({ rule: receiptVerifyRule, identifier: clientIp(c) }), { headerPrefix: RATE_LIMIT_HEADER_PREFIX }),
  async (c) => {
    requestedVersion(c);
    const id = c.req.param("id");
    const { jwks } = await signingKeysOf(c.var.config);
    const uuid = canonicalUuid(id);
    return c.json(await verifyStoredReceipt(depsOf(c.var), jwks, uuid ? { id: uuid } : { code: id }));
  },
);
