/**
 * The public seal against a real EVM node (ganache, started here from its npm package on a free
 * port, stopped after): the receipt-anchor cron publishes a root in a transaction's calldata,
 * receipt-verify names the transaction, and scripts/verify-receipt.ts, run as its own process with
 * only the chain and the receipt, finds the receipt's root in that calldata. Nothing is mocked.
 */
import { execFile } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import ganache from "ganache";
import { createPublicClient, type Hex, http } from "viem";
import { afterAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../../scripts/local/ports";
import { rpc } from "../../shared/kernel/db/rpc";
import { randomHex } from "../../shared/lib/crypto";
import { importSigningKeys } from "../../shared/lib/signing";
import { anchorPendingReceipts } from "../../shared/receipts/anchor";
import { ANCHOR_CALLDATA_TAG, anchorSinkFor, ChainAnchorSink } from "../../shared/receipts/chain-sink";
import { buildReceipt, newReceiptCode } from "../../shared/receipts/signed-receipt";
import { issueMandate, seedGrantor } from "../fixtures/mandate-seed";
import { merchantFactory, testDb } from "../harness/factories";
import { call, freshIp } from "../harness/http";
import { useOwnService } from "../harness/own-service";

const keys = await importSigningKeys(inject("signingKeysJwk"));

const ANCHOR_KEY = `0x${randomBytes(32).toString("hex")}` as Hex;
const CHAIN_ID = 31337;
const node = ganache.server({
  logging: { quiet: true },
  chain: { chainId: CHAIN_ID },
  wallet: { accounts: [{ secretKey: ANCHOR_KEY, balance: "0x8AC7230489E80000" }] },
});
await node.listen(0, "127.0.0.1");
const RPC_URL = `http://127.0.0.1:${(node.address() as { port: number }).port}`;
afterAll(() => node.close());

const service = useOwnService("anchor_chain", ["receipt-anchor", "receipt-verify"], {
  overrides: { ANCHOR_CHAIN_RPC_URL: RPC_URL, ANCHOR_CHAIN_PRIVATE_KEY: ANCHOR_KEY, ANCHOR_CHAIN_CONFIRMATIONS: "1" },
});

const chain = createPublicClient({ transport: http(RPC_URL) });

/** Receipts far in the future: only the ticks these tests run, at their own time, anchor them. */
let clock = Date.parse("2099-03-01T00:00:00Z");
function later(): Date {
  clock += 60_000;
  return new Date(clock);
}

/** One live capture with its signed receipt, written by capture_record as the transaction sink writes it. */
async function seedReceipt(issuedAt: Date) {
  const sql = testDb();
  const merchant = await merchantFactory();
  const [identity] = await sql`insert into private.identities (environment, created_at) values ('live', ${issuedAt}) returning id`;
  const captureId = randomUUID();
  const receiptId = randomUUID();
  const code = newReceiptCode();
  const serviceHash = `order-${randomHex(6)}`;
  const built = await buildReceipt(keys, {
    receiptId,
    code,
    captureId,
    merchantId: merchant.merchant_id,
    environment: "live",
    action: "ACTION_LOGIN",
    assuranceLevel: "face",
    serviceHash,
    issuedAt,
  });
  await rpc(sql, "capture_record", {
    capture: {
      id: captureId,
      merchant_id: merchant.merchant_id,
      environment: "live",
      identity_id: identity.id,
      action: "ACTION_LOGIN",
      service_hash: serviceHash,
      amount_minor: null,
      currency: null,
      capture_nonce: `nonce-${randomHex(12)}`,
      liveness_passed: true,
      coercion_signal: false,
      assurance_level: "face",
      face_similarity: 0.93,
      engine_version: "test",
      created_at: issuedAt.toISOString(),
    },
    receipt: { id: receiptId, code, jws: built.jws, seal: built.seal },
  });
  return { receiptId, code, ...built };
}

function verify(code: string) {
  return call("receipt-verify", { query: { code }, from: freshIp() });
}

const scratch = mkdtempSync(join(tmpdir(), "verify-receipt-"));

/** scripts/verify-receipt.ts as its own process: the answer in a file, the node's URL, nothing else. */
async function verifyFromChain(answer: unknown, extra: string[] = []) {
  const file = join(scratch, `${randomUUID()}.json`);
  writeFileSync(file, JSON.stringify(answer));
  const args = ["--import", "tsx", "scripts/verify-receipt.ts", "--rpc", RPC_URL, "--answer", file, ...extra];
  try {
    const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: process.cwd(), timeout: 30_000 });
    return { exit: 0, verdict: JSON.parse(stdout) };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    if (failed.code !== 1) throw new Error(`verify-receipt exited ${failed.code}: ${failed.stderr}`);
    return { exit: 1, verdict: JSON.parse(failed.stdout) };
  }
}

