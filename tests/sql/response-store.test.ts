/**
 * SQL-level tests of the response store (private.idempotency_keys) and the acts that complete it:
 * idempotency_begin looks at the key's record before it claims the replay nonce, and capture_record
 * and mandate_transaction store their answer in the act's own transaction, so an act that committed
 * always has its answer and an act that did not commit never has one. Rolled-back transactions on
 * the database under test, with explicit `now` values, as in mandate-rpcs.test.ts.
 */
import { createHash, randomUUID } from "node:crypto";
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { rawRpc } from "../../shared/kernel/db/rpc";
import { newReceiptCode } from "../../shared/receipts/signed-receipt";
import { type Grantor, issueMandate, seedGrantor } from "../fixtures/mandate-seed";
import { rolledBack } from "../harness/factories";

type Tx = postgres.TransactionSql;
type Answer = Record<string, any>;

const T0 = new Date("2027-05-03T10:00:00Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000).toISOString();
const FUNCTION = "process-biovital-transaction";

/** The response-store record of `key` for the grantor's merchant, and the calls on it. */
function store(tx: Tx, grantor: Grantor, key = `idem-${randomUUID()}`) {
  const record = { merchant_id: grantor.merchantId, environment: "test", function_name: FUNCTION, key };
  return {
    record,
    begin: (seconds: number, requestHash: string, nonce?: string) =>
      rawRpc<Answer>(tx, "idempotency_begin", {
        ...record,
        request_hash: requestHash,
        now: at(seconds),
        lease_seconds: 60,
        retention_seconds: 86_400,
        ...(nonce ? { nonce, window_seconds: 300 } : {}),
      }),
    finish: (status: number, body: unknown) => rawRpc<Answer>(tx, "idempotency_finish", { ...record, status, body }),
    row: async () =>
      (
        await tx.unsafe(
          `select state, response_status, response_body, mandate_id from private.idempotency_keys
           where merchant_id = $1 and function_name = $2 and idempotency_key = $3`,
          [grantor.merchantId, FUNCTION, key],
        )
      )[0],
  };
}

const nonceUsed = async (tx: Tx, grantor: Grantor, nonce: string) =>
  (await tx.unsafe(`select 1 from private.request_nonces where merchant_id = $1 and nonce = $2`, [grantor.merchantId, nonce])).length === 1;

/** A capture row and receipt of an act at `seconds`, as the sink sends them. */
function act(grantor: Grantor, seconds: number) {
  const id = randomUUID();
  const capture = {
    id,
    merchant_id: grantor.merchantId,
    environment: "test",
    identity_id: grantor.identityId,
    action: "ACTION_LOGIN",
    service_hash: `svc:${id}`,
    amount_minor: null,
    currency: null,
    capture_nonce: `n-${id}`,
    liveness_passed: true,
    liveness_reason: null,
    coercion_signal: false,
    assurance_level: "face_voice_doc",
    face_similarity: 0.93,
    engine_version: "test",
    created_at: at(seconds),
  };
  const seal = createHash("sha256").update(id).digest("hex");
  return { capture, receipt: { id: randomUUID(), code: newReceiptCode(), jws: `jws.${id}`, seal } };
}

const captured = async (tx: Tx, id: string) => (await tx.unsafe(`select 1 from private.captures where id = $1`, [id])).length === 1;

describe("idempotency_begin: the record first, then the nonce (spec 4.4 rule 7)", () => {
  it("a finished request is replayed whatever its nonce; only a request that starts claims one", async () => {
    await rolledBack(async (tx) => {
      const grantor = await seedGrantor(tx, { at: T0 });
      const a = store(tx, grantor);
      expect(await a.begin(0, "h1", "nonce-first-0001")).toEqual({ outcome: "started" });
      expect(await nonceUsed(tx, grantor, "nonce-first-0001")).toBe(true);
      await a.finish(200, { answer: 1 });
      // The exact retry, with the spent nonce or a new one: the stored answer, and the new nonce is not spent.
      expect(await a.begin(1, "h1", "nonce-first-0001")).toEqual({ outcome: "replay", status: 200, body: { answer: 1 } });
      expect(await a.begin(2, "h1", "nonce-retry-0002")).toEqual({ outcome: "replay", status: 200, body: { answer: 1 } });
      expect(await nonceUsed(tx, grantor, "nonce-retry-0002")).toBe(false);
      expect(await a.begin(3, "h2", "nonce-first-0001")).toEqual({ outcome: "mismatch" });
      // Another key under the spent nonce: HA402, and the key's record is not left behind.
      const b = store(tx, grantor);
      await expect(tx.savepoint((sp) => store(sp, grantor, b.record.key).begin(4, "h1", "nonce-first-0001"))).rejects.toMatchObject({
        code: "HA402",
      });
      expect(await b.row()).toBeUndefined();
    });
  });

  it("a request still running answers in_flight with how long it has run and how long its lease has left", async () => {
    await rolledBack(async (tx) => {
      const grantor = await seedGrantor(tx, { at: T0 });
      const a = store(tx, grantor);
      expect(await a.begin(0, "h1")).toEqual({ outcome: "started" });
      expect(await a.begin(17.5, "h1")).toEqual({ outcome: "in_flight", running_seconds: 17.5, lease_left_seconds: 42.5 });
      expect(await a.begin(59.75, "h1")).toEqual({ outcome: "in_flight", running_seconds: 59.75, lease_left_seconds: 0.25 });
      // Once the lease has run out, the request that died is taken over.
      expect(await a.begin(60, "h1")).toEqual({ outcome: "started" });
    });
  });
});

describe("the act and its stored answer commit together", () => {
  it("capture_record stores the answer it is given in its own transaction; when it fails, nothing is stored", async () => {
    await rolledBack(async (tx) => {
      const grantor = await seedGrantor(tx, { at: T0 });
      const a = store(tx, grantor);
      await a.begin(0, "h1");
      const first = act(grantor, 1);
      const approval = { success: true, status: "approved", transaction_id: first.capture.id };
      await rawRpc(tx, "capture_record", { ...first, stored_response: { record: a.record, status: 200, body: approval } });
      expect(await a.row()).toEqual({ state: "done", response_status: 200, response_body: approval, mandate_id: null });
      expect(await captured(tx, first.capture.id)).toBe(true);

      // A capture used again (HA411) rolls back with its answer: the key stays in flight, to be answered afterwards.
      const b = store(tx, grantor);
      await b.begin(2, "h2");
      const again = act(grantor, 3);
      again.capture.capture_nonce = first.capture.capture_nonce;
      await expect(
        tx.savepoint((sp) => rawRpc(sp, "capture_record", { ...again, stored_response: { record: b.record, status: 200, body: {} } })),
      ).rejects.toMatchObject({ code: "HA411" });
      expect(await b.row()).toMatchObject({ state: "in_flight", response_body: null });
    });
  });

  it("an act whose key another request finished is rolled back with HA412: at most one act per key", async () => {
    await rolledBack(async (tx) => {
      const grantor = await seedGrantor(tx, { at: T0 });
      const a = store(tx, grantor);
      await a.begin(0, "h1");
      await a.finish(403, { code: "FACE_MATCH_BELOW_THRESHOLD" });
      const late = act(grantor, 1);
      await expect(
        tx.savepoint((sp) => rawRpc(sp, "capture_record", { ...late, stored_response: { record: a.record, status: 200, body: {} } })),
      ).rejects.toMatchObject({ code: "HA412" });
      expect(await captured(tx, late.capture.id)).toBe(false);
      expect(await a.row()).toMatchObject({ state: "done", response_status: 403 });
    });
  });

  it("mandate_transaction builds the approval and stores it with the consumption, naming the mandate, so the ledger answers its replays", async () => {
    await rolledBack(async (tx) => {
      const grantor = await seedGrantor(tx, { at: T0 });
      const { id: mandateId } = await issueMandate(tx, grantor, {
        scopes: ["login"],
        ceiling: { kind: "count", count: 3, period: "lifetime" },
      });
      const a = store(tx, grantor);
      await a.begin(1, "h1");
      const stand = act(grantor, 2);
      const { decision, approval } = await rawRpc<Answer>(tx, "mandate_transaction", {
        identity_id: grantor.identityId,
        consume: {
          mandate_id: mandateId,
          merchant_id: grantor.merchantId,
          environment: "test",
          now: at(2),
          idempotency_key: a.record.key,
          request_hash: "h1",
          scope: "login",
        },
        capture: { ...stand.capture, assurance_level: "face_voice_doc" },
        receipt: stand.receipt,
        stored_response: { record: a.record },
      });
      expect(approval).toEqual({
        success: true,
        status: "approved",
        transaction_id: stand.capture.id,
        service_hash: stand.capture.service_hash,
        immutability_seal: stand.receipt.seal,
        assurance_level: "mandate",
        device_binding: "none",
        receipt_id: stand.receipt.id,
        receipt_code: stand.receipt.code,
        mandate: {
          mandate_id: `mdt_${mandateId.replace(/-/g, "")}`,
          consumption_id: decision.consumption_id,
          scope_used: "login",
          granted_to: `agent_${mandateId}`,
          assurance_level: "face_voice_doc",
          device_binding: "none",
          idempotent_replay: false,
          remaining: { amount: null, currency: null, count: 2 },
          at_limit: false,
        },
      });
      // Stored in the same transaction as the consumption and the capture it answers.
      expect(await a.row()).toEqual({ state: "done", response_status: 200, response_body: approval, mandate_id: mandateId });
      expect(await captured(tx, stand.capture.id)).toBe(true);

      // A consumption's replay is the ledger's to answer (mandate_consume's one rule), before and after revocation.
      const replay = (seconds: number) => a.begin(seconds, "h1", `nonce-${seconds}-replay`);
      expect(await replay(3)).toEqual({ outcome: "ledger" });
      await rawRpc(tx, "mandate_revoke", {
        mandate_id: mandateId,
        now: at(4),
        by: "issuing_merchant",
        merchant_id: grantor.merchantId,
        environment: "test",
      });
      expect(await replay(5)).toEqual({ outcome: "ledger" });
      expect(await a.begin(6, "h2", "nonce-6-other")).toEqual({ outcome: "mismatch" });
    });
  });
});

describe("stand_in_transaction: the sink's stand-in in one call (issue 28, D-690)", () => {
  /** The call as the sink makes it for the grantor's mandate, receipts signed at every level (one id and code). */
  function standIn(tx: Tx, grantor: Grantor, mandateId: string, seconds: number, extra: Answer = {}) {
    const stand = act(grantor, seconds);
    const { assurance_level: _level, identity_id: _identity, liveness_passed: _l, liveness_reason: _r, ...capture } = stand.capture;
    const receipts = Object.fromEntries(
      ["face", "face_voice", "face_voice_doc"].map((level) => [
        level,
        { ...stand.receipt, jws: `jws.${level}`, seal: createHash("sha256").update(`${stand.receipt.id} ${level}`).digest("hex") },
      ]),
    );
    const call = rawRpc<Answer>(tx, "stand_in_transaction", {
      resolve: { merchant_id: grantor.merchantId, environment: "test", now: at(seconds), subject_ref: grantor.subjectRef },
      document_required: false,
      consume: {
        mandate_id: mandateId,
        merchant_id: grantor.merchantId,
        environment: "test",
        now: at(seconds),
        idempotency_key: `idem-${randomUUID()}`,
        request_hash: "h",
        scope: "login",
      },
      capture,
      receipts,
      ...extra,
    });
    return { call, capture: stand.capture, receipt: stand.receipt, receipts };
  }

  it("acts with the receipt of the mandate's level; writes nothing for a person it refuses or a mandate not this merchant's", async () => {
    await rolledBack(async (tx) => {
      const grantor = await seedGrantor(tx, { at: T0 });
      // The person consented with the merchant (seedGrantor seeds no consent): identity_resolve finds only such a person.
      await tx.unsafe(
        `insert into private.consents (identity_id, merchant_id, version, retention_days, granted_at) values ($1, $2, 'v1', 30, $3)`,
        [grantor.identityId, grantor.merchantId, at(0)],
      );
      const { id: mandateId } = await issueMandate(tx, grantor, {
        scopes: ["login"],
        ceiling: { kind: "count", count: 3, period: "lifetime" },
      });
      const [{ level }] = await tx.unsafe(`select assurance_level as level from private.mandates where id = $1`, [mandateId]);

      const approved = standIn(tx, grantor, mandateId, 1);
      const answer = await approved.call;
      expect(answer.identity).toEqual({
        identity_id: grantor.identityId,
        erased: false,
        consent_revoked: false,
        session_active: null,
        has_document: true,
      });
      expect(answer.approval).toMatchObject({
        status: "approved",
        immutability_seal: approved.receipts[level]!.seal,
        receipt_id: approved.receipt.id,
      });
      const [kept] = await tx.unsafe(
        `select r.jws, c.assurance_level from private.receipts r join private.captures c on c.id = r.capture_id where r.id = $1`,
        [approved.receipt.id],
      );
      expect(kept).toEqual({ jws: `jws.${level}`, assurance_level: level });

      // A mandate of another merchant: refused, nothing written.
      const other = await seedGrantor(tx, { at: T0 });
      const { id: foreignId } = await issueMandate(tx, other, { scopes: ["login"] });
      const foreign = standIn(tx, grantor, foreignId, 2);
      expect(await foreign.call).toMatchObject({ decision: { allowed: false, reason: "mandate_not_found" }, approval: null });
      expect(await captured(tx, foreign.capture.id)).toBe(false);

      // An act that needs a document the person lacks: the person comes back, no decision, nothing written.
      await tx.unsafe(`delete from private.identity_documents where identity_id = $1`, [grantor.identityId]);
      const undocumented = standIn(tx, grantor, mandateId, 3, { document_required: true });
      expect(await undocumented.call).toMatchObject({ identity: { has_document: false }, decision: null, approval: null });
      expect(await captured(tx, undocumented.capture.id)).toBe(false);

      // An erased person: the same.
      await tx.unsafe(`update private.identities set erased_at = $2 where id = $1`, [grantor.identityId, at(4)]);
      const erased = standIn(tx, grantor, mandateId, 5);
      expect(await erased.call).toMatchObject({ identity: { erased: true }, decision: null, approval: null });
      expect(await captured(tx, erased.capture.id)).toBe(false);

      // A person this merchant does not know.
      const unknown = standIn(tx, other, mandateId, 6);
      expect(await unknown.call).toEqual({ identity: null, decision: null, approval: null });
      expect(await captured(tx, unknown.capture.id)).toBe(false);
    });
  });
});
