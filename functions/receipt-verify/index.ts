/**
 * GET or POST /functions/v1/receipt-verify (public, no key; resource API 4.9 and 5.2): verifies a
 * receipt by `id` or `code` and answers what it attests and nothing personal. It checks the JWS
 * signature against the published keys, recomputes the seal, and, once the receipt is anchored,
 * its inclusion under the anchor's root. GET /functions/v1/receipt-verify/jwks serves the public
 * keys, so anyone can do the same offline. Fair use per IP. Shapes: docs/receipts.md.
 */
import * as v from "valibot";
import { signingKeys } from "../../shared/lib/signing";
import { type AppContext, createFunctionApp } from "../../shared/platform/app";
import { rpc } from "../../shared/platform/db/client";
import { ApiError } from "../../shared/platform/errors";
import { clientIp, enforceRateLimit, type RateLimitRule } from "../../shared/platform/rate-limit";
import { parseWith, readJson } from "../../shared/platform/validation";
import {
  normaliseReceiptCode,
  type ProofStep,
  type ReceiptPayload,
  receiptSeal,
  verifyInclusion,
  verifyReceipt,
} from "../../shared/receipts/receipts";

const app = createFunctionApp("receipt-verify");

/** Generous: a person or an auditor checking receipts by hand never meets it; a scraper does. */
const limits = {
  verify: { name: "receipt-verify-ip", limit: 300, windowSeconds: 60 },
  jwks: { name: "receipt-verify-jwks-ip", limit: 300, windowSeconds: 60 },
} satisfies Record<string, RateLimitRule>;

const lookupSchema = v.object({
  id: v.optional(v.pipe(v.string(), v.uuid())),
  code: v.optional(v.pipe(v.string(), v.maxLength(64))),
});

app.get("/jwks", async (c) => {
  await enforceRateLimit(c, limits.jwks, clientIp(c));
  const { jwks } = await signingKeys(c.var.config);
  c.header("cache-control", "public, max-age=300");
  return c.json({ keys: jwks.keys.map(({ kty, crv, x, kid, alg, use }) => ({ kty, crv, x, kid, alg, use })) });
});

app.get("/", async (c) => verify(c, c.req.query()));
// The body is read before the limit is counted: at most 256 KiB, and a response to an unread body
// costs the client its keep-alive connection in the local runtime.
app.post("/", async (c) => verify(c, await readJson(c)));

interface StoredReceipt {
  id: string;
  code: string;
  environment: "test" | "live";
  jws: string;
  seal: string;
  issued_at: string;
  inclusion_proof: ProofStep[] | null;
  anchor: { id: string; root: string; leaf_count: number; sink: string; sink_reference: string | null; anchored_at: string } | null;
}

async function verify(c: AppContext, raw: unknown) {
  await enforceRateLimit(c, limits.verify, clientIp(c));
  c.header("cache-control", "no-store");
  const input = parseWith(lookupSchema, raw);
  if ((input.id === undefined) === (input.code === undefined)) throw new ApiError("INVALID_INPUT", { fields: ["id", "code"] });
  let lookup: { id: string } | { code: string };
  if (input.id !== undefined) lookup = { id: input.id.toLowerCase() };
  else {
    const code = normaliseReceiptCode(input.code!);
    if (!code) throw new ApiError("INVALID_INPUT", { fields: ["code"] });
    lookup = { code };
  }

  const stored = await rpc<StoredReceipt | null>(c.var.db(), "receipt_get", lookup);
  if (!stored) throw new ApiError("not_found");

  const { jwks } = await signingKeys(c.var.config);
  const checked = await verifyReceipt(stored.jws, jwks);
  // A genuine signature over another receipt's payload proves nothing about this one.
  const payload = checked.payload && bindsTo(checked.payload, stored) ? checked.payload : null;
  const sealValid = (await receiptSeal(stored.jws)) === stored.seal;
  const publicSeal = stored.environment === "live" && stored.anchor ? await anchorSection(stored) : null;
  const valid = payload !== null && sealValid && (publicSeal === null || publicSeal.inclusion_valid);

  return c.json({
    valid,
    receipt_id: stored.id,
    code: stored.code,
    environment: stored.environment,
    ...attested(payload),
    signature: { alg: checked.header?.alg ?? null, kid: checked.header?.kid ?? null, valid: payload !== null },
    immutability_seal: stored.seal,
    seal_valid: sealValid,
    public_seal_status: stored.environment === "test" ? "none" : publicSeal ? "anchored" : "pending",
    public_seal: publicSeal,
    jws: stored.jws,
  });
}

function bindsTo(payload: ReceiptPayload, stored: StoredReceipt): boolean {
  return payload.rid === stored.id && payload.code === stored.code && payload.env === stored.environment;
}

/** The attested facts, only from a verified payload; null fields when the signature does not hold. */
function attested(payload: ReceiptPayload | null) {
  return {
    transaction_id: payload?.transaction_id ?? null,
    merchant_id: payload?.merchant_id ?? null,
    action: payload?.act ?? null,
    issued_at: payload ? new Date(payload.iat * 1000).toISOString() : null,
    assurance_level: payload?.assurance_level ?? null,
    service_hash: payload?.service_hash ?? null,
    amount: payload?.amount_minor !== undefined ? { minor: payload!.amount_minor, currency: payload!.currency } : null,
  };
}

async function anchorSection(stored: StoredReceipt) {
  const anchor = stored.anchor!;
  const proof = stored.inclusion_proof ?? [];
  return {
    anchor_id: anchor.id,
    root: anchor.root,
    leaf_count: anchor.leaf_count,
    sink: anchor.sink,
    sink_reference: anchor.sink_reference,
    anchored_at: new Date(anchor.anchored_at).toISOString(),
    inclusion_proof: proof,
    inclusion_valid: await verifyInclusion(stored.seal, proof, anchor.root),
  };
}

export default app;
