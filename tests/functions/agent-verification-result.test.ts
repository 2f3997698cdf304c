/**
 * agent-verification-result over HTTP (spec 3.2, 4.15, 6 rule 4): a card's state is read from what
 * its capture on the hosted screen recorded: pending, opened (booted once), verified (the person
 * proved presence: assurance level and receipt), refused (the capture's reason, or the person's
 * cancel), expired (by the request clock, nothing running). Every state is a 200 with reason,
 * developer_message and a localised user_message; no webhook; nobody declares a card verified.
 */
import { describe, expect, it } from "vitest";
import { rpc } from "../../shared/kernel/db/rpc";
import { sha256Hex } from "../../shared/lib/crypto";
import { addOwner } from "../../shared/merchants/accounts";
import { ownedMerchant } from "../harness/agents";
import { disclose, discloseBody } from "../harness/consent";
import { testDb } from "../harness/factories";
import { call, errorOf } from "../harness/http";
import { enrollStranger, newStranger } from "../harness/identity";
import { issue, presenceCapture } from "../harness/mandates";
import { cardResult, requestCard, screenClient, tokenOfCard } from "../harness/verifications";

/** This file's person at the screen (the screen limits its endpoints per client address). */
const { boot, screenCall } = screenClient();

const at = (base: Date, seconds: number) => new Date(base.getTime() + seconds * 1000);

/** An owned merchant and a card its owner minted at `now`. */
async function mintedCard(body: Record<string, unknown> = {}, now?: Date) {
  const { merchant, owner } = await ownedMerchant();
  const res = await requestCard(
    owner.session_token,
    { merchant_id: merchant.merchant_id, purpose: "Confirm the transfer", ...body },
    { now },
  );
  expect(res.status, res.text).toBe(200);
  return { merchant, owner, card: res.body as { verification_id: string; url: string; expires_at: string } };
}

/** Boots the screen on a card's url; answers the boot body. */
async function open(url: string, now?: Date) {
  const res = await boot(tokenOfCard(url), { now });
  expect(res.status, res.text).toBe(200);
  return res.body as { screen_token: string; capture_nonce: string; [field: string]: any };
}

/** A fresh capture of `person` answering the screen's nonce. */
function captureBody(person: { capture(o: { nonce: string; light: boolean }): { descriptor: unknown } }, nonce: string) {
  return { capture_nonce: nonce, face_template: person.capture({ nonce, light: true }).descriptor };
}

describe("a card's capture proves presence and authorises nothing (issue 25)", () => {
  it("is no proof of a mandate: the card's capture, read from receipt-verify, given to mandate-issue is 403 PROOF_INVALID (not_a_grant)", async () => {
    const { merchant, owner, card } = await mintedCard({ purpose: "Confirm it is you" });
    // The owner has a document on record, so a payment mandate would be grantable with a real grant capture.
    await presenceCapture(merchant, owner, { document: true });
    const screen = await open(card.url);
    expect(screen.card).toMatchObject({ verification_id: card.verification_id });
    const done = await screenCall("complete", screen.screen_token, captureBody(owner, screen.capture_nonce));
    expect(done.body.outcome).toMatchObject({ approved: true });
    const receipt = await call("receipt-verify", { query: { code: done.body.outcome.receipt_code } });
    const captureId = receipt.body.transaction_id as string;
    expect(captureId).toMatch(/^[0-9a-f-]{36}$/);

    const million = await issue(merchant.keys.sk_test, {
      granted_by: owner.subject_ref,
      granted_to: "agent_card_reader",
      granted_to_kind: "agent",
      scopes: ["payment"],
      ceiling: { kind: "amount", amount: 100_000_000, currency: "USD", period: "lifetime" },
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
      proof: { capture_id: captureId },
    });
    expect(errorOf(million)).toEqual({ status: 403, code: "PROOF_INVALID" });
    expect(million.body.reason).toBe("not_a_grant");
    expect(await testDb()`select id from private.mandates where merchant_id = ${merchant.merchant_id}`).toHaveLength(0);
    const [row] = await testDb()`select purpose, granted_mandate_id from private.captures where id = ${captureId}`;
    expect(row).toEqual({ purpose: "verify", granted_mandate_id: null });

    // Nor does it disclose anything about the person.
    const disclosed = await disclose(
      merchant.keys.sk_test,
      discloseBody(merchant, captureId, [{ key: "subject_ref", disclosure_type: "value" }]),
    );
    expect(errorOf(disclosed)).toEqual({ status: 403, code: "ATTESTATION_INVALID" });
    expect(disclosed.body.reason).toBe("not_for_disclosure");
  });
});

