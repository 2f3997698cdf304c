import { describe, expect, it } from "vitest";
import { rpc } from "../../shared/kernel/db/rpc";
import { revokeConsent } from "../harness/consent";
import { merchantFactory, testDb } from "../harness/factories";
import { errorOf } from "../harness/http";
import { enrollStranger, newStranger } from "../harness/identity";
import { claim, liveClaim, proofOf, v1 } from "../harness/resource-api";
import { bootedSession, createdSession, sessionBody } from "../harness/resource-sessions";
import { screenCall } from "../harness/sessions";

type Merchant = Awaited<ReturnType<typeof merchantFactory>>;
type Stranger = ReturnType<typeof newStranger>;

async function billed(merchant: Merchant, environment = "test") {
  return testDb()`select identity_id, channel, reference, billed_at from private.billing_ledger
    where merchant_id = ${merchant.merchant_id} and environment = ${environment}`;
}

function usage(merchant: Merchant, now = new Date()) {
  return rpc(testDb(), "billing_usage", { merchant_id: merchant.merchant_id, now: now.toISOString() });
}

function setAllowance(merchant: Merchant, monthlyClaims: number, environment: "test" | "live" = "test") {
  return rpc(testDb(), "billing_allowance_set", {
    merchant_id: merchant.merchant_id,
    environment,
    monthly_claims: monthlyClaims,
    now: new Date().toISOString(),
  });
}

/** The statuses of settled responses, sorted, for exact counts. */
const statuses = (results: { status: number }[]) => results.map((r) => r.status).sort();

describe("billing: a claim is billed once per person for life", () => {
  it("bills a claim once, in the claim's transaction: one ledger row naming the claim's capture", async () => {
    const merchant = await merchantFactory();
    const res = await claim(merchant.keys.sk_test, newStranger().capture());
    expect(res.status, res.text).toBe(201);
    const rows = await billed(merchant);
    expect(rows).toHaveLength(1);
    expect(rows[0].channel).toBe("api");
    const [capture] = await testDb()`select c.id::text from private.captures c join private.receipts r on r.capture_id = c.id
      where r.id = ${res.body.receipt.id}`;
    expect(rows[0].reference).toBe(capture.id);
    expect((await usage(merchant)).environments.test).toMatchObject({
      claims_billed: 1,
      persons_billed: 1,
      allowance: 100,
      allowance_remaining: 99,
    });
  });

  it("never bills the same person twice: a claim after the person withdrew consent succeeds free", async () => {
    const merchant = await merchantFactory();
    const person = newStranger();
    const first = await claim(merchant.keys.sk_test, person.capture());
    expect(first.status).toBe(201);
    expect((await revokeConsent(merchant.keys.sk_test, { subject_ref: first.body.facetoken })).status).toBe(200);
    const again = await claim(merchant.keys.sk_test, person.capture());
    expect(again.status, again.text).toBe(201);
    expect(again.body.facetoken).toBe(first.body.facetoken);
    expect(await billed(merchant)).toHaveLength(1);
  });

  it("bills nothing for recognitions, attributes, reads, refusals and failed calls", async () => {
    const merchant = await merchantFactory();
    const person = newStranger();
    const key = merchant.keys.sk_test;
    const { facetoken } = (await claim(key, person.capture())).body;
    for (let i = 0; i < 5; i++) {
      expect((await v1("/identity/recognitions", { key, body: { proof: proofOf(person.capture()) } })).status).toBe(200);
    }
    const attribute = await v1("/identity/attributes", {
      key,
      body: { proof: proofOf(person.capture()), facetoken, attribute: "document_verified" },
    });
    expect(attribute.status).toBe(200);
    expect((await v1("/mandates", { key })).status).toBe(200);
    expect(errorOf(await claim(key, person.capture()))).toEqual({ status: 409, code: "already_claimed" });
    expect(errorOf(await claim(key, newStranger().capture({ attack: "photo" })))).toEqual({ status: 403, code: "liveness_required" });
    expect(errorOf(await claim(key, newStranger().capture(), { body: { source: "document" } }))).toEqual({
      status: 403,
      code: "document_required",
    });
    expect(await billed(merchant)).toHaveLength(1);
  });

  it("keeps the ledger append-only", async () => {
    const merchant = await merchantFactory();
    expect((await claim(merchant.keys.sk_test, newStranger().capture())).status).toBe(201);
    await expect(
      testDb()`update private.billing_ledger set channel = 'session' where merchant_id = ${merchant.merchant_id}`,
    ).rejects.toMatchObject({
      code: "HA423",
    });
    await expect(testDb()`delete from private.billing_ledger where merchant_id = ${merchant.merchant_id}`).rejects.toMatchObject({
      code: "HA423",
    });
  });
});

