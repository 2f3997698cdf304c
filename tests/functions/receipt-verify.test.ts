import { createHash, randomUUID } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { rpc } from "../../shared/kernel/db/rpc";
import { randomHex } from "../../shared/lib/crypto";
import { importSigningKeys } from "../../shared/lib/signing";
import { type AnchorSink, anchorPendingReceipts, LocalAnchorSink } from "../../shared/receipts/anchor";
import { verifyInclusion } from "../../shared/receipts/merkle";
import { type AssuranceLevel, buildReceipt, newReceiptCode, type ReceiptAction, verifyReceipt } from "../../shared/receipts/signed-receipt";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf, freshIp } from "../harness/http";

const FN = "receipt-verify";

/** The service's own keys: receipts seeded here are signed exactly as the transaction sink signs them. */
const keys = await importSigningKeys(inject("signingKeysJwk"));

const RESPONSE_KEYS = [
  "action",
  "amount",
  "assurance_level",
  "code",
  "environment",
  "immutability_seal",
  "issued_at",
  "jws",
  "mandate",
  "merchant_id",
  "public_seal",
  "public_seal_status",
  "receipt_id",
  "seal_valid",
  "service_hash",
  "signature",
  "transaction_id",
  "valid",
].sort();
const PUBLIC_SEAL_KEYS = [
  "anchor_id",
  "anchored_at",
  "confirmed_at",
  "inclusion_proof",
  "inclusion_valid",
  "leaf_count",
  "root",
  "sink",
  "sink_reference",
].sort();
const PERSONAL =
  /identity|subject|user_id|face|voice_|template|embedding|nonce|liveness|coercion|similarity|baseline|document|consent|session/i;

/**
 * Receipts are issued at a test-clock instant far in the future, so the server's own minute cron
 * (which anchors at the real time) never takes them: a test decides when its receipts are anchored
 * by running the worker's pass itself with a clock at or after that instant.
 */
const FUTURE = Date.parse("2099-01-01T00:00:00Z");
function futureInstant(): Date {
  return new Date(FUTURE + Math.floor(Math.random() * 86_400_000) * 1000);
}

interface SeedOptions {
  environment?: "test" | "live";
  action?: ReceiptAction;
  assuranceLevel?: AssuranceLevel;
  amountMinor?: number;
  currency?: string;
  issuedAt?: Date;
}

/** A merchant, an identity, and one capture with its signed receipt, written by capture_record as the transaction sink will. */
async function seedReceipt({
  environment = "live",
  action = "ACTION_PAYMENT",
  assuranceLevel = "face_voice_doc",
  amountMinor,
  currency,
  issuedAt = futureInstant(),
}: SeedOptions = {}) {
  const sql = testDb();
  const merchant = await merchantFactory();
  const [identity] = await sql`insert into private.identities (environment, created_at) values (${environment}, ${issuedAt}) returning id`;
  const captureId = randomUUID();
  const receiptId = randomUUID();
  const code = newReceiptCode();
  const serviceHash = `order-${randomHex(6)}`;
  const money = action === "ACTION_PAYMENT" ? { amountMinor: amountMinor ?? 1299, currency: currency ?? "EUR" } : {};
  const built = await buildReceipt(keys, {
    receiptId,
    code,
    captureId,
    merchantId: merchant.merchant_id,
    environment,
    action,
    assuranceLevel,
    serviceHash,
    issuedAt,
    ...money,
  });
  await rpc(sql, "capture_record", {
    capture: {
      id: captureId,
      merchant_id: merchant.merchant_id,
      environment,
      identity_id: identity.id,
      action,
      service_hash: serviceHash,
      amount_minor: money.amountMinor ?? null,
      currency: money.currency ?? null,
      capture_nonce: `nonce-${randomHex(12)}`,
      liveness_passed: true,
      coercion_signal: false,
      assurance_level: assuranceLevel,
      face_similarity: 0.93,
      engine_version: "test",
      created_at: issuedAt.toISOString(),
    },
    receipt: { id: receiptId, code, jws: built.jws, seal: built.seal },
  });
  return { merchant, identityId: identity.id as string, captureId, receiptId, code, serviceHash, issuedAt, ...built };
}

type Seeded = Awaited<ReturnType<typeof seedReceipt>>;

