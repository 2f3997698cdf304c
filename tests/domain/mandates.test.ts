/**
 * The mandate rules at the operations themselves (shared/mandates: issueMandate, checkMandate,
 * consumeMandate, revokeMandate), called with plain inputs against the migrated database. The same
 * rules are held over HTTP by tests/functions/mandates.test.ts and at the RPCs by
 * tests/sql/mandate-rpcs.test.ts; here each is one fast call, with time as the `now` it passes.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Credential } from "../../shared/kernel/authenticate";
import type { MerchantKeyPrincipal, ServicePrincipal, Tenant, UserPrincipal } from "../../shared/kernel/principal";
import { parseWith } from "../../shared/kernel/validation";
import { checkMandate, consumeMandate, type DecisionBody, decisionSchema } from "../../shared/mandates/decision";
import { grantTermsOf, issueMandate, issueSchema } from "../../shared/mandates/issue";
import { getMandate, listMandates } from "../../shared/mandates/read";
import { revokeMandate } from "../../shared/mandates/revoke";
import { type Grantor, grantCapture, seedGrantor } from "../fixtures/mandate-seed";
import { depsAt, domainDb, plusSeconds, refusal, refusedWith, seedSecretKey } from "../harness/domain";

type Answer = Record<string, any>;

const T0 = new Date("2027-03-01T09:00:00.000Z");
const DAY_MS = 86_400_000;

const tenantOf = (grantor: Grantor): Tenant => ({ merchantId: grantor.merchantId, environment: grantor.environment });

/** mandate-issue's body for the grantor's fresh capture, parsed as the surface parses it; `extra` overrides any field. */
function issueBody(grantor: Grantor, extra: Record<string, unknown> = {}) {
  return parseWith(issueSchema, {
    granted_by: grantor.subjectRef,
    granted_to: `agent_${randomUUID()}`,
    granted_to_kind: "agent",
    scopes: ["purchase"],
    ceiling: { kind: "amount", amount: 700, currency: "USD", period: "lifetime" },
    expires_at: new Date(grantor.at.getTime() + 30 * DAY_MS).toISOString(),
    proof: { capture_id: grantor.captureId },
    ...extra,
  });
}

/**
 * Issues through the operation at `now` (the grantor's instant unless given), proven by a fresh
 * grant capture of the body's terms unless `extra` names the proof.
 */
async function issue(
  grantor: Grantor,
  extra: Record<string, unknown> = {},
  now: Date = grantor.at,
  locale?: "en" | "pt-BR",
): Promise<Answer> {
  const body = issueBody(grantor, extra);
  const proof = "proof" in extra ? body.proof : { capture_id: await grantCapture(domainDb(), grantor, grantTermsOf(body, now)) };
  return issueMandate(depsAt(now, locale), tenantOf(grantor), { ...body, proof });
}

/** A decision's body as the surface parses it: the mandate, a purchase in USD unless `action` says otherwise. */
function decision(mandateId: string, action: Record<string, unknown>): DecisionBody {
  return parseWith(decisionSchema, { mandate_id: mandateId, ...action });
}

/** A mandate issued at T0 (unless `grantor` says otherwise) with check, consume and revoke bound to it, as its merchant. */
async function mandate(extra: Record<string, unknown> = {}, grantor?: Grantor) {
  const by = grantor ?? (await seedGrantor(domainDb(), { at: T0 }));
  const issued = await issue(by, extra);
  const caller = { tenant: tenantOf(by) };
  const scope = (issued.scopes as string[])[0];
  const money = issued.ceiling.kind === "amount" || issued.ceiling.kind === "both";
  const defaults = money ? { scope, currency: issued.ceiling.currency } : { scope };
  const body = (action: Record<string, unknown>) => decision(issued.mandate_id, { ...defaults, ...action });
  return {
    grantor: by,
    issued,
    id: issued.mandate_id as string,
    check: (at: Date | string, action: Record<string, unknown> = {}, locale?: "en" | "es") =>
      checkMandate(depsAt(at, locale), caller, body(action)),
    /** Consumes under a fresh Idempotency-Key unless `idempotency` names one (null: malformed, undefined: none). */
    consume: (at: Date | string, action: Record<string, unknown> = {}, idempotency: { key: string | null | undefined } = freshKey()) => {
      const sent = body(action);
      return consumeMandate(depsAt(at), caller, sent, { key: idempotency.key, rawBody: JSON.stringify(sent) });
    },
    revokeAsMerchant: (at: Date | string) => revokeMandate(depsAt(at), merchantKey(by), { mandate_id: issued.mandate_id }),
  };
}

const freshKey = () => ({ key: `idem-${randomUUID()}` });

function merchantKey(grantor: Grantor, merchantId = grantor.merchantId): MerchantKeyPrincipal {
  return { kind: "merchant_key", merchantId, environment: grantor.environment, keyKind: "secret", keyId: randomUUID() };
}