describe("billing under retries and races", () => {
  it("never bills an idempotent replay twice: sequential and racing retries of one key, and the key's rerun after 24 hours", async () => {
    const merchant = await merchantFactory();
    const at = new Date();
    const shot = newStranger().capture({ at });
    const idempotencyKey = `claim-${crypto.randomUUID()}`;
    const first = await claim(merchant.keys.sk_test, shot, { idempotencyKey, now: at });
    expect(first.status, first.text).toBe(201);
    const retries = await Promise.all(Array.from({ length: 4 }, () => claim(merchant.keys.sk_test, shot, { idempotencyKey, now: at })));
    for (const retry of retries) {
      expect(retry.status).toBe(201);
      expect(retry.body).toEqual(first.body);
    }
    // After 24 hours the key is forgotten and the request runs again: its proof is stale by then.
    const later = new Date(at.getTime() + 25 * 3600_000);
    const rerun = await claim(merchant.keys.sk_test, shot, { idempotencyKey, now: later });
    expect(errorOf(rerun)).toEqual({ status: 403, code: "liveness_required" });
    expect(await billed(merchant)).toHaveLength(1);
  });

  it("two racing first claims of one key: one runs, the other is 409 idempotency_in_flight or the replay; billed once", async () => {
    const merchant = await merchantFactory();
    const shot = newStranger().capture();
    const idempotencyKey = `claim-${crypto.randomUUID()}`;
    const answers = await Promise.all([0, 1].map(() => claim(merchant.keys.sk_test, shot, { idempotencyKey })));
    expect(answers.filter((a) => a.status === 201).length).toBeGreaterThanOrEqual(1);
    for (const answer of answers)
      if (answer.status !== 201) expect(errorOf(answer)).toEqual({ status: 409, code: "idempotency_in_flight" });
    expect(await billed(merchant)).toHaveLength(1);
  });

  it("two racing claims of one person with two captures: one 201, one 409 already_claimed with the same facetoken; billed once", async () => {
    for (let round = 0; round < 3; round++) {
      const merchant = await merchantFactory();
      const person = newStranger();
      const answers = await Promise.all([person.capture(), person.capture()].map((shot) => claim(merchant.keys.sk_test, shot)));
      expect(statuses(answers), answers.map((a) => a.text).join("\n")).toEqual([201, 409]);
      const [won, lost] = answers[0].status === 201 ? answers : [answers[1], answers[0]];
      expect(lost.body).toMatchObject({ code: "already_claimed", facetoken: won.body.facetoken });
      expect(await billed(merchant)).toHaveLength(1);
    }
  });

  it("the same capture claimed twice at once: one 201, one 409; billed once", async () => {
    const merchant = await merchantFactory();
    const shot = newStranger().capture();
    const answers = await Promise.all([0, 1].map(() => claim(merchant.keys.sk_test, shot)));
    expect(statuses(answers)).toEqual([201, 409]);
    expect(["already_claimed", "capture_replayed"]).toContain(answers.find((a) => a.status === 409)?.body.code);
    expect(await billed(merchant)).toHaveLength(1);
  });
});

describe("the allowance", () => {
  it("is 1,000 claims a month in production and 100 in the sandbox unless the operator set it", async () => {
    const merchant = await merchantFactory();
    const { environments } = await usage(merchant);
    expect(environments.live).toMatchObject({ allowance: 1000, allowance_remaining: 1000, claims_billed: 0 });
    expect(environments.test).toMatchObject({ allowance: 100, allowance_remaining: 100, claims_billed: 0 });
  });

  it("refuses the billable claim beyond it with 402 allowance_exhausted, writing nothing, even among racing claims", async () => {
    const merchant = await merchantFactory();
    await setAllowance(merchant, 2);
    const persons = Array.from({ length: 4 }, () => newStranger());
    const answers = await Promise.all(persons.map((person) => claim(merchant.keys.sk_test, person.capture())));
    expect(statuses(answers), answers.map((a) => a.text).join("\n")).toEqual([201, 201, 402, 402]);
    const refused = answers.find((a) => a.status === 402);
    const firstOfNextMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1));
    expect(refused?.body).toMatchObject({ code: "allowance_exhausted", allowance: 2, resets_at: firstOfNextMonth.toISOString() });
    expect(await billed(merchant)).toHaveLength(2);

    // Nothing of a refused claim was written: the person is not recognised, and their capture is unused.
    const refusedPerson = persons[answers.findIndex((a) => a.status === 402)];
    const recognised = await v1("/identity/recognitions", {
      key: merchant.keys.sk_test,
      body: { proof: proofOf(refusedPerson.capture()) },
    });
    expect(recognised.body.matched).toBe(false);
    // A person already claimed is still told so (a 409 bills nothing), and the sandbox does not touch production.
    const claimedPerson = persons[answers.findIndex((a) => a.status === 201)];
    expect(errorOf(await claim(merchant.keys.sk_test, claimedPerson.capture()))).toEqual({ status: 409, code: "already_claimed" });
    expect((await liveClaim(merchant.keys.sk_live, refusedPerson)).status).toBe(201);
    expect(await billed(merchant, "live")).toHaveLength(1);
  });

  it("opens again in the next month, and when the operator raises it", async () => {
    const merchant = await merchantFactory();
    await setAllowance(merchant, 0);
    const person = newStranger();
    expect(errorOf(await claim(merchant.keys.sk_test, person.capture()))).toEqual({ status: 402, code: "allowance_exhausted" });
    await setAllowance(merchant, 1);
    expect((await claim(merchant.keys.sk_test, person.capture())).status).toBe(201);
    const other = newStranger();
    expect(errorOf(await claim(merchant.keys.sk_test, other.capture()))).toEqual({ status: 402, code: "allowance_exhausted" });

    const now = new Date();
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 2, 12));
    const res = await claim(merchant.keys.sk_test, other.capture({ at: nextMonth }), { now: nextMonth });
    expect(res.status, res.text).toBe(201);
    expect((await usage(merchant, nextMonth)).environments.test).toMatchObject({
      claims_billed: 1,
      persons_billed: 2,
      allowance_remaining: 0,
    });
    expect((await usage(merchant, now)).environments.test).toMatchObject({ claims_billed: 1 });
  });
});

