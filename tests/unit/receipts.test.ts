import { createHash, generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { importSigningKeys, type KeySet, signJson, signUserJwt } from "../../shared/lib/signing";
import { inclusionProof, merkleLeafHash, merkleRoot, merkleTree, type ProofStep, verifyInclusion } from "../../shared/receipts/merkle";
import {
  buildReceipt,
  newReceiptCode,
  normaliseReceiptCode,
  RECEIPT_CODE,
  type ReceiptInput,
  receiptSeal,
  verifyReceipt,
} from "../../shared/receipts/signed-receipt";

const sha256 = (...parts: Buffer[]) => createHash("sha256").update(Buffer.concat(parts)).digest();
const seal = () => randomBytes(32).toString("hex");

/** An independent reference of the documented construction, written with node:crypto and recursion. */
function referenceRoot(seals: string[]): string {
  let level = seals.map((s) => sha256(Buffer.from([0]), Buffer.from(s, "hex")));
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(i + 1 < level.length ? sha256(Buffer.from([1]), level[i], level[i + 1]) : level[i]);
    level = next;
  }
  return level[0].toString("hex");
}

function keysWithNewKey(): Promise<KeySet> {
  const { privateKey } = generateKeyPairSync("ed25519");
  const jwk = { ...privateKey.export({ format: "jwk" }), kid: `ed25519-${randomBytes(6).toString("hex")}` };
  return importSigningKeys(JSON.stringify([jwk]));
}

function input(overrides: Partial<ReceiptInput> = {}): ReceiptInput {
  return {
    receiptId: randomUUID(),
    code: newReceiptCode(),
    captureId: randomUUID(),
    merchantId: randomUUID(),
    environment: "live",
    action: "ACTION_PAYMENT",
    assuranceLevel: "face_voice_doc",
    serviceHash: "order-4711",
    issuedAt: new Date("2026-11-21T10:00:00.123Z"),
    amountMinor: 1299,
    currency: "EUR",
    ...overrides,
  };
}

describe("Merkle tree over seals", () => {
  it("matches the documented construction for 1 to 9 leaves, and every proof verifies", async () => {
    for (let n = 1; n <= 9; n++) {
      const seals = Array.from({ length: n }, seal);
      const tree = await merkleTree(seals);
      expect(tree.root).toBe(referenceRoot(seals));
      expect(await merkleRoot(seals)).toBe(tree.root);
      for (let i = 0; i < n; i++) {
        const proof = await inclusionProof(seals, i);
        expect(proof).toEqual(tree.proofs[i]);
        expect(proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(n)));
        expect(await verifyInclusion(seals[i], proof, tree.root)).toBe(true);
      }
    }
  });

  it("gives one leaf the leaf hash as root, with an empty proof", async () => {
    const only = seal();
    expect(await merkleRoot([only])).toBe(await merkleLeafHash(only));
    expect(await merkleRoot([only])).toBe(sha256(Buffer.from([0]), Buffer.from(only, "hex")).toString("hex"));
    expect(await inclusionProof([only], 0)).toEqual([]);
  });

  it("promotes an odd node unchanged: the last of three leaves has a single step", async () => {
    const seals = [seal(), seal(), seal()];
    const proof = await inclusionProof(seals, 2);
    const left = sha256(
      Buffer.from([1]),
      sha256(Buffer.from([0]), Buffer.from(seals[0], "hex")),
      sha256(Buffer.from([0]), Buffer.from(seals[1], "hex")),
    );
    expect(proof).toEqual([{ hash: left.toString("hex"), side: "left" }]);
  });

  it("refuses tampered proofs, wrong leaves and wrong roots", async () => {
    const seals = Array.from({ length: 7 }, seal);
    const { root, proofs } = await merkleTree(seals);
    const proof = proofs[3];
    const flip = (hex: string) => (hex[0] === "0" ? "1" : "0") + hex.slice(1);
    expect(await verifyInclusion(seals[3], proof, root)).toBe(true);
    expect(await verifyInclusion(seals[4], proof, root)).toBe(false);
    expect(await verifyInclusion(seals[3], proof, flip(root))).toBe(false);
    expect(await verifyInclusion(seals[3], [{ ...proof[0], hash: flip(proof[0].hash) }, ...proof.slice(1)], root)).toBe(false);
    const swapped: ProofStep[] = proof.map((step) => ({ ...step, side: step.side === "left" ? "right" : "left" }));
    expect(await verifyInclusion(seals[3], swapped, root)).toBe(false);
    expect(await verifyInclusion(seals[3], proof.slice(0, -1), root)).toBe(false);
    expect(await verifyInclusion(seals[3], [...proof, proof[0]], root)).toBe(false);
    expect(await verifyInclusion(seals[3], [{ hash: "zz", side: "left" }] as ProofStep[], root)).toBe(false);
    expect(await verifyInclusion(seals[3], [{ hash: proof[0].hash, side: "up" }] as unknown as ProofStep[], root)).toBe(false);
    expect(await verifyInclusion(seals[3], "nope" as unknown as ProofStep[], root)).toBe(false);
    expect(await verifyInclusion("not-a-seal", proof, root)).toBe(false);
  });

  it("does not let an inner node pass for a leaf (domain separation)", async () => {
    const seals = [seal(), seal()];
    const { root } = await merkleTree(seals);
    // The two leaf hashes concatenated are the preimage of the root under 0x01; as a "seal" they are not a leaf.
    const leafHashes = await Promise.all(seals.map(merkleLeafHash));
    expect(await verifyInclusion(leafHashes[0], [{ hash: leafHashes[1], side: "right" }], root)).toBe(false);
  });

  it("refuses an empty tree and bad input", async () => {
    await expect(merkleTree([])).rejects.toThrow();
    await expect(merkleTree(["ABC"])).rejects.toThrow();
    await expect(inclusionProof([seal()], 1)).rejects.toThrow(RangeError);
  });
});