describe("issueMandate: the rules of spec 4.7", () => {
  it("issues against a fresh capture: the capture's assurance, the ceiling as given, scope labels in the caller's locale", async () => {
    const grantor = await seedGrantor(domainDb(), { at: T0 });
    const issued = await issue(grantor, { scopes: ["purchase", "payment"], agent_display_name: "Shopping helper" }, T0, "pt-BR");
    expect(issued).toMatchObject({
      status: "active",
      granted_by: grantor.subjectRef,
      assurance_level: "face_voice_doc",
      agent_display_name: "Shopping helper",
      scopes: ["purchase", "payment"],
      ceiling: { kind: "amount", amount: 700, currency: "USD", count: null, period: "lifetime" },
      scope_labels: [
        { scope: "purchase", label: "Fazer compras" },
        { scope: "payment", label: "Fazer pagamentos" },
      ],
      step_up_of: null,
    });
    expect(issued.mandate_id).toMatch(/^mdt_[0-9a-f]{32}$/);
    expect(issued).not.toHaveProperty("agent_descriptor");
  });

  // Each body breaks one rule; none reaches the database, so the grantor's capture is never spent.
  const refusedBodies: [name: string, extra: Record<string, unknown>, code: string][] = [
    ["a wildcard scope", { scopes: ["*"] }, "WILDCARD_SCOPE_FORBIDDEN"],
    ["a scope with a wildcard suffix", { scopes: ["purchase:*"] }, "WILDCARD_SCOPE_FORBIDDEN"],
    ["a scope outside the vocabulary", { scopes: ["purchase", "teleport"] }, "UNKNOWN_SCOPE"],
    ["task without constraints", { scopes: ["task"], ceiling: { kind: "count", count: 1 } }, "CONSTRAINTS_REQUIRED_FOR_SCOPE"],
    [
      "task with only an empty allowlist",
      { scopes: ["task"], constraints: { merchant_allowlist: [] }, ceiling: { kind: "none" } },
      "CONSTRAINTS_REQUIRED_FOR_SCOPE",
    ],
    ["an amount ceiling on login", { scopes: ["login"] }, "AMOUNT_CEILING_NOT_APPLICABLE"],
    ["an amount ceiling on purchase and login", { scopes: ["purchase", "login"] }, "AMOUNT_CEILING_NOT_APPLICABLE"],
    ["a fractional ceiling amount", { ceiling: { kind: "amount", amount: 10.5, currency: "USD" } }, "AMOUNT_INVALID"],
    ["an amount ceiling without its currency", { ceiling: { kind: "amount", amount: 100 } }, "INVALID_CEILING"],
    ["a count ceiling carrying an amount", { ceiling: { kind: "count", amount: 100, currency: "USD" } }, "INVALID_CEILING"],
    ["both without a count", { ceiling: { kind: "both", amount: 100, currency: "USD" } }, "INVALID_CEILING"],
    ["an amount ceiling of zero", { ceiling: { kind: "amount", amount: 0, currency: "USD" } }, "INVALID_CEILING"],
    ["a blank agent_display_name", { agent_display_name: "   " }, "AGENT_DISPLAY_NAME_EMPTY"],
    ["an agent_display_name of 65 characters", { agent_display_name: "x".repeat(65) }, "AGENT_DISPLAY_NAME_TOO_LONG"],
    ["an empty agent_descriptor", { agent_descriptor: "" }, "AGENT_DESCRIPTOR_EMPTY"],
    ["an agent_descriptor of 141 characters", { agent_descriptor: "x".repeat(141) }, "AGENT_DESCRIPTOR_TOO_LONG"],
    ["expires_at at the instant of issue", { expires_at: T0.toISOString() }, "EXPIRES_AT_NOT_IN_FUTURE"],
    ["expires_at in the past", { expires_at: plusSeconds(T0, -1).toISOString() }, "EXPIRES_AT_NOT_IN_FUTURE"],
    ["a step_up_of that is no mandate id", { step_up_of: "mdt_nope" }, "STEP_UP_OF_INVALID"],
  ];
  it.each(refusedBodies)("refuses %s: %s", async (_, extra, code) => {
    const grantor = await seedGrantor(domainDb(), { at: T0 });
    expect(await refusedWith(issue(grantor, extra))).toBe(code);
  });

  it("refuses an unknown currency or a fractional count at the schema (INVALID_INPUT), and drops a sent period anchor", async () => {
    const grantor = await seedGrantor(domainDb(), { at: T0 });
    expect(await refusedWith(() => issueBody(grantor, { ceiling: { kind: "amount", amount: 100, currency: "ZZZ" } }))).toBe(
      "INVALID_INPUT",
    );
    expect(await refusedWith(() => issueBody(grantor, { ceiling: { kind: "count", count: 1.5 } }))).toBe("INVALID_INPUT");
    const anchored = await issue(grantor, {
      ceiling: { kind: "amount", amount: 700, currency: "USD", period: "monthly", anchor: "2020-01-15" },
    });
    expect(anchored.ceiling).toEqual({ kind: "amount", amount: 700, currency: "USD", count: null, period: "monthly" });
  });

  it("accepts expires_at exactly 365 days after issue and refuses a millisecond more with EXPIRES_AT_TOO_FAR (max_days 365)", async () => {
    const grantor = await seedGrantor(domainDb(), { at: T0 });
    const edge = new Date(T0.getTime() + 365 * DAY_MS);
    const far = await refusal(issue(grantor, { expires_at: new Date(edge.getTime() + 1).toISOString() }));
    expect([far.code, far.extra]).toEqual(["EXPIRES_AT_TOO_FAR", { max_days: 365 }]);
    expect(await refusedWith(issue(grantor, { expires_at: "9999-12-31T23:59:59Z" }))).toBe("EXPIRES_AT_TOO_FAR");
    expect(new Date((await issue(grantor, { expires_at: edge.toISOString() })).expires_at).toISOString()).toBe(edge.toISOString());
  });

  it("takes a proof up to five minutes old and refuses it a millisecond later, or before it was taken (PROOF_INVALID, proof_expired)", async () => {
    const grantor = await seedGrantor(domainDb(), { at: T0 });
    const captured = plusSeconds(T0, -60);
    const tooLate = await refusal(issue(grantor, {}, new Date(captured.getTime() + 300_001)));
    expect([tooLate.code, tooLate.extra]).toEqual(["PROOF_INVALID", { reason: "proof_expired" }]);
    const tooEarly = await refusal(issue(grantor, {}, new Date(captured.getTime() - 1)));
    expect([tooEarly.code, tooEarly.extra]).toEqual(["PROOF_INVALID", { reason: "proof_expired" }]);
    expect(await issue(grantor, {}, plusSeconds(captured, 300))).toMatchObject({ status: "active" });
  });

  it("refuses a proof that is another person's, another merchant's or no capture at all (PROOF_INVALID, not_the_grantor)", async () => {
    const [grantor, other] = await Promise.all([seedGrantor(domainDb(), { at: T0 }), seedGrantor(domainDb(), { at: T0 })]);
    const attempts = [
      () => issue(grantor, { proof: { capture_id: other.captureId } }),
      () => issueMandate(depsAt(T0), tenantOf(other), issueBody(grantor)),
      () => issue(grantor, { proof: { capture_id: randomUUID() } }),
    ];
    for (const attempt of attempts) expect((await refusal(attempt)).extra).toEqual({ reason: "not_the_grantor" });
  });

  it("refuses money scopes once the person's document has expired (DOCUMENT_REQUIRED), and still grants the others", async () => {
    // The seeded document expires on 2099-12-31; a grant on 2100-01-02 has none valid.
    const grantor = await seedGrantor(domainDb(), { at: new Date("2100-01-02T12:00:00Z") });
    expect(await refusedWith(issue(grantor))).toBe("DOCUMENT_REQUIRED");
    const login = await issue(grantor, { scopes: ["login"], ceiling: { kind: "count", count: 3, period: "daily" } });
    expect(login).toMatchObject({ status: "active", scopes: ["login"], assurance_level: "face_voice_doc" });
  });

  it("raises a standing mandate of the same person by a step-up, never another person's or a revoked one (STEP_UP_OF_INVALID)", async () => {
    const parent = await mandate();
    const child = await issue(parent.grantor, { step_up_of: parent.id });
    expect(child.step_up_of).toBe(parent.id);
    const other = await seedGrantor(domainDb(), { at: T0 });
    expect(await refusedWith(issue(other, { step_up_of: parent.id }))).toBe("STEP_UP_OF_INVALID");
    await parent.revokeAsMerchant(T0);
    expect(await refusedWith(issue(parent.grantor, { step_up_of: parent.id }))).toBe("STEP_UP_OF_INVALID");
  });
});

