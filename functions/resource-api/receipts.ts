/**
 * /v1/receipts: the environment's receipts as a read view for support (a key with api or
 * management.read), and /v1/receipts/{id}/verify (resource API 4.9, 5.2): public and free, no key;
 * fair use per client IP. `{id}` is a receipt's id or its code as a person might type it; the answer
 * is receipt-verify's.
 */
import { Hono } from "hono";
import { type AppEnv, depsOf } from "../../shared/edge/app";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { clientIp, rateLimit } from "../../shared/edge/rate-limit";
import { signingKeysOf } from "../../shared/kernel/keys";
import { canonicalUuid } from "../../shared/lib/uuid";
import { pageReceipts, receiptPageQuerySchema, receiptPageSchema } from "../../shared/management/read-views";
import { receiptVerificationSchema, verifyStoredReceipt } from "../../shared/receipts/verify";
import { keyPolicy, supportReads } from "./auth";
import { RATE_LIMIT_HEADER_PREFIX, receiptVerifyRule } from "./limits";
import { requestedVersion } from "./version";

export const receipts = new Hono<AppEnv>();

receipts.get(
  "/",
  documented({
    summary: "List receipts, newest first",
    description:
      "The environment's receipts with their acts. Filter by facetoken, action and code; limit 1 to 100 (25). A key with api or management.read (support).",
    success: { status: 200, description: "A page of receipts", schema: receiptPageSchema },
  }),
  noStore,
  keyPolicy("reads", supportReads),
  input("query", receiptPageQuerySchema),
  async (c) => c.json(await pageReceipts(depsOf(c.var), c.var.principal, c.var.input)),
);

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