describe("agent-verification-result: the states", () => {
  it("pending, then opened (once), then verified by the owner's capture: assurance level and a receipt receipt-verify confirms", async () => {
    const { merchant, owner, card } = await mintedCard({ external_ref: "ref-1" });
    const pending = await cardResult(owner.session_token, card.verification_id);
    expect(pending.status).toBe(200);
    expect(pending.headers.get("cache-control")).toBe("no-store");
    expect(pending.body).toEqual({
      verification_id: card.verification_id,
      merchant_id: merchant.merchant_id,
      external_ref: "ref-1",
      state: "pending",
      expires_at: card.expires_at,
      reason: "pending",
      developer_message: expect.any(String),
      user_message: "The verification has not been opened yet.",
    });

    const screen = await open(card.url);
    expect(screen).toMatchObject({
      action: "verify",
      merchant_id: merchant.merchant_id,
      consent: null,
      card: { verification_id: card.verification_id, purpose: "Confirm the transfer", agent_name: null, requested_by: "owner" },
    });
    expect((await cardResult(owner.session_token, card.verification_id, { locale: "pt-BR" })).body).toMatchObject({
      state: "opened",
      reason: "opened",
      user_message: "A pessoa está comprovando presença agora.",
    });

    const done = await screenCall("complete", screen.screen_token, captureBody(owner, screen.capture_nonce));
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({
      state: "completed",
      action: "verify",
      outcome: { approved: true, reason: null, user_message: "Your presence is verified. You can close this page." },
    });
    const verified = await cardResult(owner.session_token, card.verification_id, { locale: "es" });
    expect(verified.body).toEqual({
      verification_id: card.verification_id,
      merchant_id: merchant.merchant_id,
      external_ref: "ref-1",
      state: "verified",
      expires_at: card.expires_at,
      reason: "verified",
      developer_message: expect.any(String),
      user_message: "Presencia verificada.",
      assurance_level: "face_voice",
      receipt_code: done.body.outcome.receipt_code,
    });
    const receipt = await call("receipt-verify", { query: { code: verified.body.receipt_code } });
    expect(receipt.body).toMatchObject({
      valid: true,
      action: "ACTION_LOGIN",
      merchant_id: merchant.merchant_id,
      service_hash: `agent_verification:${card.verification_id.slice(3)}`,
    });
    // Final: still verified after the ttl.
    expect((await cardResult(owner.session_token, card.verification_id, { now: at(new Date(), 3600) })).body.state).toBe("verified");
  });

  it("any person the merchant knows proves presence; the verifying person is not revealed to the requester", async () => {
    const { merchant, owner, card } = await mintedCard();
    const customer = await enrollStranger(merchant.keys.pk_test);
    const screen = await open(card.url);
    expect((await screenCall("complete", screen.screen_token, captureBody(customer, screen.capture_nonce))).body.state).toBe("completed");
    const result = await cardResult(owner.session_token, card.verification_id);
    expect(result.body.state).toBe("verified");
    expect(result.text).not.toContain(customer.subject_ref);
    expect(result.text).not.toContain(owner.subject_ref);
  });

  it("refused with the capture's reason: a face the merchant does not know, a failed liveness, a coerced person, the person's cancel", async () => {
    const stranger = await mintedCard();
    const screen = await open(stranger.card.url);
    const refused = await screenCall("complete", screen.screen_token, captureBody(newStranger(), screen.capture_nonce));
    expect(refused.body).toMatchObject({ state: "failed", outcome: { approved: false, reason: "not_recognised" } });
    expect((await cardResult(stranger.owner.session_token, stranger.card.verification_id, { locale: "pt-BR" })).body).toEqual({
      verification_id: stranger.card.verification_id,
      merchant_id: stranger.merchant.merchant_id,
      external_ref: null,
      state: "refused",
      expires_at: stranger.card.expires_at,
      reason: "not_recognised",
      developer_message: expect.stringContaining("not_recognised"),
      user_message: "Não reconhecemos você. Talvez seja preciso fazer o cadastro primeiro.",
    });

    const liveness = await mintedCard();
    const live = await open(liveness.card.url);
    const failed = await screenCall("complete", live.screen_token, captureBody(liveness.owner, live.capture_nonce), {
      headers: { "x-service-scenario": "liveness_fail" },
    });
    expect(failed.body.outcome).toMatchObject({ approved: false, reason: "liveness_fail" });
    expect((await cardResult(liveness.owner.session_token, liveness.card.verification_id)).body).toMatchObject({
      state: "refused",
      reason: "liveness_fail",
      user_message: "We could not confirm that you were present.",
    });

    const coerced = await mintedCard();
    const scared = await open(coerced.card.url);
    const shot = {
      capture_nonce: scared.capture_nonce,
      face_template: coerced.owner.capture({ nonce: scared.capture_nonce, light: true, state: "coerced" }).descriptor,
    };
    expect((await screenCall("complete", scared.screen_token, shot)).body.outcome).toMatchObject({ reason: "coercion_detected" });
    expect((await cardResult(coerced.owner.session_token, coerced.card.verification_id)).body).toMatchObject({
      state: "refused",
      reason: "coercion_detected",
    });

    const cancelled = await mintedCard();
    const left = await open(cancelled.card.url);
    expect((await screenCall("cancel", left.screen_token, { reason: "permission_denied" })).body.state).toBe("cancelled");
    expect((await cardResult(cancelled.owner.session_token, cancelled.card.verification_id, { locale: "es" })).body).toMatchObject({
      state: "refused",
      reason: "permission_denied",
      user_message: expect.stringContaining("cámara"),
    });
    // One capture per card: a refused card stays refused.
    const again = await screenCall("complete", left.screen_token, captureBody(cancelled.owner, left.capture_nonce));
    expect(errorOf(again)).toEqual({ status: 409, code: "SESSION_ENDED" });
  });

  it("expired by the request clock, nothing running: never opened, or opened and never completed; a late boot is 410", async () => {
    const t0 = new Date();
    const unopened = await mintedCard({ ttl_seconds: 60 }, t0);
    const read = (c: typeof unopened, now: Date, locale?: string) =>
      cardResult(c.owner.session_token, c.card.verification_id, { now, locale });
    expect((await read(unopened, at(t0, 59))).body.state).toBe("pending");
    expect((await read(unopened, at(t0, 60), "pt-BR")).body).toMatchObject({
      state: "expired",
      reason: "expired",
      user_message: "Esta verificação expirou antes de a presença ser comprovada. Peça uma nova.",
    });
    expect(errorOf(await boot(tokenOfCard(unopened.card.url), { now: at(t0, 61) }))).toEqual({ status: 410, code: "SESSION_EXPIRED" });

    const abandoned = await mintedCard({ ttl_seconds: 60 }, t0);
    const screen = await open(abandoned.card.url, at(t0, 5));
    expect((await read(abandoned, at(t0, 30))).body.state).toBe("opened");
    expect((await read(abandoned, at(t0, 61))).body.state).toBe("expired");
    const late = await screenCall("complete", screen.screen_token, captureBody(abandoned.owner, screen.capture_nonce), { now: at(t0, 61) });
    expect(errorOf(late)).toEqual({ status: 410, code: "SESSION_EXPIRED" });
    // The outbox worker's tick stores the expiry; the card reads the same.
    await rpc(testDb(), "hosted_sessions_expire", { now: at(t0, 3600).toISOString() });
    expect((await read(abandoned, at(t0, 3600))).body.state).toBe("expired");
  });
});