describe("issueMandate: only a grant capture of these terms proves a grant, once (issue 25)", () => {
  /** The proof a grant of `extra`'s terms needs, made by the grantor for `shown` (default: the same terms). */
  async function grantOf(grantor: Grantor, shown: Record<string, unknown>) {
    return { proof: { capture_id: await grantCapture(domainDb(), grantor, grantTermsOf(issueBody(grantor, shown), grantor.at)) } };
  }

  it("refuses a live capture of the grantor made for anything but a grant (PROOF_INVALID, not_a_grant)", async () => {
    const grantor = await seedGrantor(domainDb(), { at: T0 });
    const login = await refusal(issue(grantor, { proof: { capture_id: grantor.captureId } }));
    expect([login.code, login.extra]).toEqual(["PROOF_INVALID", { reason: "not_a_grant" }]);
    for (const purpose of ["verify", "payment", "sign", "enroll", "attribute"]) {
      await domainDb().unsafe(`update private.captures set purpose = $2 where id = $1`, [grantor.captureId, purpose]);
      expect((await refusal(issue(grantor, { proof: { capture_id: grantor.captureId } }))).extra).toEqual({ reason: "not_a_grant" });
    }
  });

  it("takes a grant capture for one mandate only: the second issue with it is refused (PROOF_INVALID, proof_used)", async () => {
    const grantor = await seedGrantor(domainDb(), { at: T0 });
    const terms = { granted_to: "agent_once" };
    const proof = await grantOf(grantor, terms);
    expect(await issue(grantor, { ...terms, ...proof })).toMatchObject({ status: "active", granted_to: "agent_once" });
    const again = await refusal(issue(grantor, { ...terms, ...proof }, plusSeconds(T0, 1)));
    expect([again.code, again.extra]).toEqual(["PROOF_INVALID", { reason: "proof_used" }]);
  });

  it("refuses a grant capture of other terms: a larger ceiling, another agent, another expiry (PROOF_INVALID, terms_mismatch)", async () => {
    const grantor = await seedGrantor(domainDb(), { at: T0 });
    const shown = { granted_to: "agent_shown" };
    const proof = await grantOf(grantor, shown);
    const others: Record<string, unknown>[] = [
      { ...shown, ceiling: { kind: "amount", amount: 100_000_000, currency: "USD", period: "lifetime" } },
      { granted_to: "agent_other" },
      { ...shown, scopes: ["payment"] },
      { ...shown, expires_at: new Date(T0.getTime() + 31 * DAY_MS).toISOString() },
    ];
    for (const other of others) expect((await refusal(issue(grantor, { ...other, ...proof }))).extra).toEqual({ reason: "terms_mismatch" });
    // The refusals used nothing: the capture still proves the terms it showed.
    expect(await issue(grantor, { ...shown, ...proof })).toMatchObject({ status: "active" });
  });

  it("proves a step-up only by a capture that showed the step-up (its parent named), never by the parent's terms alone", async () => {
    const parent = await mandate();
    const stepUp = { granted_to: "agent_step", step_up_of: parent.id };
    const plain = await grantOf(parent.grantor, { granted_to: "agent_step" });
    expect((await refusal(issue(parent.grantor, { ...stepUp, ...plain }))).extra).toEqual({ reason: "terms_mismatch" });
    const shown = await grantOf(parent.grantor, stepUp);
    expect(await issue(parent.grantor, { ...stepUp, ...shown })).toMatchObject({ step_up_of: parent.id });
  });

  it("digests the same terms alike in either surface's names, and sees the order of scopes and allowlists as no difference", async () => {
    const grantor = await seedGrantor(domainDb(), { at: T0 });
    const constraints = { merchant_allowlist: ["b", "a"] };
    const shown = await grantOf(grantor, { granted_to: "agent_a", scopes: ["purchase", "payment"], constraints });
    const issued = await issue(grantor, {
      granted_to: "agent_a",
      scopes: ["payment", "purchase", "payment"],
      constraints: { merchant_allowlist: ["a", "b"] },
      ...shown,
    });
    expect(issued).toMatchObject({ status: "active" });
  });
});

