/**
 * Retention (spec 2.6, 4.3): what a consent covers is erased when its `retention_days` run out, or
 * once it is withdrawn, with nothing running but the consent-retention cron. Its ticks run at the
 * times the tests choose (clock control); each tick is a global pass, so this file has its own
 * service and database (tests/harness/own-service.ts).
 */
import { describe, expect, it } from "vitest";
import { verifyConsentLedger } from "../../shared/consent/ledger";
import { disclose, discloseBody, fetchDisclosure, identityOfCapture, revokeConsent } from "../harness/consent";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf, replayHeaders } from "../harness/http";
import { enrollStranger, newStranger } from "../harness/identity";
import { presenceCapture } from "../harness/mandates";
import { useOwnService } from "../harness/own-service";

const FUNCTIONS = [
  "process-biovital-enrollment",
  "process-biovital-transaction",
  "face-identify",
  "disclose-claims",
  "revoke-consent",
  "consent-retention",
];
const DAY = 86_400_000;

const service = useOwnService("consent_retention", FUNCTIONS);

type Person = Awaited<ReturnType<typeof enrollStranger>>;

/** Enrols `person`'s face with merchant `key` under a consent of `retentionDays`. */
async function enrollWith(key: string, person: Pick<Person, "capture">, retentionDays: number) {
  const shot = person.capture();
  const res = await call("process-biovital-enrollment", {
    key,
    body: { capture_nonce: shot.nonce, face_template: shot.descriptor, consent: { version: "2026-11", retention_days: retentionDays } },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.subject_ref as string;
}

function identify(key: string, person: Pick<Person, "capture">) {
  const shot = person.capture();
  return call("face-identify", { key, body: { face_template: shot.descriptor, capture_nonce: shot.nonce }, headers: replayHeaders() });
}

async function captureRow(id: string) {
  const [row] = await testDb()`select face_similarity, amount_minor, currency, personal_data_erased_at, liveness_passed
                               from private.captures where id = ${id}::uuid`;
  return row;
}

async function kinds(identityId: string) {
  const rows = await testDb()`select kind, merchant_id::text from private.consent_ledger where identity_id = ${identityId} order by seq`;
  return rows.map((row) => `${row.kind}@${row.merchant_id}`);
}

describe("consent retention", () => {
  it("a consent's retention running out erases what it covered for that merchant; the last one erases the template and documents", async () => {
    const a = await merchantFactory();
    const b = await merchantFactory();
    const person = newStranger();
    const refA = await enrollWith(a.keys.pk_test, person, 2);
    const refB = await enrollWith(b.keys.pk_test, person, 30);
    const captureA = await presenceCapture(a, { ...person, subject_ref: refA }, { document: true });
    const captureB = await presenceCapture(b, { ...person, subject_ref: refB });
    const identityId = await identityOfCapture(captureA);
    expect(await identityOfCapture(captureB)).toBe(identityId);
    const t0 = new Date();

    // one day in: nothing ran out
    await service.own.tick("consent-retention", new Date(t0.getTime() + DAY));
    expect((await captureRow(captureA)).personal_data_erased_at).toBeNull();

    // two days in: A's consent ran out; A's captures lose their personal data, B's keep theirs, the template stays (B's consent)
    const summary = await service.own.tick("consent-retention", new Date(t0.getTime() + 2 * DAY + 60_000));
    expect(summary).toMatchObject({ expired: 1, erased: 1, templates: 0 });
    expect(await captureRow(captureA)).toMatchObject({
      face_similarity: null,
      personal_data_erased_at: expect.any(Date),
      liveness_passed: true,
    });
    expect((await captureRow(captureB)).face_similarity).not.toBeNull();
    expect((await identify(a.keys.pk_test, person)).body).toMatchObject({ matched: false, subject_ref: null });
    expect((await identify(b.keys.pk_test, person)).body).toMatchObject({ matched: true, subject_ref: refB });
    const [{ templates }] = await testDb()`select count(*)::int as templates from private.face_templates where identity_id = ${identityId}`;
    expect(templates).toBe(1);

    // a month in: B's ran out too, the last consent: template, baseline and documents go, the identity is erased
    await service.own.tick("consent-retention", new Date(t0.getTime() + 31 * DAY));
    expect((await captureRow(captureB)).face_similarity).toBeNull();
    const [identity] = await testDb()`select baseline, erased_at from private.identities where id = ${identityId}`;
    expect(identity).toMatchObject({ baseline: null, erased_at: expect.any(Date) });
    const [{ left }] = await testDb()`select (select count(*) from private.face_templates where identity_id = ${identityId})
                                           + (select count(*) from private.identity_documents where identity_id = ${identityId}) as left`;
    expect(Number(left)).toBe(0);
    expect((await identify(b.keys.pk_test, person)).body).toMatchObject({ matched: false, subject_ref: null });

    expect(await kinds(identityId)).toEqual([
      `consent_granted@${a.merchant_id}`,
      `consent_granted@${b.merchant_id}`,
      `consent_expired@${a.merchant_id}`,
      `data_erased@${a.merchant_id}`,
      `consent_expired@${b.merchant_id}`,
      `data_erased@${b.merchant_id}`,
    ]);
    expect(await verifyConsentLedger(testDb(), identityId)).toMatchObject({ ok: true, entries: 6 });
    // a second pass finds nothing left to do
    expect(await service.own.tick("consent-retention", new Date(t0.getTime() + 32 * DAY))).toBeNull();
  });

  it("a withdrawn consent is erased at the next tick, and a disclosure's documents go when its token expires", async () => {
    const m = await merchantFactory();
    const person = await enrollStranger(m.keys.pk_test);
    const captureId = await presenceCapture(m, person, { document: true });
    const res = await disclose(
      m.keys.sk_test,
      discloseBody(m, captureId, [{ key: "identity_document", disclosure_type: "document" }], { ttl_seconds: 120 }),
    );
    expect(res.status, res.text).toBe(200);
    const disclosureUuid = res.body.disclosure_id.slice(4).replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-");
    const stored = () => testDb()`select count(*)::int as n from private.disclosed_documents where disclosure_id = ${disclosureUuid}::uuid`;
    expect((await stored())[0].n).toBe(1);
    const now = new Date();
    await service.own.tick("consent-retention", new Date(now.getTime() + 60_000));
    expect((await stored())[0].n).toBe(1);
    await service.own.tick("consent-retention", new Date(now.getTime() + 180_000));
    expect((await stored())[0].n).toBe(0);
    expect(errorOf(await fetchDisclosure(m.keys.sk_test, res.body.consent_token, new Date(now.getTime() + 180_000)))).toEqual({
      status: 403,
      code: "CONSENT_EXPIRED",
    });

    expect((await revokeConsent(m.keys.sk_test, { subject_ref: person.subject_ref })).status).toBe(200);
    const identityId = await identityOfCapture(captureId);
    await service.own.tick("consent-retention", new Date(now.getTime() + 240_000));
    expect((await captureRow(captureId)).personal_data_erased_at).not.toBeNull();
    expect((await kinds(identityId)).slice(-2)).toEqual([`consent_withdrawn@${m.merchant_id}`, `data_erased@${m.merchant_id}`]);
  });
});