describe("billing of hosted sessions", () => {
  const HOSTED_CONSENT = { version: "hosted-capture-1", retention_days: 365, accepted: true };

  /** A /v1 session of `mode` booted on the screen, and its capture body for `person`. */
  async function screenFor(merchant: Merchant, mode: string, extra: Record<string, unknown> = {}) {
    const session = await createdSession(merchant.keys.sk_test, sessionBody(mode, extra));
    const screen = await bootedSession(session.url);
    return {
      session,
      complete: (person: Stranger, body: Record<string, unknown> = {}, attack?: "photo") =>
        screenCall("complete", screen.screen_token, {
          capture_nonce: screen.capture_nonce,
          face_template: person.capture({ nonce: screen.capture_nonce, light: true, attack }).descriptor,
          ...body,
        }),
      cancel: () => screenCall("cancel", screen.screen_token, {}),
    };
  }

  it("a claim session follows the claim rule: billed when it completes approved, once per person, with the session as reference", async () => {
    const merchant = await merchantFactory();
    const person = newStranger();
    const first = await screenFor(merchant, "claim");
    expect((await first.complete(person, { consent: HOSTED_CONSENT })).status).toBe(200);
    const rows = await billed(merchant);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ channel: "session", reference: first.session.id });

    // The same person through a second claim session, and then through POST /identity/claims: billed before.
    const second = await screenFor(merchant, "claim");
    expect((await second.complete(person, { consent: HOSTED_CONSENT })).status).toBe(200);
    expect(errorOf(await claim(merchant.keys.sk_test, person.capture()))).toEqual({ status: 409, code: "already_claimed" });
    expect(await billed(merchant)).toHaveLength(1);
  });

  it("never bills an abandoned, refused or expired claim session, nor a recognise session", async () => {
    const merchant = await merchantFactory();
    const cancelled = await screenFor(merchant, "claim");
    expect((await cancelled.cancel()).status).toBe(200);
    const refused = await screenFor(merchant, "claim");
    await refused.complete(newStranger(), { consent: HOSTED_CONSENT }, "photo");
    const failed = await v1(`/sessions/${refused.session.id}`, { key: merchant.keys.sk_test });
    expect(failed.body).toMatchObject({ status: "completed", result: { approved: false } });
    const expiring = await createdSession(merchant.keys.sk_test, sessionBody("claim"));
    expect(
      (await v1(`/sessions/${expiring.id}`, { key: merchant.keys.sk_test, now: new Date(Date.now() + 31 * 60_000) })).body.status,
    ).toBe("expired");

    const person = newStranger();
    const { facetoken } = (await claim(merchant.keys.sk_test, person.capture())).body;
    const recognise = await screenFor(merchant, "recognise", { facetoken });
    const recognised = await recognise.complete(person);
    expect(recognised.status, recognised.text).toBe(200);
    const rows = await billed(merchant);
    expect(rows.map((r) => r.channel)).toEqual(["api"]);
  });

  it("refuses a claim session at creation once the allowance is used up (402), but not a recognise session", async () => {
    const merchant = await merchantFactory();
    await setAllowance(merchant, 0);
    const res = await v1("/sessions", { key: merchant.keys.sk_test, body: sessionBody("claim") });
    expect(errorOf(res)).toEqual({ status: 402, code: "allowance_exhausted" });
    expect(res.body).toMatchObject({ allowance: 0, resets_at: expect.any(String) });
    const person = await enrollStranger(merchant.keys.pk_test);
    const recognise = await v1("/sessions", {
      key: merchant.keys.sk_test,
      body: sessionBody("recognise", { facetoken: person.subject_ref }),
    });
    expect(recognise.status, recognise.text).toBe(201);
  });
});
