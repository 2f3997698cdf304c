/**
 * The input middleware over HTTP (issue 11): text no Postgres column can store is refused when the
 * input is read, on every function, and money is judged as it was written in the body.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_INPUT_DEPTH } from "../../shared/kernel/validation";
import { mandateUuid } from "../../shared/mandates/ids";
import { capture } from "../harness/captures";
import { merchantFactory, testDb } from "../harness/factories";
import { type CallResult, call, errorOf, replayHeaders } from "../harness/http";
import { CONSENT, strangerCapture } from "../harness/identity";
import { issue, mandateBody, mandateFixture, proofCapture } from "../harness/mandates";

type Fixture = Awaited<ReturnType<typeof mandateFixture>>;

const UNSTORABLE = [
  ["a NUL", "bad\u0000text", "\\u0000"],
  ["an unpaired high surrogate", "bad\ud800text", "\\ud800"],
  ["an unpaired low surrogate", "bad\udc00text", "\\udc00"],
] as const;

const json = { "content-type": "application/json" };

function expectRefused(res: CallResult, fields: string[]) {
  expect(errorOf(res), res.text).toEqual({ status: 400, code: "INVALID_INPUT" });
  expect(res.body.fields).toEqual(fields);
}

describe("text that cannot be stored (NUL, unpaired surrogates)", () => {
  let fx: Fixture;
  let proof: string;
  beforeAll(async () => {
    fx = await mandateFixture();
    proof = await proofCapture(fx.merchant, fx.person, { document: true });
  });

  /** Every request the issue found answering 500, with `text` in the named field. */
  const requests: [string, string, (fx: Fixture, proof: string, text: string) => Promise<CallResult>][] = [
    ["mandate-check", "action_ref", (fx, _, text) => decide("mandate-check", fx, { action_ref: text })],
    ["mandate-check", "context.merchant", (fx, _, text) => decide("mandate-check", fx, { context: { merchant: text } })],
    ["mandate-consume", "action_ref", (fx, _, text) => decide("mandate-consume", fx, { action_ref: text })],
    ["mandate-consume", "context.merchant", (fx, _, text) => decide("mandate-consume", fx, { context: { merchant: text } })],
    [
      "mandate-revoke",
      "reason",
      (fx, _, text) => call("mandate-revoke", { key: fx.merchant.keys.sk_test, body: { mandate_id: fx.mandate.mandate_id, reason: text } }),
    ],
    ...(["agent_display_name", "granted_to", "granted_by"] as const).map(
      (field) =>
        [
          "mandate-issue",
          field,
          (fx: Fixture, proof: string, text: string) => issue(fx.merchant.keys.sk_test, mandateBody(fx.person, proof, { [field]: text })),
        ] as [string, string, (fx: Fixture, proof: string, text: string) => Promise<CallResult>],
    ),
    [
      "process-biovital-transaction (mandate stand-in)",
      "context.merchant",
      (fx, _, text) =>
        call("process-biovital-transaction", {
          key: fx.merchant.keys.sk_test,
          headers: { ...replayHeaders(), "idempotency-key": `idem-${crypto.randomUUID()}` },
          body: {
            action: "ACTION_PAYMENT",
            service_hash: `svc:${crypto.randomUUID()}`,
            user_id: fx.person.subject_ref,
            mandate_id: fx.mandate.mandate_id,
            scope: "purchase",
            amount: 100,
            currency: "USD",
            context: { merchant: text },
          },
        }),
    ],
    [
      "process-biovital-enrollment",
      "consent.version",
      (fx, _, text) => {
        const { descriptor, nonce } = strangerCapture();
        return call("process-biovital-enrollment", {
          key: fx.merchant.keys.pk_test,
          body: { capture_nonce: nonce, face_template: descriptor, consent: { ...CONSENT, version: text } },
        });
      },
    ],
  ];

  for (const [label, text] of UNSTORABLE) {
    it.each(requests)(`%s: ${label} in %s is 400 INVALID_INPUT naming the field`, async (_name, field, send) => {
      expectRefused(await send(fx, proof, text), [field]);
    });
  }

  it("names every offending field, object keys included (escaped), and lets a paired surrogate through", async () => {
    const res = await decide("mandate-check", fx, {
      action_ref: "ok \ud83d\ude00",
      context: { "mer\u0000chant": "x", category: "a\ud800" },
    });
    expectRefused(res, ["context.mer\\u0000chant", "context.category"]);
    expect(res.body.error).toMatch(/NUL/);
    const fine = await decide("mandate-check", fx, { action_ref: "paired \ud83d\ude00 is fine" });
    expect(fine.status, fine.text).toBe(200);
  });

  it("refuses such text in a query string too, values and names", async () => {
    const key = fx.merchant.keys.sk_test;
    expectRefused(await call("mandate-get", { key, query: { id: "mdt_\u0000" } }), ["id"]);
    expectRefused(
      await call("merchant-theme-get", { key: fx.merchant.keys.pk_test, query: { merchant_id: fx.merchant.merchant_id, "x\u0000": "1" } }),
      ["x\\u0000"],
    );
  });

  it("refuses a body that is only such a string on `body`", async () => {
    const res = await call("mandate-revoke", { key: fx.merchant.keys.sk_test, rawBody: '"\\u0000"', headers: json });
    expectRefused(res, ["body"]);
  });
});