describe("receipt-anchor on a chain", () => {
  it("publishes the root in a transaction's calldata, and the receipt verifies from the chain alone", async () => {
    const first = await seedReceipt(later());
    const second = await seedReceipt(later());

    const summary = await service.own.tick("receipt-anchor", later());
    expect(summary).toMatchObject({ anchors: 1, receipts: 2, contended: 0, sink: `eip155:${CHAIN_ID}` });

    const res = await verify(first.code);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: true, public_seal_status: "anchored" });
    const seal = res.body.public_seal;
    expect(seal.sink).toBe(`eip155:${CHAIN_ID}`);
    const [, hash, block] = /^(0x[0-9a-f]{64})@(\d+)$/.exec(seal.sink_reference) ?? [];
    expect(hash).toBeDefined();

    // the chain holds exactly the tag and the root the service recorded
    const transaction = await chain.getTransaction({ hash: hash as Hex });
    expect(transaction.input).toBe(`0x${Buffer.from(ANCHOR_CALLDATA_TAG).toString("hex")}${seal.root}`);
    expect(String(transaction.blockNumber)).toBe(block);

    const { exit, verdict } = await verifyFromChain(res.body);
    expect(exit).toBe(0);
    expect(verdict).toMatchObject({
      match: true,
      root: seal.root,
      seal: first.seal,
      chain_id: CHAIN_ID,
      transaction: hash,
      block: Number(block),
      receipt: { rid: first.receiptId, code: first.code, env: "live" },
      reasons: [],
    });

    // the other leaf of the same tree reaches the same transaction through its own proof
    const other = await verify(second.code);
    expect(other.body.public_seal.sink_reference).toBe(seal.sink_reference);
    expect((await verifyFromChain(other.body)).exit).toBe(0);
  });

  it("the independent check refuses another receipt, a forged proof and a transaction that is not the anchor", async () => {
    const anchored = await seedReceipt(later());
    await service.own.tick("receipt-anchor", later());
    const answer = (await verify(anchored.code)).body;
    const stranger = await seedReceipt(later());

    const otherReceipt = await verifyFromChain(answer, ["--jws", stranger.jws]);
    expect(otherReceipt).toMatchObject({ exit: 1, verdict: { match: false } });
    expect(otherReceipt.verdict.reasons).toContain("the transaction's calldata is not this receipt's root");

    // a one-leaf tree has an empty proof: a made-up sibling leads elsewhere
    const forged = structuredClone(answer);
    forged.public_seal.inclusion_proof = [{ hash: randomHex(32), side: "right" }];
    expect(await verifyFromChain(forged)).toMatchObject({ exit: 1, verdict: { match: false } });

    const unknownTx = structuredClone(answer);
    unknownTx.public_seal.sink_reference = `0x${randomHex(32)}@1`;
    const missing = await verifyFromChain(unknownTx);
    expect(missing).toMatchObject({ exit: 1, verdict: { match: false, reasons: ["the transaction is not on this chain"] } });
  });

  it("an unreachable chain anchors nothing and the receipts stay valid and pending; the next tick anchors them", async () => {
    const receipt = await seedReceipt(later());
    const deadUrl = `http://127.0.0.1:${await freePort()}`;
    const at = later();
    await expect(
      (async () => {
        const sink = await anchorSinkFor({
          ANCHOR_CHAIN_RPC_URL: deadUrl,
          ANCHOR_CHAIN_PRIVATE_KEY: ANCHOR_KEY,
          ANCHOR_CHAIN_CONFIRMATIONS: 1,
        });
        return anchorPendingReceipts(service.own.sql, sink, at);
      })(),
    ).rejects.toThrow();
    expect((await verify(receipt.code)).body).toMatchObject({ valid: true, public_seal_status: "pending", public_seal: null });

    await service.own.tick("receipt-anchor", later());
    const anchored = await verify(receipt.code);
    expect(anchored.body).toMatchObject({ valid: true, public_seal_status: "anchored" });
    expect((await verifyFromChain(anchored.body)).exit).toBe(0);
  });

  it("a publication short of its confirmations is recorded pending: receipt-verify names its transaction until the chain confirms it", async () => {
    const receipt = await seedReceipt(later());
    // ganache mines a block per transaction and none without: the second confirmation waits for evm_mine
    const impatient = await ChainAnchorSink.connect({ rpcUrl: RPC_URL, privateKey: ANCHOR_KEY, confirmations: 2, timeoutMs: 1500 });
    const before = await chain.getBlockNumber({ cacheTime: 0 });
    expect(await anchorPendingReceipts(service.own.sql, impatient, later())).toMatchObject({ anchors: [{ leaf_count: 1 }], pending: 1 });
    // sent and mined: one confirmation of the two asked
    expect(await chain.getBlockNumber({ cacheTime: 0 })).toBe(before + 1n);
    const pending = (await verify(receipt.code)).body;
    expect(pending).toMatchObject({
      valid: true,
      public_seal_status: "pending",
      public_seal: { sink: `eip155:${CHAIN_ID}`, confirmed_at: null },
    });
    const hash = pending.public_seal.sink_reference as Hex;
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await chain.getTransaction({ hash })).input).toBe(
      `0x${Buffer.from(ANCHOR_CALLDATA_TAG).toString("hex")}${pending.public_seal.root}`,
    );
    expect(await verifyFromChain(pending)).toMatchObject({
      exit: 1,
      verdict: { match: false, reason: "the seal is pending: its transaction is not confirmed yet" },
    });

    await node.provider.request({ method: "evm_mine", params: [] });
    expect(await anchorPendingReceipts(service.own.sql, impatient, later())).toMatchObject({ anchors: [], confirmed: 1, pending: 0 });
    const anchored = (await verify(receipt.code)).body;
    expect(anchored).toMatchObject({ valid: true, public_seal_status: "anchored" });
    expect(anchored.public_seal.sink_reference).toBe(`${hash}@${before + 1n}`);
    expect(anchored.public_seal.root).toBe(pending.public_seal.root);
    expect((await verifyFromChain(anchored)).exit).toBe(0);
  });

  it("a stuck publication (fees rose past it) is replaced at the same nonce, and only one of the two is mined", async () => {
    const sink = await ChainAnchorSink.connect({
      rpcUrl: RPC_URL,
      privateKey: ANCHOR_KEY,
      confirmations: 1,
      timeoutMs: 1000,
      replaceAfterMs: 0,
    });
    const receipt = await seedReceipt(later());
    await node.provider.request({ method: "miner_stop", params: [] });
    try {
      expect(await anchorPendingReceipts(service.own.sql, sink, later())).toMatchObject({ anchors: [{ leaf_count: 1 }], pending: 1 });
      const first = (await verify(receipt.code)).body.public_seal;
      expect(first.confirmed_at).toBeNull();

      expect(await anchorPendingReceipts(service.own.sql, sink, later())).toMatchObject({ republished: 1, pending: 1 });
      const second = (await verify(receipt.code)).body;
      expect(second).toMatchObject({ valid: true, public_seal_status: "pending", public_seal: { root: first.root } });
      expect(second.public_seal.sink_reference).not.toBe(first.sink_reference);
      const [{ publication }] = await testDb()`select publication from private.receipt_anchors where id = ${first.anchor_id}`;
      expect(publication.hashes).toEqual([first.sink_reference, second.public_seal.sink_reference]);
      // the node's pool took the replacement in place of the first: same nonce, an eighth more per gas at least
      await expect(chain.getTransaction({ hash: first.sink_reference })).rejects.toThrow(/could not be found/);
      const replacement = await chain.getTransaction({ hash: second.public_seal.sink_reference });
      expect(replacement.nonce).toBe(publication.nonce);
      expect(replacement.maxFeePerGas).toBe(BigInt(publication.max_fee_per_gas));
    } finally {
      await node.provider.request({ method: "miner_start", params: [] });
    }
    await node.provider.request({ method: "evm_mine", params: [] });
    expect(await anchorPendingReceipts(service.own.sql, sink, later())).toMatchObject({ confirmed: 1, pending: 0 });
    const anchored = (await verify(receipt.code)).body;
    expect(anchored.public_seal_status).toBe("anchored");
    const [mined] = anchored.public_seal.sink_reference.split("@");
    const [{ publication }] = await testDb()`select publication from private.receipt_anchors where id = ${anchored.public_seal.anchor_id}`;
    const others = (publication.hashes as Hex[]).filter((hash) => hash !== mined);
    expect(others).toHaveLength(1);
    // the other one was never mined: same nonce, so no second root on the chain
    await expect(chain.getTransactionReceipt({ hash: others[0] as Hex })).rejects.toThrow();
    expect((await verifyFromChain(anchored)).exit).toBe(0);
  });

  it("fees above the cap send nothing: the receipts stay pending, with no seal, until fees allow", async () => {
    const receipt = await seedReceipt(later());
    const thrifty = await ChainAnchorSink.connect({ rpcUrl: RPC_URL, privateKey: ANCHOR_KEY, confirmations: 1, maxFeePerGas: 1n });
    const before = await chain.getBlockNumber({ cacheTime: 0 });
    expect(await anchorPendingReceipts(service.own.sql, thrifty, later())).toMatchObject({ anchors: [], deferred: true });
    expect(await chain.getBlockNumber({ cacheTime: 0 })).toBe(before);
    expect((await verify(receipt.code)).body).toMatchObject({ valid: true, public_seal_status: "pending", public_seal: null });

    await service.own.tick("receipt-anchor", later());
    expect((await verify(receipt.code)).body.public_seal_status).toBe("anchored");
  });

  it("a reorg that takes a confirmed root out is repaired: pending meanwhile, the same root republished, verifiable again", async () => {
    const sink = await ChainAnchorSink.connect({ rpcUrl: RPC_URL, privateKey: ANCHOR_KEY, confirmations: 1, timeoutMs: 5000 });
    const snapshot = await node.provider.request({ method: "evm_snapshot", params: [] });
    const receipt = await seedReceipt(later());
    expect(await anchorPendingReceipts(service.own.sql, sink, later())).toMatchObject({ anchors: [{ leaf_count: 1 }], pending: 0 });
    const before = (await verify(receipt.code)).body;
    expect(before.public_seal_status).toBe("anchored");
    expect((await verifyFromChain(before)).exit).toBe(0);

    // the chain forgets the block that held the root, and grows past it on another branch
    await node.provider.request({ method: "evm_revert", params: [snapshot] });
    await node.provider.request({ method: "evm_mine", params: [] });
    await node.provider.request({ method: "evm_mine", params: [] });
    expect((await verifyFromChain(before)).exit).toBe(1);

    const repair = await anchorPendingReceipts(service.own.sql, sink, later());
    expect(repair).toMatchObject({ reorged: 1, republished: 1 });
    expect((await verify(receipt.code)).body).toMatchObject({
      valid: true,
      public_seal_status: "pending",
      public_seal: { root: before.public_seal.root },
    });

    expect(await anchorPendingReceipts(service.own.sql, sink, later())).toMatchObject({ confirmed: 1, pending: 0 });
    const after = (await verify(receipt.code)).body;
    expect(after).toMatchObject({
      valid: true,
      public_seal_status: "anchored",
      public_seal: { root: before.public_seal.root, anchor_id: before.public_seal.anchor_id },
    });
    expect(after.public_seal.sink_reference).not.toBe(before.public_seal.sink_reference);
    expect(after.public_seal.inclusion_proof).toEqual(before.public_seal.inclusion_proof);
    expect((await verifyFromChain(after)).exit).toBe(0);
  });

  it("a reorg found hours after confirmation is still repaired: an anchor is re-verified until it is final, then no longer (D-650)", async () => {
    const sql = testDb();
    const sink = await ChainAnchorSink.connect({
      rpcUrl: RPC_URL,
      privateKey: ANCHOR_KEY,
      confirmations: 1,
      timeoutMs: 5000,
      finalityDepth: 4,
    });
    const snapshot = await node.provider.request({ method: "evm_snapshot", params: [] });
    const receipt = await seedReceipt(later());
    expect(await anchorPendingReceipts(service.own.sql, sink, later())).toMatchObject({ anchors: [{ leaf_count: 1 }], pending: 0 });
    const before = (await verify(receipt.code)).body;
    expect(before.public_seal_status).toBe("anchored");

    // Hours go by with the root confirmed and one block deep: still followed, nothing to do.
    clock += 3 * 3_600_000;
    expect(await anchorPendingReceipts(service.own.sql, sink, later())).toMatchObject({ reorged: 0, republished: 0, finalised: 0 });
    // Then the chain forgets its block and grows past it on another branch.
    await node.provider.request({ method: "evm_revert", params: [snapshot] });
    await node.provider.request({ method: "evm_mine", params: [] });
    await node.provider.request({ method: "evm_mine", params: [] });
    expect((await verifyFromChain(before)).exit).toBe(1);
    clock += 3 * 3_600_000;
    expect(await anchorPendingReceipts(service.own.sql, sink, later())).toMatchObject({ reorged: 1, republished: 1 });
    expect((await verify(receipt.code)).body).toMatchObject({
      valid: true,
      public_seal_status: "pending",
      public_seal: { root: before.public_seal.root, confirmed_at: null },
    });
    expect(await anchorPendingReceipts(service.own.sql, sink, later())).toMatchObject({ confirmed: 1 });
    const after = (await verify(receipt.code)).body;
    expect(after).toMatchObject({
      valid: true,
      public_seal_status: "anchored",
      public_seal: {
        root: before.public_seal.root,
        anchor_id: before.public_seal.anchor_id,
        inclusion_proof: before.public_seal.inclusion_proof,
      },
    });
    expect((await verifyFromChain(after)).exit).toBe(0);

    // Four blocks deep (and finalized by the node): final, and no pass looks at it again.
    const open = async () => (await rpc(sql, "receipt_anchors_open", { sink: sink.name })).anchors.map((anchor) => anchor.id);
    expect(await open()).toContain(before.public_seal.anchor_id);
    for (let i = 0; i < 3; i++) await node.provider.request({ method: "evm_mine", params: [] });
    expect((await anchorPendingReceipts(service.own.sql, sink, later())).finalised).toBeGreaterThanOrEqual(1);
    const [row] = await sql`select final_at, confirmed_at from private.receipt_anchors where id = ${before.public_seal.anchor_id}`;
    expect(row.final_at).not.toBeNull();
    expect(row.confirmed_at).not.toBeNull();
    expect(await open()).not.toContain(before.public_seal.anchor_id);
    expect((await verify(receipt.code)).body.public_seal_status).toBe("anchored");
  });

  it("anchors recorded before publications were kept (D-339) are followed: read back from the chain, kept where they are, republished where a reorg took them out, final once deep enough (D-650)", async () => {
    const sql = testDb();
    const sink = await ChainAnchorSink.connect({
      rpcUrl: RPC_URL,
      privateKey: ANCHOR_KEY,
      confirmations: 1,
      timeoutMs: 5000,
      finalityDepth: 6,
    });
    /** What D-339 kept of an anchor: confirmed when written, its reference `<hash>@<block>` and nothing of its publication. */
    const asD339 = (anchorId: string) => sql`update private.receipt_anchors set publication = null where id = ${anchorId}`;
    const kept = await seedReceipt(later());
    expect(await anchorPendingReceipts(service.own.sql, sink, later())).toMatchObject({ anchors: [{ leaf_count: 1 }], pending: 0 });
    const keptSeal = (await verify(kept.code)).body.public_seal;
    await asD339(keptSeal.anchor_id);

    const snapshot = await node.provider.request({ method: "evm_snapshot", params: [] });
    const taken = await seedReceipt(later());
    expect(await anchorPendingReceipts(service.own.sql, sink, later())).toMatchObject({ anchors: [{ leaf_count: 1 }], pending: 0 });
    const before = (await verify(taken.code)).body;
    await asD339(before.public_seal.anchor_id);
    await node.provider.request({ method: "evm_revert", params: [snapshot] });
    await node.provider.request({ method: "evm_mine", params: [] });
    await node.provider.request({ method: "evm_mine", params: [] });
    expect((await verifyFromChain(before)).exit).toBe(1);

    // A day later: both are followed, the one still on the chain adopted as it is, the other repaired.
    clock += 86_400_000;
    expect(await anchorPendingReceipts(service.own.sql, sink, later())).toMatchObject({ reorged: 1, republished: 1 });
    const [keptRow] =
      await sql`select sink_reference, confirmed_at, final_at, publication from private.receipt_anchors where id = ${keptSeal.anchor_id}`;
    const [keptHash] = keptSeal.sink_reference.split("@");
    expect(keptRow).toMatchObject({ sink_reference: keptSeal.sink_reference, final_at: null });
    expect(keptRow.confirmed_at).not.toBeNull();
    expect(keptRow.publication).toMatchObject({
      hashes: [keptHash],
      nonce: expect.any(Number),
      block_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect((await verify(kept.code)).body.public_seal_status).toBe("anchored");
    expect((await verify(taken.code)).body).toMatchObject({
      public_seal_status: "pending",
      public_seal: { root: before.public_seal.root },
    });

    expect(await anchorPendingReceipts(service.own.sql, sink, later())).toMatchObject({ confirmed: 1 });
    const repaired = (await verify(taken.code)).body;
    expect(repaired).toMatchObject({
      public_seal_status: "anchored",
      public_seal: { inclusion_proof: before.public_seal.inclusion_proof },
    });
    expect((await verifyFromChain(repaired)).exit).toBe(0);
    expect((await verifyFromChain((await verify(kept.code)).body)).exit).toBe(0);

    // Every live root ends confirmed and final: six blocks on, neither is followed any more.
    for (let i = 0; i < 6; i++) await node.provider.request({ method: "evm_mine", params: [] });
    await anchorPendingReceipts(service.own.sql, sink, later());
    const rows =
      await sql`select final_at from private.receipt_anchors where id in ${sql([keptSeal.anchor_id, before.public_seal.anchor_id])}`;
    expect(rows.map((row) => row.final_at !== null)).toEqual([true, true]);
  });

  it("a live grant's mandate.granted is sent once, when the anchor holding its receipt is confirmed", async () => {
    const sql = testDb();
    const impatient = await ChainAnchorSink.connect({ rpcUrl: RPC_URL, privateKey: ANCHOR_KEY, confirmations: 2, timeoutMs: 1500 });
    const granted = (mandateId: string) =>
      sql`select created_at from private.outbox_events where type = 'mandate.granted' and data ->> 'mandate_id' = ${`mdt_${mandateId.replace(/-/g, "")}`}`;
    /** A live grant whose capture has its signed receipt, as the sink records an approved grant capture. */
    async function liveGrant(afterReceipt?: () => Promise<unknown>) {
      const at = later();
      const grantor = await seedGrantor(sql, { at, environment: "live" });
      return issueMandate(sql, grantor, {
        beforeIssue: async (captureId) => {
          const receiptId = randomUUID();
          const code = newReceiptCode();
          const issuedAt = new Date(at.getTime() - 60_000);
          const built = await buildReceipt(keys, {
            receiptId,
            code,
            captureId,
            merchantId: grantor.merchantId,
            environment: "live",
            action: "ACTION_LOGIN",
            assuranceLevel: "face_voice_doc",
            serviceHash: `svc:${captureId}`,
            issuedAt,
          });
          await sql`insert into private.receipts (id, code, capture_id, merchant_id, environment, jws, seal, issued_at)
                    values (${receiptId}, ${code}, ${captureId}, ${grantor.merchantId}, 'live', ${built.jws}, ${built.seal}, ${issuedAt})`;
          await afterReceipt?.();
        },
      });
    }

    // issued before its receipt is anchored: nothing until the anchor is confirmed
    const waiting = await liveGrant();
    expect(await granted(waiting.id)).toHaveLength(0);
    expect(await anchorPendingReceipts(service.own.sql, impatient, later())).toMatchObject({ pending: 1 });
    expect(await granted(waiting.id)).toHaveLength(0);
    await node.provider.request({ method: "evm_mine", params: [] });
    expect(await anchorPendingReceipts(service.own.sql, impatient, later())).toMatchObject({ confirmed: 1 });
    expect(await granted(waiting.id)).toHaveLength(1);
    await node.provider.request({ method: "evm_mine", params: [] });
    await anchorPendingReceipts(service.own.sql, impatient, later());
    expect(await granted(waiting.id)).toHaveLength(1);

    // its receipt anchored and confirmed before the mandate is issued: sent with the issue
    const anchoredFirst = await liveGrant(async () => {
      await anchorPendingReceipts(service.own.sql, impatient, later());
      await node.provider.request({ method: "evm_mine", params: [] });
      await anchorPendingReceipts(service.own.sql, impatient, later());
    });
    expect(await granted(anchoredFirst.id)).toHaveLength(1);
  });

  it("without a chain the sink is the local one, and half a chain configuration is refused", async () => {
    expect(await anchorSinkFor({ ANCHOR_CHAIN_CONFIRMATIONS: 3 })).toMatchObject({ name: "local" });
    await expect(anchorSinkFor({ ANCHOR_CHAIN_RPC_URL: RPC_URL, ANCHOR_CHAIN_CONFIRMATIONS: 3 })).rejects.toThrow(/together/);
  });
});