describe("checkMandate and consumeMandate: ceilings", () => {
  const at = "2027-03-02T10:00:00.000Z";

  it("amount: debits within the ceiling, refuses past it with what remains, flags the last unit; a lifetime ceiling is then exhausted", async () => {
    const m = await mandate();
    expect(await m.consume(at, { amount: 300 })).toMatchObject({
      allowed: true,
      idempotent_replay: false,
      at_limit: false,
      remaining: { amount: 400, currency: "USD", count: null },
      consumption_id: expect.stringMatching(/^cns_[0-9a-f]{32}$/),
    });
    expect(await m.consume(at, { amount: 401 })).toMatchObject({
      allowed: false,
      reason: "ceiling_exceeded",
      step_up_available: true,
      remaining: { amount: 400 },
    });
    expect(await m.consume(at, { amount: 400 })).toMatchObject({ allowed: true, at_limit: true, remaining: { amount: 0 } });
    expect(await m.consume(at, { amount: 1 })).toMatchObject({ allowed: false, reason: "mandate_exhausted", step_up_available: true });
    expect(await m.check(at, { amount: 0 })).toMatchObject({ allowed: false, reason: "mandate_exhausted" });
  });

  it("count: a lifetime count of three allows three acts, the third at the limit, then mandate_exhausted", async () => {
    const m = await mandate({ scopes: ["login"], ceiling: { kind: "count", count: 3 } });
    const answers: Answer[] = [];
    for (let i = 0; i < 3; i++) answers.push(await m.consume(at));
    expect(answers.map((a) => [a.allowed, a.remaining.count, a.at_limit])).toEqual([
      [true, 2, false],
      [true, 1, false],
      [true, 0, true],
    ]);
    expect(await m.consume(at)).toMatchObject({ allowed: false, reason: "mandate_exhausted", period_resets_at: null });
  });

  it("a count ceiling as large as the API takes (2,147,483,647) consumes under the merchant's at-limit threshold, no overflow", async () => {
    const m = await mandate({ scopes: ["login"], ceiling: { kind: "count", count: 2_147_483_647 } });
    await domainDb()`update private.merchants set at_limit_threshold_percent = 80 where id = ${m.grantor.merchantId}::uuid`;
    expect(await m.consume(at)).toMatchObject({ allowed: true, remaining: { count: 2_147_483_646 }, at_limit: false });
  });

  it("both: whichever of count and amount runs out first decides, and a daily one is exhausted until midnight UTC", async () => {
    const ceiling = { kind: "both", amount: 1000, currency: "USD", count: 2, period: "daily" };
    const byCount = await mandate({ ceiling });
    expect(await byCount.consume(at, { amount: 100 })).toMatchObject({ allowed: true, remaining: { amount: 900, count: 1 } });
    expect(await byCount.consume(at, { amount: 100 })).toMatchObject({ allowed: true, at_limit: true, remaining: { count: 0 } });
    expect(await byCount.consume(at, { amount: 1 })).toMatchObject({ allowed: false, reason: "mandate_exhausted" });

    const byAmount = await mandate({ ceiling }, byCount.grantor);
    expect(await byAmount.consume(at, { amount: 600 })).toMatchObject({ allowed: true, remaining: { amount: 400, count: 1 } });
    expect(await byAmount.consume(at, { amount: 500 })).toMatchObject({ allowed: false, reason: "ceiling_exceeded" });
    expect(await byAmount.consume(at, { amount: 400 })).toMatchObject({ allowed: true, at_limit: true, remaining: { amount: 0 } });
    expect(await byAmount.consume(at, { amount: 0 })).toMatchObject({ allowed: false, reason: "mandate_exhausted" });
    expect(await byAmount.consume("2027-03-03T00:00:00.000Z", { amount: 1000 })).toMatchObject({ allowed: true, at_limit: true });
  });

  it("none: every act is allowed, with nothing remaining to report and no reset", async () => {
    const m = await mandate({ scopes: ["login"], ceiling: { kind: "none" } });
    for (let i = 0; i < 5; i++) {
      expect(await m.consume(plusSeconds(at, i))).toMatchObject({
        allowed: true,
        at_limit: false,
        remaining: { amount: null, currency: null, count: null },
        period_resets_at: null,
      });
    }
  });

  it("an amount ceiling needs the act's amount (amount_required) in its own currency (currency_mismatch)", async () => {
    const m = await mandate();
    expect(await m.check(at, { currency: undefined })).toMatchObject({
      allowed: false,
      reason: "amount_required",
      step_up_available: false,
    });
    expect(await m.check(at, { amount: 1, currency: "EUR" })).toMatchObject({ allowed: false, reason: "currency_mismatch" });
  });

  it("check is advisory: it decides like consume and debits nothing", async () => {
    const m = await mandate({ ceiling: { kind: "amount", amount: 700, currency: "USD", period: "daily" } });
    for (let i = 0; i < 3; i++) expect(await m.check(at, { amount: 700 })).toMatchObject({ allowed: true, remaining: { amount: 700 } });
    expect(await m.check(at, { amount: 701 }, "es")).toMatchObject({
      allowed: false,
      reason: "ceiling_exceeded",
      user_message: "Esta acción supera lo que autorizaste.",
    });
    expect(await m.consume(at, { amount: 700 })).toMatchObject({ allowed: true, at_limit: true });
  });

  it("a step-up's acts never touch its parent's balance, nor the parent's its", async () => {
    const parent = await mandate();
    expect(await parent.consume(at, { amount: 600 })).toMatchObject({ remaining: { amount: 100 } });
    const child = await mandate({ step_up_of: parent.id, ceiling: { kind: "amount", amount: 5000, currency: "USD" } }, parent.grantor);
    expect(await child.consume(at, { amount: 2000 })).toMatchObject({ allowed: true, remaining: { amount: 3000 } });
    expect(await parent.check(at, { amount: 100 })).toMatchObject({ allowed: true, remaining: { amount: 100 } });
    expect(await parent.check(at, { amount: 101 })).toMatchObject({ allowed: false, reason: "ceiling_exceeded" });
  });
});