describe("agent-verification-result: one capture, nobody declares", () => {
  it("opened twice: the second boot is 409 SESSION_ALREADY_CONSUMED and the card stays with the first screen", async () => {
    const { owner, card } = await mintedCard();
    const first = await open(card.url);
    expect(errorOf(await boot(tokenOfCard(card.url)))).toEqual({ status: 409, code: "SESSION_ALREADY_CONSUMED" });
    expect((await cardResult(owner.session_token, card.verification_id)).body.state).toBe("opened");
    expect((await screenCall("complete", first.screen_token, captureBody(owner, first.capture_nonce))).body.state).toBe("completed");
  });

  it("nothing declares a card verified: an approval posted to the screen is refused and judges nothing; a capture of another nonce neither", async () => {
    const { owner, card } = await mintedCard();
    const screen = await open(card.url);
    const forged = await screenCall("complete", screen.screen_token, { approved: true, state: "verified" });
    expect(errorOf(forged)).toEqual({ status: 422, code: "FACE_TEMPLATE_REQUIRED" });
    const otherNonce = await screenCall("complete", screen.screen_token, captureBody(owner, "hcn_otherNonceOfAnotherScreen00000000"));
    expect(errorOf(otherNonce)).toEqual({ status: 400, code: "INVALID_INPUT" });
    expect((await cardResult(owner.session_token, card.verification_id)).body.state).toBe("opened");
    const rows = await testDb()`select count(*)::int as n from private.captures where capture_nonce = ${screen.capture_nonce}`;
    expect(rows[0].n).toBe(0);
  });

  it("writes no webhook: no session.* event for a card that ended or expired", async () => {
    const t0 = new Date();
    const { merchant, owner, card } = await mintedCard({}, t0);
    const screen = await open(card.url, t0);
    await screenCall("complete", screen.screen_token, captureBody(owner, screen.capture_nonce), { now: at(t0, 1) });
    const other = await requestCard(owner.session_token, { merchant_id: merchant.merchant_id, ttl_seconds: 60 }, { now: t0 });
    await rpc(testDb(), "hosted_sessions_expire", { now: at(t0, 120).toISOString() });
    expect((await cardResult(owner.session_token, other.body.verification_id, { now: at(t0, 120) })).body.state).toBe("expired");
    const events = await testDb()`select count(*)::int as n from private.outbox_events where merchant_id = ${merchant.merchant_id}::uuid`;
    expect(events[0].n).toBe(0);
  });
});