/** One anchoring pass through the worker's own code path, at `now`. */
function anchorAt(now: Date, sink: AnchorSink = new LocalAnchorSink()) {
  return anchorPendingReceipts(testDb(), sink, now);
}

/** A Postgres array literal: the test client fetches no types, so it cannot serialise JS arrays itself. */
function uuidArray(ids: string[]): string {
  return `{${ids.join(",")}}`;
}

function verify(query: Record<string, string>, headers: Record<string, string> = {}) {
  return call(FN, { query, headers, from: freshIp() });
}

/** Every key and string anywhere in a response, for the "nothing personal" assertion. */
function everything(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(everything);
  if (value && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => [k, ...everything(v)]);
  return typeof value === "string" ? [value] : [];
}

function expectNothingPersonal(body: unknown, seeded: Seeded) {
  const all = everything(body);
  // Digests (the seal, the root, the proof's siblings) and ids (uuids) are hex, which can spell "face"
  // by chance (an anchor id ending in …aeface8ff046 did); the identity's own id is checked below.
  const named = all.filter((item) => !/^[0-9a-f]{64}$/.test(item) && !/^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/.test(item));
  expect(named.filter((item) => PERSONAL.test(item) && !item.startsWith("face_voice"))).toEqual([]);
  expect(JSON.stringify(body)).not.toContain(seeded.identityId);
  const payload = JSON.parse(Buffer.from(seeded.jws.split(".")[1], "base64url").toString());
  expect(JSON.stringify(payload)).not.toContain(seeded.identityId);
}