describe("checkMandate and consumeMandate: periods reset at UTC boundaries", () => {
  it("daily: the last millisecond of a day is that day's; midnight UTC starts a new count", async () => {
    const m = await mandate({ scopes: ["login"], ceiling: { kind: "count", count: 2, period: "daily" } });
    const lastMs = "2027-03-10T23:59:59.999Z";
    expect(await m.consume("2027-03-10T00:00:00.000Z")).toMatchObject({ allowed: true, remaining: { count: 1 } });
    const second = await m.consume(lastMs);
    expect(second).toMatchObject({ allowed: true, at_limit: true, remaining: { count: 0 } });
    expect(new Date(second.period_resets_at as string).toISOString()).toBe("2027-03-11T00:00:00.000Z");
    expect(await m.consume(lastMs)).toMatchObject({ allowed: false, reason: "mandate_exhausted", step_up_available: true });
    const next = await m.consume("2027-03-11T00:00:00.000Z");
    expect(next).toMatchObject({ allowed: true, remaining: { count: 1 } });
    expect(new Date(next.period_resets_at as string).toISOString()).toBe("2027-03-12T00:00:00.000Z");
  });

  it("weekly: Monday 00:00 to Sunday 23:59:59.999 UTC is one week, and Monday resets it", async () => {
    const m = await mandate({ ceiling: { kind: "amount", amount: 100, currency: "EUR", period: "weekly" } });
    expect(await m.consume("2027-03-08T00:00:00.000Z", { amount: 100 })).toMatchObject({ allowed: true, at_limit: true });
    expect(await m.consume("2027-03-14T23:59:59.999Z", { amount: 1 })).toMatchObject({ allowed: false, reason: "mandate_exhausted" });
    const monday = await m.consume("2027-03-15T00:00:00.000Z", { amount: 100 });
    expect(monday).toMatchObject({ allowed: true, at_limit: true });
    expect(new Date(monday.period_resets_at as string).toISOString()).toBe("2027-03-22T00:00:00.000Z");
    // the week before is untouched by Monday's act
    expect(await m.check("2027-03-07T12:00:00.000Z", { amount: 100 })).toMatchObject({ allowed: true, remaining: { amount: 100 } });
  });

  it("monthly: December rolls over to January at midnight UTC on the first", async () => {
    const m = await mandate(
      {
        ceiling: { kind: "amount", amount: 500, currency: "USD", period: "monthly" },
        expires_at: "2028-02-01T00:00:00Z",
      },
      await seedGrantor(domainDb(), { at: new Date("2027-12-01T00:00:00Z") }),
    );
    expect(await m.consume("2027-12-31T23:59:59.999Z", { amount: 500 })).toMatchObject({ allowed: true, at_limit: true });
    expect(await m.consume("2027-12-31T23:59:59.999Z", { amount: 1 })).toMatchObject({ allowed: false, reason: "mandate_exhausted" });
    const january = await m.consume("2028-01-01T00:00:00.000Z", { amount: 500 });
    expect(january).toMatchObject({ allowed: true, at_limit: true });
    expect(new Date(january.period_resets_at as string).toISOString()).toBe("2028-02-01T00:00:00.000Z");
  });
});