describe("receipt codes", () => {
  it("are RCPT-XXXX-XXXX-XXXX in Crockford base32, and random", () => {
    const codes = new Set(Array.from({ length: 2000 }, newReceiptCode));
    expect(codes.size).toBe(2000);
    for (const code of codes) {
      expect(code).toMatch(RECEIPT_CODE);
      expect(code).toMatch(/^RCPT-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/); // the table's CHECK
      expect(code.slice(5)).not.toMatch(/[ILOU]/);
    }
    const used = new Set([...codes].flatMap((code) => code.slice(5).replace(/-/g, "").split("")));
    expect(used.size).toBe(32);
  });

  it("normalise what a person types, and refuse what cannot be a code", () => {
    expect(normaliseReceiptCode("RCPT-7QK2-M0ZD-4HXW")).toBe("RCPT-7QK2-M0ZD-4HXW");
    expect(normaliseReceiptCode(" rcpt 7qk2 mozd 4hxw ")).toBe("RCPT-7QK2-M0ZD-4HXW");
    expect(normaliseReceiptCode("7QK2M0ZD4HXW")).toBe("RCPT-7QK2-M0ZD-4HXW");
    expect(normaliseReceiptCode("RCPT-ilIL-0000-0000")).toBe("RCPT-1111-0000-0000");
    for (const bad of [
      "",
      "RCPT",
      "RCPT-7QK2-M0ZD-4HX",
      "RCPT-7QK2-M0ZD-4HXWW",
      "RCPT-UUUU-0000-0000",
      "RCPT-7QK2-M0ZD-4HX*",
      "x".repeat(100),
    ]) {
      expect(normaliseReceiptCode(bad)).toBeNull();
    }
  });
});