describe("receipt-verify", () => {
  describe("happy", () => {
    it("verifies a live payment receipt by id, answering what it attests", async () => {
      const seeded = await seedReceipt();
      const res = await verify({ id: seeded.receiptId });
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(Object.keys(res.body).sort()).toEqual(RESPONSE_KEYS);
      const { kid } = JSON.parse(Buffer.from(seeded.jws.split(".")[0], "base64url").toString());
      expect(res.body).toEqual({
        valid: true,
        receipt_id: seeded.receiptId,
        code: seeded.code,
        environment: "live",
        transaction_id: seeded.captureId,
        merchant_id: seeded.merchant.merchant_id,
        action: "ACTION_PAYMENT",
        issued_at: new Date(Math.floor(seeded.issuedAt.getTime() / 1000) * 1000).toISOString(),
        assurance_level: "face_voice_doc",
        service_hash: seeded.serviceHash,
        amount: { minor: 1299, currency: "EUR" },
        mandate: null,
        signature: { alg: "EdDSA", kid, valid: true },
        immutability_seal: seeded.seal,
        seal_valid: true,
        public_seal_status: "pending",
        public_seal: null,
        jws: seeded.jws,
      });
      expectNothingPersonal(res.body, seeded);
    });

    it("verifies by code, as typed by a person, and by POST", async () => {
      const seeded = await seedReceipt({ action: "ACTION_LOGIN", assuranceLevel: "face_voice" });
      for (const code of [seeded.code, seeded.code.toLowerCase(), seeded.code.replace(/-/g, " "), seeded.code.slice(5)]) {
        const res = await verify({ code });
        expect(res.status, code).toBe(200);
        expect(res.body).toMatchObject({
          valid: true,
          receipt_id: seeded.receiptId,
          code: seeded.code,
          action: "ACTION_LOGIN",
          amount: null,
        });
      }
      const posted = await call(FN, { body: { code: seeded.code }, from: freshIp() });
      expect(posted.status).toBe(200);
      expect(posted.body.receipt_id).toBe(seeded.receiptId);
      const byId = await call(FN, { body: { id: seeded.receiptId.toUpperCase() }, from: freshIp() });
      expect(byId.body).toMatchObject({ valid: true, receipt_id: seeded.receiptId });
    });

    it("gives a sandbox receipt no public seal, ever", async () => {
      const seeded = await seedReceipt({ environment: "test" });
      const before = await verify({ id: seeded.receiptId });
      expect(before.body).toMatchObject({ valid: true, environment: "test", public_seal_status: "none", public_seal: null });

      await anchorAt(new Date(seeded.issuedAt.getTime() + 60_000));
      const after = await verify({ id: seeded.receiptId });
      expect(after.body).toMatchObject({ valid: true, environment: "test", public_seal_status: "none", public_seal: null });
      const [row] = await testDb()`select anchor_id, inclusion_proof from private.receipts where id = ${seeded.receiptId}`;
      expect(row).toEqual({ anchor_id: null, inclusion_proof: null });
    });

    it("anchors live receipts: pending before the pass, inclusion verified after it", async () => {
      const issuedAt = futureInstant();
      const batch = await Promise.all([0, 1, 2, 3, 4].map((i) => seedReceipt({ issuedAt: new Date(issuedAt.getTime() + i) })));
      for (const seeded of batch) {
        expect((await verify({ id: seeded.receiptId })).body).toMatchObject({
          valid: true,
          public_seal_status: "pending",
          public_seal: null,
        });
      }
      // A pass at a clock before the receipts were issued leaves them alone.
      await anchorAt(new Date(issuedAt.getTime() - 1000));
      expect((await verify({ id: batch[0].receiptId })).body.public_seal_status).toBe("pending");

      const anchoredAt = new Date(issuedAt.getTime() + 60_000);
      const pass = await anchorAt(anchoredAt);
      expect(pass.anchors.length).toBeGreaterThan(0);

      const roots = new Set<string>();
      for (const seeded of batch) {
        const res = await verify({ id: seeded.receiptId });
        expect(res.status).toBe(200);
        expect(res.body.valid).toBe(true);
        expect(res.body.public_seal_status).toBe("anchored");
        expect(Object.keys(res.body.public_seal).sort()).toEqual(PUBLIC_SEAL_KEYS);
        const seal = res.body.public_seal;
        expect(seal).toMatchObject({
          sink: "local",
          sink_reference: null,
          anchored_at: anchoredAt.toISOString(),
          confirmed_at: anchoredAt.toISOString(),
          inclusion_valid: true,
        });
        expect(pass.anchors.map((a) => a.anchor_id)).toContain(seal.anchor_id);
        // Offline: the seal is SHA-256 of the JWS, and it folds into the root with the proof given.
        expect(createHash("sha256").update(res.body.jws).digest("hex")).toBe(res.body.immutability_seal);
        expect(await verifyInclusion(res.body.immutability_seal, seal.inclusion_proof, seal.root)).toBe(true);
        roots.add(seal.root);
        expectNothingPersonal(res.body, seeded);
      }
      // Seeded together and anchored in one pass: one batch, one root.
      expect(roots.size).toBe(1);

      // A second pass finds nothing left of these receipts.
      await anchorAt(anchoredAt);
      const [{ anchors }] = await testDb()`
        select count(distinct anchor_id)::int as anchors from private.receipts where id = any(${uuidArray(batch.map((s) => s.receiptId))}::uuid[])`;
      expect(anchors).toBe(1);
    });

    it("passes the root to the sink and records the sink's reference", async () => {
      const seeded = await seedReceipt();
      const published: string[] = [];
      const sink: AnchorSink = {
        name: "test-chain",
        follows: false,
        async prepare(root) {
          published.push(root);
          return { reference: `tx-${root.slice(0, 16)}`, confirmed: true, state: null };
        },
        async send() {},
        async follow(publication) {
          return publication;
        },
        stale: () => false,
      };
      await anchorAt(new Date(seeded.issuedAt.getTime() + 1000), sink);
      const res = await verify({ id: seeded.receiptId });
      expect(res.body.public_seal).toMatchObject({ sink: "test-chain", inclusion_valid: true });
      expect(published).toContain(res.body.public_seal.root);
      expect(res.body.public_seal.sink_reference).toBe(`tx-${res.body.public_seal.root.slice(0, 16)}`);
    });

    it("serves the public keys as a JWKS without private parts, and they verify receipts offline", async () => {
      const res = await call(`${FN}/jwks`, { from: freshIp() });
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("public, max-age=300");
      expect(Object.keys(res.body)).toEqual(["keys"]);
      expect(res.body.keys.length).toBeGreaterThan(0);
      for (const key of res.body.keys) {
        expect(Object.keys(key).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
        expect(key).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
      }
      expect(res.text).not.toMatch(/"d"\s*:/);
      const seeded = await seedReceipt({ environment: "test" });
      const offline = await verifyReceipt(seeded.jws, res.body);
      expect(offline).toMatchObject({ signatureValid: true, payload: seeded.payload });
    });
  });

  describe("error", () => {
    it("answers 404 not_found for a receipt that does not exist", async () => {
      expect(errorOf(await verify({ id: randomUUID() }))).toEqual({ status: 404, code: "not_found" });
      expect(errorOf(await verify({ code: newReceiptCode() }))).toEqual({ status: 404, code: "not_found" });
    });

    it("answers 400 INVALID_INPUT unless exactly one well-formed id or code is given", async () => {
      const seeded = await seedReceipt({ environment: "test" });
      for (const query of [
        {},
        { id: "not-a-uuid" },
        { code: "RCPT-UUUU-0000-0000" },
        { code: "hello" },
        { id: seeded.receiptId, code: seeded.code },
      ]) {
        const res = await verify(query as Record<string, string>);
        expect(errorOf(res), JSON.stringify(query)).toEqual({ status: 400, code: "INVALID_INPUT" });
        expect(res.body.fields.length).toBeGreaterThan(0);
      }
      const notJson = await call(FN, { rawBody: "{", headers: { "content-type": "application/json" }, from: freshIp() });
      expect(errorOf(notJson)).toEqual({ status: 400, code: "INVALID_JSON" });
    });

    it("answers 405 for other methods and 404 for other paths", async () => {
      expect(errorOf(await call(FN, { method: "DELETE" }))).toEqual({ status: 405, code: "METHOD_NOT_ALLOWED" });
      // No body: locally, a POST answered without its body being read makes workerd drop the keep-alive
      // connection, and the client's next request on it fails (a local-runtime quirk, not this function's).
      expect(errorOf(await call(`${FN}/jwks`, { method: "POST" }))).toEqual({ status: 405, code: "METHOD_NOT_ALLOWED" });
      expect(errorOf(await call(`${FN}/elsewhere`))).toEqual({ status: 404, code: "ROUTE_NOT_FOUND" });
    });

    it("limits each IP generously (429 RATE_LIMITED with Retry-After)", async () => {
      const ip = freshIp();
      const statuses = await Promise.all(Array.from({ length: 300 }, () => call(FN, { from: ip }).then((r) => r.status)));
      expect(statuses.every((s) => s === 400)).toBe(true);
      // 300 per minute, sliding: right after a minute boundary the window frees a few more; a handful later it is full.
      let limited = await call(FN, { from: ip });
      for (let i = 0; i < 20 && limited.status !== 429; i++) limited = await call(FN, { from: ip });
      expect(errorOf(limited)).toEqual({ status: 429, code: "RATE_LIMITED" });
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await verify({ id: randomUUID() })).status).toBe(404); // another IP is unaffected
    });
  });

  describe("security", () => {
    it("reports a stored JWS whose payload was altered as invalid, attesting nothing", async () => {
      const seeded = await seedReceipt();
      const [header, body, signature] = seeded.jws.split(".");
      const altered = Buffer.from(JSON.stringify({ ...seeded.payload, amount_minor: 1 })).toString("base64url");
      const tampered = `${header}.${altered}.${signature}`;
      const seal = createHash("sha256").update(tampered).digest("hex");
      expect(body).not.toBe(altered);
      await testDb()`update private.receipts set jws = ${tampered}, seal = ${seal} where id = ${seeded.receiptId}`;
      const res = await verify({ id: seeded.receiptId });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        valid: false,
        receipt_id: seeded.receiptId,
        signature: { alg: "EdDSA", valid: false },
        seal_valid: true,
        action: null,
        amount: null,
        service_hash: null,
        issued_at: null,
      });
    });

    it("reports a stored seal that is not the JWS's hash as invalid", async () => {
      const seeded = await seedReceipt({ environment: "test" });
      await testDb()`update private.receipts set seal = ${"0".repeat(64)} where id = ${seeded.receiptId}`;
      const res = await verify({ code: seeded.code });
      expect(res.body).toMatchObject({ valid: false, seal_valid: false, signature: { valid: true }, immutability_seal: "0".repeat(64) });
    });

    it("does not let a genuine receipt stand in for another one", async () => {
      const [first, second] = await Promise.all([seedReceipt({ environment: "test" }), seedReceipt({ environment: "test" })]);
      await testDb()`update private.receipts set jws = ${first.jws}, seal = ${first.seal} where id = ${second.receiptId}`;
      const res = await verify({ id: second.receiptId });
      expect(res.body).toMatchObject({
        valid: false,
        receipt_id: second.receiptId,
        signature: { valid: false },
        seal_valid: true,
        transaction_id: null,
      });
    });

    it("reports an anchored receipt whose proof no longer reaches the root as invalid", async () => {
      const seeded = await seedReceipt();
      await anchorAt(new Date(seeded.issuedAt.getTime() + 1000));
      await testDb()`update private.receipts set inclusion_proof = ${testDb().json([{ hash: "f".repeat(64), side: "left" }])} where id = ${seeded.receiptId}`;
      const res = await verify({ id: seeded.receiptId });
      expect(res.body).toMatchObject({
        valid: false,
        signature: { valid: true },
        seal_valid: true,
        public_seal_status: "anchored",
        public_seal: { inclusion_valid: false },
      });
    });

    it("the anchoring RPC refuses sandbox receipts, proofs that miss the root, and a receipt anchored twice", async () => {
      const sql = testDb();
      const sandbox = await seedReceipt({ environment: "test" });
      const refused = await rpc(sql, "receipt_anchor_record", {
        root: sandbox.seal,
        sink: "local",
        sink_reference: null,
        now: new Date().toISOString(),
        receipts: [{ id: sandbox.receiptId, proof: [] }],
      });
      expect(refused).toEqual({ recorded: false, unclaimable: 1 });

      const live = await seedReceipt();
      await expect(
        rpc(sql, "receipt_anchor_record", {
          root: "a".repeat(64),
          sink: "local",
          sink_reference: null,
          now: new Date().toISOString(),
          receipts: [{ id: live.receiptId, proof: [] }],
        }),
      ).rejects.toThrow(/inclusion proof/);

      // Two runs racing for the same receipt: exactly one anchor takes it.
      const { merkleRoot } = await import("../../shared/receipts/merkle");
      const root = await merkleRoot([live.seal]);
      const record = () =>
        rpc(sql, "receipt_anchor_record", {
          root,
          sink: "local",
          sink_reference: null,
          now: new Date().toISOString(),
          receipts: [{ id: live.receiptId, proof: [] }],
        });
      const results = await Promise.all(Array.from({ length: 8 }, record));
      expect(results.filter((r) => r.recorded)).toHaveLength(1);
      const [{ anchors }] = await sql`
        select count(*)::int as anchors from private.receipt_anchors a
        where a.root = ${root}`;
      expect(anchors).toBe(1);
    });

    it("concurrent anchoring passes never anchor one receipt twice", async () => {
      const issuedAt = futureInstant();
      const batch = await Promise.all(Array.from({ length: 12 }, (_, i) => seedReceipt({ issuedAt: new Date(issuedAt.getTime() + i) })));
      const now = new Date(issuedAt.getTime() + 60_000);
      const passes = await Promise.all(Array.from({ length: 4 }, () => anchorPendingReceipts(testDb(), new LocalAnchorSink(), now)));
      const anchorIds = passes.flatMap((p) => p.anchors.map((a) => a.anchor_id));
      expect(new Set(anchorIds).size).toBe(anchorIds.length);
      const rows = await testDb()`
        select r.id, r.anchor_id, a.leaf_count from private.receipts r join private.receipt_anchors a on a.id = r.anchor_id
        where r.id = any(${uuidArray(batch.map((s) => s.receiptId))}::uuid[])`;
      expect(rows).toHaveLength(12);
      // Each anchor's leaf count is the number of receipts that point at it: no receipt counted in two anchors.
      const [{ mismatched }] = await testDb()`
        select count(*)::int as mismatched from private.receipt_anchors a
        where a.id = any(${uuidArray(anchorIds)}::uuid[])
          and a.leaf_count <> (select count(*) from private.receipts r where r.anchor_id = a.id)`;
      expect(mismatched).toBe(0);
      for (const seeded of batch.slice(0, 3)) {
        expect((await verify({ id: seeded.receiptId })).body).toMatchObject({ valid: true, public_seal: { inclusion_valid: true } });
      }
    });

    it("never answers anything personal, whatever the receipt", async () => {
      for (const options of [{ environment: "test" as const }, { environment: "live" as const, action: "ACTION_SIGN" as const }]) {
        const seeded = await seedReceipt(options);
        const res = await verify({ id: seeded.receiptId });
        expect(res.status).toBe(200);
        expectNothingPersonal(res.body, seeded);
      }
    });
  });
});