describe("checkMandate and consumeMandate: expiry, scope, context", () => {
  it("is expired at exactly expires_at; a millisecond before it still acts", async () => {
    const expiresAt = new Date("2027-03-20T12:00:00.000Z");
    const m = await mandate({ expires_at: expiresAt.toISOString() });
    expect(await m.consume(new Date(expiresAt.getTime() - 1), { amount: 100 })).toMatchObject({ allowed: true });
    for (const decide of [m.check, m.consume]) {
      expect(await decide(expiresAt, { amount: 1 })).toMatchObject({ allowed: false, reason: "mandate_expired", step_up_available: true });
    }
  });

  it("refuses a scope the mandate does not grant (scope_not_granted) and one outside the vocabulary (unknown_scope)", async () => {
    const m = await mandate();
    expect(await m.check(T0, { scope: "payment", amount: 1 })).toMatchObject({
      allowed: false,
      reason: "scope_not_granted",
      step_up_available: true,
    });
    expect(await m.consume(T0, { scope: "teleport", amount: 1 })).toMatchObject({
      allowed: false,
      reason: "unknown_scope",
      step_up_available: false,
    });
  });

  it("answers mandate_not_found for an id that is no mandate, an unknown one, and another tenant's", async () => {
    const m = await mandate();
    const stranger = await seedGrantor(domainDb(), { at: T0 });
    const live = await seedGrantor(domainDb(), { at: T0, environment: "live" });
    const body = (mandateId: string) => decision(mandateId, { scope: "purchase", amount: 1, currency: "USD" });
    const asTenant = (grantor: Grantor) => ({ tenant: tenantOf(grantor) });
    const answers = [
      await checkMandate(depsAt(T0), asTenant(m.grantor), body("mdt_nope")),
      await checkMandate(depsAt(T0), asTenant(m.grantor), body(`mdt_${randomUUID().replace(/-/g, "")}`)),
      await checkMandate(depsAt(T0), asTenant(stranger), body(m.id)),
      await checkMandate(depsAt(T0), { tenant: { merchantId: m.grantor.merchantId, environment: "live" } }, body(m.id)),
      await consumeMandate(depsAt(T0), asTenant(live), body(m.id), { key: "idem-12345678", rawBody: "{}" }),
    ];
    for (const answer of answers) expect(answer).toMatchObject({ allowed: false, reason: "mandate_not_found" });
  });

  it("holds a task mandate's acts to its allowlists, exactly (no case folding), and asks for a missing context field", async () => {
    const m = await mandate({
      scopes: ["task"],
      constraints: { merchant_allowlist: ["acme"], category_allowlist: ["pharmacy"], country_allowlist: ["BR"] },
      ceiling: { kind: "count", count: 5, period: "daily" },
    });
    const ok = { merchant: "acme", category: "pharmacy", country: "BR" };
    expect(await m.consume(T0, { context: ok })).toMatchObject({ allowed: true });
    expect(await m.check(T0, { context: { ...ok, merchant: "evil" } })).toMatchObject({ reason: "merchant_not_allowed" });
    expect(await m.check(T0, { context: { ...ok, category: "Pharmacy" } })).toMatchObject({
      reason: "category_not_allowed",
      user_message: "You did not authorise actions in this category.",
    });
    expect(await m.check(T0, { context: { ...ok, country: "US" } })).toMatchObject({ reason: "country_not_allowed" });
    expect(await m.check(T0, { context: { merchant: "acme", category: "pharmacy" } })).toMatchObject({
      allowed: false,
      reason: "context_required",
      field: "context.country",
      step_up_available: false,
    });
  });

  it("refuses a fractional amount (AMOUNT_INVALID) and an amount without its currency (INVALID_INPUT) at the schema", async () => {
    expect(await refusedWith(() => decision(randomUUID(), { scope: "purchase", amount: 1.5, currency: "USD" }))).toBe("AMOUNT_INVALID");
    expect(await refusedWith(() => decision(randomUUID(), { scope: "purchase", amount: 1 }))).toBe("INVALID_INPUT");
  });
});