describe("agent-verification-result: who may read", () => {
  it("an owner of the card's merchant; anyone else 404 not_found; a merchant key 401 USER_TOKEN_REQUIRED; no id 400", async () => {
    const { merchant, owner, card } = await mintedCard();
    const secondOwner = await enrollStranger(merchant.keys.pk_test);
    await addOwner(testDb(), merchant.merchant_id, secondOwner.subject_ref, new Date());
    expect((await cardResult(secondOwner.session_token, card.verification_id)).body.state).toBe("pending");
    expect((await cardResult(owner.session_token, card.verification_id.slice(3))).body.state).toBe("pending");

    const notFound = { status: 404, code: "not_found" };
    const customer = await enrollStranger(merchant.keys.pk_test);
    const elsewhere = await ownedMerchant();
    expect(errorOf(await cardResult(customer.session_token, card.verification_id))).toEqual(notFound);
    expect(errorOf(await cardResult(elsewhere.owner.session_token, card.verification_id))).toEqual(notFound);
    expect(errorOf(await cardResult(owner.session_token, `av_${"0".repeat(32)}`))).toEqual(notFound);
    expect(errorOf(await cardResult(owner.session_token, "av_nope"))).toEqual(notFound);
    expect(errorOf(await cardResult(null, card.verification_id, { headers: { "x-service-api-key": merchant.keys.sk_test } }))).toEqual({
      status: 401,
      code: "USER_TOKEN_REQUIRED",
    });
    expect(errorOf(await cardResult(null, card.verification_id))).toEqual({ status: 401, code: "USER_TOKEN_REQUIRED" });
    const missing = await call("agent-verification-result", { headers: { authorization: `Bearer ${owner.session_token}` } });
    expect(errorOf(missing)).toEqual({ status: 400, code: "INVALID_INPUT" });
    const extra = await call("agent-verification-result", {
      query: { verification_id: card.verification_id, state: "verified" },
      headers: { authorization: `Bearer ${owner.session_token}` },
    });
    expect(errorOf(extra)).toEqual({ status: 400, code: "INVALID_INPUT" });
    await testDb()`update private.sessions set revoked_at = now() where token_hash = ${await sha256Hex(secondOwner.session_token)}`;
    expect(errorOf(await cardResult(secondOwner.session_token, card.verification_id))).toEqual({ status: 403, code: "ACCESS_REVOKED" });
  });
});