describe("money as written in the body (spec: a float is refused)", () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await mandateFixture();
  });

  const floatsAsWritten = ["1299.0", "1e3", "1E3", "1e+3", "100.00", "-0", "0.0", "5E0"];

  it.each(["mandate-check", "mandate-consume"])("%s: an integer written as a float is 400 AMOUNT_INVALID", async (name) => {
    for (const amount of floatsAsWritten) {
      const rawBody = `{"mandate_id": "${fx.mandate.mandate_id}", "scope": "purchase", "amount": ${amount}, "currency": "USD"}`;
      const res = await call(name, { key: fx.merchant.keys.sk_test, rawBody, headers: { ...json, ...decisionHeaders(name) } });
      expect({ amount, ...errorOf(res) }).toEqual({ amount, status: 400, code: "AMOUNT_INVALID" });
    }
    // the same amount written as an integer is money; a repeated key is judged as JSON.parse reads it (the last wins)
    for (const rawBody of [
      `{"mandate_id": "${fx.mandate.mandate_id}", "scope": "purchase", "amount": 12, "currency": "USD"}`,
      `{"mandate_id": "${fx.mandate.mandate_id}", "scope": "purchase", "amount": 1.0, "amount": 12, "currency": "USD"}`,
    ]) {
      const res = await call(name, { key: fx.merchant.keys.sk_test, rawBody, headers: { ...json, ...decisionHeaders(name) } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.allowed).toBe(true);
    }
  });

  it("mandate-issue: a ceiling amount written as a float is 400 AMOUNT_INVALID, as an integer it is issued", async () => {
    const proof = await proofCapture(fx.merchant, fx.person, {
      document: true,
      terms: { ceiling: { kind: "amount", amount: 700, currency: "USD" } },
    });
    const body = (amount: string) =>
      JSON.stringify(mandateBody(fx.person, proof, { ceiling: { kind: "amount", amount: 0, currency: "USD" } })).replace(
        '"amount":0',
        `"amount":${amount}`,
      );
    for (const amount of ["700.0", "7e2", "-0"]) {
      const res = await call("mandate-issue", {
        key: fx.merchant.keys.sk_test,
        rawBody: body(amount),
        headers: { ...json, ...replayHeaders() },
      });
      expect({ amount, ...errorOf(res) }).toEqual({ amount, status: 400, code: "AMOUNT_INVALID" });
    }
    const issued = await call("mandate-issue", {
      key: fx.merchant.keys.sk_test,
      rawBody: body("700"),
      headers: { ...json, ...replayHeaders() },
    });
    expect(issued.status, issued.text).toBe(201);
  });

  it("process-biovital-transaction: an amount written as a float is 400 AMOUNT_INVALID", async () => {
    const merchant = await merchantFactory();
    const { descriptor, nonce } = capture(1);
    for (const amount of ["1299.0", "1e3", "-0"]) {
      const rawBody = JSON.stringify({
        action: "ACTION_PAYMENT",
        service_hash: `svc:${crypto.randomUUID()}`,
        user_id: "sub_x",
        capture_nonce: nonce,
        face_template: descriptor,
        amount: 0,
        currency: "USD",
      }).replace('"amount":0', `"amount":${amount}`);
      const res = await call("process-biovital-transaction", {
        key: merchant.keys.sk_test,
        rawBody,
        headers: { ...json, ...replayHeaders() },
      });
      expect({ amount, ...errorOf(res) }).toEqual({ amount, status: 400, code: "AMOUNT_INVALID" });
    }
  });
});