describe("consumeMandate: the Idempotency-Key", () => {
  it("without a key it is idempotency_key_required, with a malformed one idempotency_key_invalid; neither debits", async () => {
    const m = await mandate({ ceiling: { kind: "amount", amount: 100, currency: "USD" } });
    expect(await m.consume(T0, { amount: 100 }, { key: undefined })).toMatchObject({
      allowed: false,
      reason: "idempotency_key_required",
      step_up_available: false,
    });
    const malformed = await m.consume(T0, { amount: 100 }, { key: null });
    expect(malformed).toMatchObject({ allowed: false, reason: "idempotency_key_invalid" });
    expect(malformed).not.toHaveProperty("user_message");
    expect(await m.check(T0, { amount: 100 })).toMatchObject({ allowed: true, remaining: { amount: 100 } });
  });

  it("a replayed key answers the first decision, flagged, and debits once; the same key with another body is IDEMPOTENCY_KEY_REUSED", async () => {
    const m = await mandate();
    const key = freshKey();
    const first = await m.consume(T0, { amount: 100, action_ref: "order-1" }, key);
    const replay = await m.consume(plusSeconds(T0, 3600), { amount: 100, action_ref: "order-1" }, key);
    expect(replay).toEqual({ ...first, idempotent_replay: true, mandate_status: "active" });
    expect(await refusedWith(m.consume(T0, { amount: 200, action_ref: "order-1" }, key))).toBe("IDEMPOTENCY_KEY_REUSED");
    expect(await m.check(T0, { amount: 600 })).toMatchObject({ allowed: true, remaining: { amount: 600 } });
    // the key belongs to the mandate: on another one it is a consumption of its own
    const other = await mandate({}, m.grantor);
    expect(await other.consume(T0, { amount: 100, action_ref: "order-1" }, key)).toMatchObject({ idempotent_replay: false });
  });
});

describe("revokeMandate", () => {
  it("ends the mandate at once; repeats say already_revoked; a replay after it is no permission", async () => {
    const m = await mandate({ scopes: ["login"], ceiling: { kind: "count", count: 5 } });
    const key = freshKey();
    const first = await m.consume(T0, {}, key);
    const revokedAt = plusSeconds(T0, 60);
    const revoked = await m.revokeAsMerchant(revokedAt);
    expect(revoked).toMatchObject({ mandate_id: m.id, status: "revoked", revoked: true, already_revoked: false });
    expect(new Date(String(revoked.revoked_at)).toISOString()).toBe(revokedAt.toISOString());
    expect(await m.revokeAsMerchant(plusSeconds(T0, 120))).toEqual({ ...revoked, already_revoked: true });
    for (const decide of [m.check, m.consume]) {
      expect(await decide(revokedAt)).toMatchObject({ allowed: false, reason: "mandate_revoked", step_up_available: false });
    }
    expect(await m.consume(revokedAt, {}, key)).toEqual({
      ...first,
      allowed: false,
      reason: "mandate_revoked",
      idempotent_replay: true,
      mandate_status: "revoked",
      developer_message: expect.stringMatching(/revoked/),
      user_message: "This authorisation was revoked.",
      step_up_available: false,
    });
  });

  it("is the granting human's, the issuing merchant's and the service role's; anyone else, or no mandate, is not_found", async () => {
    const m = await mandate();
    const other = await seedGrantor(domainDb(), { at: T0 });
    const person = (grantor: Grantor): UserPrincipal => ({
      kind: "user",
      merchantId: grantor.merchantId,
      environment: grantor.environment,
      identityId: grantor.identityId,
      sessionTokenHash: "0".repeat(64),
    });
    const service: ServicePrincipal = { kind: "service" };
    const revoke =
      (by: Parameters<typeof revokeMandate>[1], mandateId = m.id) =>
      () =>
        revokeMandate(depsAt(T0), by, { mandate_id: mandateId });
    for (const attempt of [
      revoke(merchantKey(m.grantor, other.merchantId)),
      revoke({ ...merchantKey(m.grantor), environment: "live" }),
      revoke(person(other)),
      revoke(service, `mdt_${randomUUID().replace(/-/g, "")}`),
      revoke(service, "not-a-mandate"),
    ]) {
      expect(await refusedWith(attempt)).toBe("not_found");
    }
    expect(await revoke(person(m.grantor))()).toMatchObject({ revoked: true, already_revoked: false });
    expect(await revoke(service)()).toMatchObject({ revoked: true, already_revoked: true });
    const [row] = await domainDb().unsafe(`select revoked_by from private.mandates where id = $1`, [m.id.slice(4)]);
    expect(row.revoked_by).toBe("granting_human");
  });
});