describe("signed receipts", () => {
  it("sign a payload with nothing personal, verifiable with the public JWKS only", async () => {
    const keys = await keysWithNewKey();
    const given = input();
    const { payload, jws, seal: sealHex } = await buildReceipt(keys, given);
    expect(Object.keys(payload).sort()).toEqual(
      [
        "act",
        "amount_minor",
        "assurance_level",
        "code",
        "currency",
        "env",
        "iat",
        "merchant_id",
        "rid",
        "service_hash",
        "transaction_id",
        "v",
      ].sort(),
    );
    expect(payload).toMatchObject({
      v: 1,
      rid: given.receiptId,
      code: given.code,
      env: "live",
      act: "ACTION_PAYMENT",
      iat: Math.floor(given.issuedAt.getTime() / 1000),
      assurance_level: "face_voice_doc",
      service_hash: "order-4711",
      merchant_id: given.merchantId,
      transaction_id: given.captureId,
      amount_minor: 1299,
      currency: "EUR",
    });
    expect(sealHex).toBe(createHash("sha256").update(jws).digest("hex"));
    expect(await receiptSeal(jws)).toBe(sealHex);

    const { jwks } = keys;
    expect(jwks.keys.every((key) => !("d" in key))).toBe(true);
    const checked = await verifyReceipt(jws, jwks);
    expect(checked.signatureValid).toBe(true);
    expect(checked.header).toEqual({ alg: "EdDSA", kid: jwks.keys[0].kid, typ: "receipt+jws" });
    expect(checked.payload).toEqual(payload);
  });

  it("omit the amount when the act carries none", async () => {
    const { payload } = await buildReceipt(
      await keysWithNewKey(),
      input({ action: "ACTION_LOGIN", assuranceLevel: "face_voice", amountMinor: undefined, currency: undefined }),
    );
    expect(payload).not.toHaveProperty("amount_minor");
    expect(payload).not.toHaveProperty("currency");
  });

  it("fail against another key, after tampering, and for other tokens signed with the same key", async () => {
    const keys = await keysWithNewKey();
    const { jws } = await buildReceipt(keys, input());
    const other = await keysWithNewKey();
    expect((await verifyReceipt(jws, other.jwks)).signatureValid).toBe(false);

    const { jwks } = keys;
    const [header, body, signature] = jws.split(".");
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, "base64url").toString()), amount_minor: 1 })).toString(
      "base64url",
    );
    const tampered = await verifyReceipt(`${header}.${forged}.${signature}`, jwks);
    expect(tampered).toMatchObject({ signatureValid: false, payload: null });
    expect((await verifyReceipt("not.a.jws", jwks)).signatureValid).toBe(false);
    expect((await verifyReceipt("", jwks)).header).toBeNull();

    const userJwt = await signUserJwt(keys, randomUUID(), {}, new Date(), 60);
    expect((await verifyReceipt(userJwt, jwks)).signatureValid).toBe(false);
  });

  it("refuse input that would make a wrong receipt", async () => {
    const keys = await keysWithNewKey();
    await expect(buildReceipt(keys, input({ code: "RCPT-UUUU-0000-0000" }))).rejects.toThrow(/code/);
    await expect(buildReceipt(keys, input({ amountMinor: 12.5 }))).rejects.toThrow(/amountMinor/);
    await expect(buildReceipt(keys, input({ currency: undefined }))).rejects.toThrow(/both or neither/);
    await expect(buildReceipt(keys, input({ assuranceLevel: "retina" as never }))).rejects.toThrow(/assuranceLevel/);
    await expect(buildReceipt(keys, input({ issuedAt: new Date("nope") }))).rejects.toThrow(/issuedAt/);
    await expect(buildReceipt(keys, input({ action: "ACTION_MANDATE" }))).rejects.toThrow(/mandate/);
    const mandate = { mandateId: `mdt_${"a".repeat(32)}`, action: "ACTION_PAYMENT" as const };
    await expect(buildReceipt(keys, input({ mandate }))).rejects.toThrow(/mandate/);
    await expect(buildReceipt(keys, input({ action: "ACTION_MANDATE", mandate: { ...mandate, mandateId: "x" } }))).rejects.toThrow(
      /mandateId/,
    );
  });

  it("say when a mandate stood in: ACTION_MANDATE at assurance mandate, and no other receipt carries the mandate claims", async () => {
    const keys = await keysWithNewKey();
    const mandateId = `mdt_${"b".repeat(32)}`;
    const { payload, jws } = await buildReceipt(
      keys,
      input({ action: "ACTION_MANDATE", assuranceLevel: "face_voice_doc", mandate: { mandateId, action: "ACTION_PAYMENT" } }),
    );
    expect(payload).toMatchObject({
      act: "ACTION_MANDATE",
      assurance_level: "mandate",
      mandate_id: mandateId,
      mandate_act: "ACTION_PAYMENT",
      mandate_assurance_level: "face_voice_doc",
    });
    expect((await verifyReceipt(jws, keys.jwks)).payload).toEqual(payload);

    // Genuinely signed payloads that break the rule are not receipts.
    const signed = (claims: Record<string, unknown>) => signJson(keys, claims, "receipt+jws");
    const { payload: live } = await buildReceipt(keys, input());
    for (const claims of [
      { ...live, mandate_id: mandateId },
      { ...payload, assurance_level: "face_voice_doc" },
      { ...live, assurance_level: "mandate" },
      { ...payload, mandate_act: "ACTION_MANDATE" },
    ]) {
      expect((await verifyReceipt(await signed(claims), keys.jwks)).signatureValid).toBe(false);
    }
    expect((await verifyReceipt(await signed({ ...live }), keys.jwks)).signatureValid).toBe(true);
  });
});