describe("nesting depth of a body", () => {
  /** `value` wrapped in `depth` arrays, as raw JSON text (JSON.stringify itself would overflow the stack). */
  const nested = (depth: number, value = "") => `${"[".repeat(depth)}${value}${"]".repeat(depth)}`;

  it(`accepts ${MAX_INPUT_DEPTH} levels and refuses ${MAX_INPUT_DEPTH + 1} as 400 INVALID_INPUT naming the field`, async () => {
    // alias-availability ignores unknown fields, so only the depth decides; the body itself is level 1
    const body = (depth: number) => `{"action": "check", "alias": "depth_probe", "x": ${nested(depth - 1)}}`;
    const fine = await call("alias-availability", { rawBody: body(MAX_INPUT_DEPTH), headers: json });
    expect(fine.status, fine.text).toBe(200);
    const deep = await call("alias-availability", { rawBody: body(MAX_INPUT_DEPTH + 1), headers: json });
    expectRefused(deep, ["x"]);
    expect(deep.body.error).toMatch(/32 levels/);
    expectRefused(await call("alias-availability", { rawBody: nested(100_000), headers: json }), ["body"]);
  });

  it("refuses 60,000 nested arrays of 40,000 numbers beside money at once, where the scan of the literals took minutes", async () => {
    const fx = await mandateFixture();
    // every literal deep inside used to cost a serialisation of its whole path: quadratic in the body
    const rawBody = `{"mandate_id": "${fx.mandate.mandate_id}", "scope": "purchase", "amount": 1, "currency": "USD", "x": ${nested(60_000, `${"1,".repeat(40_000)}1`)}}`;
    const started = performance.now();
    const res = await call("mandate-check", { key: fx.merchant.keys.sk_test, rawBody, headers: { ...json, ...replayHeaders() } });
    expectRefused(res, ["x"]);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe("numbers past what the database holds", () => {
  it("mandate-issue: a count ceiling is at most 2,147,483,647; larger is 400 INVALID_INPUT, where it was a 500", async () => {
    const fx = await mandateFixture();
    const proof = await proofCapture(fx.merchant, fx.person, {
      document: true,
      terms: { scopes: ["login"], ceiling: { kind: "count", count: 2_147_483_647 } },
    });
    const withCount = (count: number) => mandateBody(fx.person, proof, { scopes: ["login"], ceiling: { kind: "count", count } });
    const largest = await issue(fx.merchant.keys.sk_test, withCount(2_147_483_647));
    expect(largest.status, largest.text).toBe(201);
    for (const count of [2_147_483_648, Number.MAX_SAFE_INTEGER]) {
      const res = await issue(fx.merchant.keys.sk_test, withCount(count));
      expect({ count, ...errorOf(res), fields: res.body.fields }).toEqual({
        count,
        status: 400,
        code: "INVALID_INPUT",
        fields: ["ceiling.count"],
      });
    }
  });

  it("mandate-consume: amounts whose sum passes bigint are consumed on a mandate without an amount ceiling, where the 1,025th was a 500", async () => {
    const fx = await mandateFixture({ ceiling: { kind: "none" } });
    const largest = Number.MAX_SAFE_INTEGER;
    const mandateId = mandateUuid(fx.mandate.mandate_id);
    // 1,024 consumptions of the largest amount, written straight to the ledger (its trigger keeps the totals)
    await testDb().unsafe(
      `insert into private.mandate_consumptions (id, mandate_id, idempotency_key, request_hash, scope, amount, currency, response, created_at)
       select gen_random_uuid(), $1::uuid, 'seed-key-' || n, 'seed', 'purchase', $2::bigint, 'USD', '{}'::jsonb, now()
       from generate_series(1, 1024) n`,
      [mandateId, String(largest)],
    );
    const body = { mandate_id: fx.mandate.mandate_id, scope: "purchase", amount: largest, currency: "USD" };
    const consumed = await call("mandate-consume", { key: fx.merchant.keys.sk_test, body, headers: decisionHeaders("mandate-consume") });
    expect(consumed.status, consumed.text).toBe(200);
    expect(consumed.body.allowed).toBe(true);
    const [usage] = await testDb()<
      { used_amount: string }[]
    >`select used_amount::text from private.mandate_usage where mandate_id = ${mandateId}`;
    expect(BigInt(usage.used_amount)).toBe(BigInt(largest) * 1025n);
  });
});

function decisionHeaders(name: string): Record<string, string> {
  return { ...replayHeaders(), ...(name === "mandate-consume" ? { "idempotency-key": `idem-${crypto.randomUUID()}` } : {}) };
}

function decide(name: "mandate-check" | "mandate-consume", fx: Fixture, extra: Record<string, unknown>) {
  const body = { mandate_id: fx.mandate.mandate_id, scope: "purchase", amount: 1, currency: "USD", ...extra };
  return call(name, { key: fx.merchant.keys.sk_test, body, headers: decisionHeaders(name) });
}
