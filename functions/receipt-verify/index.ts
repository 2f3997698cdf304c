/**
 * GET or POST /functions/v1/receipt-verify (public, no key; resource API 4.9 and 5.2): verifies a
 * receipt by `id` or `code` (shared/receipts/verify.ts). GET /functions/v1/receipt-verify/jwks
 * serves the public keys, so anyone can do the same offline. Fair use per IP.
 */
import { createFunctionApp, depsOf } from "../../shared/edge/app";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { clientIp, type RateLimitRule, rateLimit } from "../../shared/edge/rate-limit";
import { signingKeysOf } from "../../shared/kernel/keys";
import {
  publishedKeys,
  publishedKeysSchema,
  receiptLookupSchema,
  receiptVerificationSchema,
  verifyStoredReceipt,
} from "../../shared/receipts/verify";

const app = createFunctionApp("receipt-verify");

/** Generous: a person or an auditor checking receipts by hand never meets it; a scraper does. */
const limits = {
  verify: { name: "receipt-verify-ip", limit: 300, windowSeconds: 60 },
  jwks: { name: "receipt-verify-jwks-ip", limit: 300, windowSeconds: 60 },
} satisfies Record<string, RateLimitRule>;

app.get(
  "/jwks",
  documented({
    summary: "The published signing keys (JWKS)",
    success: { status: 200, description: "The JWKS", schema: publishedKeysSchema },
  }),
  rateLimit((c) => ({ rule: limits.jwks, identifier: clientIp(c) })),
  async (c) => {
    const { jwks } = await signingKeysOf(c.var.config);
    c.header("cache-control", "public, max-age=300");
    return c.json(publishedKeys(jwks));
  },
);

// The body is read before the limit is counted: at most 256 KiB, and a response to an unread body
// costs the client its keep-alive connection in the local runtime.
app.on(
  ["GET", "POST"],
  "/",
  documented({
    summary: "Verify a receipt by id or code",
    success: { status: 200, description: "The verification", schema: receiptVerificationSchema },
    answers: ["not_found"],
  }),
  noStore,
  input("json-or-query", receiptLookupSchema),
  rateLimit((c) => ({ rule: limits.verify, identifier: clientIp(c) })),
  async (c) => {
    const { jwks } = await signingKeysOf(c.var.config);
    return c.json(await verifyStoredReceipt(depsOf(c.var), jwks, c.var.input));
  },
);

export default app;