describe("getMandate and listMandates: the effective status at the request's instant", () => {
  it("reads revoked > expired > exhausted > active, beside the stored status, with nothing run in between", async () => {
    const grantor = await seedGrantor(domainDb(), { at: T0 });
    const daily = { scopes: ["login"], ceiling: { kind: "count", count: 1, period: "daily" }, expires_at: "2027-03-20T00:00:00Z" };
    const [active, exhausted, spent, revoked] = [
      await mandate(daily, grantor),
      await mandate(daily, grantor),
      await mandate({ ...daily, ceiling: { kind: "count", count: 1 } }, grantor),
      await mandate(daily, grantor),
    ];
    const at = "2027-03-10T12:00:00.000Z";
    await exhausted.consume(at);
    await spent.consume(at);
    await revoked.revokeAsMerchant(at);
    const tenant = tenantOf(grantor);
    const statusAt = async (m: { id: string }, when: string) => {
      const read: Answer = await getMandate(depsAt(when), tenant, m.id);
      return [read.status, read.stored_status];
    };
    expect(await statusAt(active, at)).toEqual(["active", "active"]);
    expect(await statusAt(exhausted, at)).toEqual(["exhausted", "active"]);
    expect(await statusAt(exhausted, "2027-03-11T00:00:00.000Z")).toEqual(["active", "active"]);
    // a lifetime ceiling at zero is exhausted too (resource API 3.1), for good: its bucket never resets
    expect(await statusAt(spent, at)).toEqual(["exhausted", "active"]);
    expect(await statusAt(spent, "2027-03-11T00:00:00.000Z")).toEqual(["exhausted", "active"]);
    expect(await statusAt(revoked, at)).toEqual(["revoked", "revoked"]);
    // past expires_at: revoked still wins, the others read expired; nothing reads consumed
    const later = "2027-03-20T00:00:00.000Z";
    const ids = async (status: "active" | "expired" | "consumed" | "revoked" | "exhausted", when: string) =>
      (await listMandates(depsAt(when), tenant, { status })).mandates.map((m: Answer) => m.mandate_id).sort();
    expect(await ids("expired", later)).toEqual([active.id, exhausted.id, spent.id].sort());
    expect(await ids("consumed", at)).toEqual([]);
    expect(await ids("revoked", later)).toEqual([revoked.id]);
    expect(await ids("exhausted", at)).toEqual([exhausted.id, spent.id].sort());
    expect(await ids("active", at)).toEqual([active.id]);
  });

  it("answers not_found alike for an id that is no mandate, an unknown one and another tenant's", async () => {
    const m = await mandate();
    const stranger = await seedGrantor(domainDb(), { at: T0 });
    for (const [tenant, id] of [
      [tenantOf(m.grantor), "nope"],
      [tenantOf(m.grantor), `mdt_${randomUUID().replace(/-/g, "")}`],
      [tenantOf(stranger), m.id],
      [{ ...tenantOf(m.grantor), environment: "live" }, m.id],
    ] as [Tenant, string][]) {
      expect(await refusedWith(() => getMandate(depsAt(T0), tenant, id))).toBe("not_found");
    }
  });
});

describe("checkMandate and consumeMandate with a key: authentication in the decision's one call", () => {
  it("refuses an unknown key before any refusal of the body; claims a nonce once", async () => {
    const m = await mandate();
    const unknown: Credential = { keyHash: "f".repeat(64), kind: "secret", environment: "test" };
    const action = decision(m.id, { scope: "purchase", amount: 1, currency: "USD" });
    for (const body of [action, { ...action, scope: "teleport" }, { ...action, mandate_id: "nope" }]) {
      expect(await refusedWith(checkMandate(depsAt(T0), { credential: unknown, replay: null }, body))).toBe("INVALID_API_KEY");
    }
    expect(
      await refusedWith(consumeMandate(depsAt(T0), { credential: unknown, replay: null }, action, { key: undefined, rawBody: "{}" })),
    ).toBe("INVALID_API_KEY");

    const credential = await seedSecretKey(tenantOf(m.grantor));
    const replay = { nonce: `n-${randomUUID()}`, windowSeconds: 300 };
    expect(await checkMandate(depsAt(T0), { credential, replay }, { ...action, scope: "teleport" })).toMatchObject({
      reason: "unknown_scope",
    });
    expect(await refusedWith(checkMandate(depsAt(T0), { credential, replay }, action))).toBe("NONCE_REUSED");
    expect(await checkMandate(depsAt(T0), { credential, replay: null }, action)).toMatchObject({ allowed: true });
  });
});
