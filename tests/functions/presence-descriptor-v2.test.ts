/**
 * Descriptors v1 and v2 through a capture path, over HTTP: enrolment accepts a bona fide capture
 * of either version, refuses the attacks on the light challenge with the engine's reason, refuses a
 * v2 capture whose nonce was rewritten (its reflection follows the old nonce's sequence), and names
 * the bad field of a malformed v2 descriptor.
 */
import { describe, expect, it } from "vitest";
import { capture } from "../harness/captures";
import { merchantFactory } from "../harness/factories";
import { call, errorOf } from "../harness/http";
import { CONSENT } from "../harness/identity";

function enroll(key: string, body: unknown) {
  return call("process-biovital-enrollment", { key, body });
}

describe("presence descriptors v1 and v2 at enrolment", () => {
  it("enrols a bona fide capture of either version", async () => {
    const merchant = await merchantFactory();
    for (const [person, light] of [
      [41, false],
      [42, true],
    ] as const) {
      const { descriptor, nonce } = capture(person, { light });
      expect(descriptor.version).toBe(light ? 2 : 1);
      const res = await enroll(merchant.keys.pk_test, { capture_nonce: nonce, face_template: descriptor, consent: CONSENT });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ success: true, status: "enrolled" });
    }
  });

  it.each(["earlier_capture", "injected", "relit_puppet", "screen"] as const)(
    "403 BIOMETRIC_LIVENESS_FAILED for a %s attack on the light challenge",
    async (attack) => {
      const merchant = await merchantFactory();
      const { descriptor, nonce } = capture(43, { attack, light: true });
      const res = await enroll(merchant.keys.pk_test, { capture_nonce: nonce, face_template: descriptor, consent: CONSENT });
      expect(errorOf(res)).toEqual({ status: 403, code: "BIOMETRIC_LIVENESS_FAILED" });
      expect(["light_not_followed", "no_pulse"]).toContain(res.body.reason);
    },
  );

  it("refuses a v2 capture presented again under a rewritten nonce: the reflection follows the old one", async () => {
    const merchant = await merchantFactory();
    const { descriptor } = capture(44, { light: true });
    const nonce = `rewritten-${crypto.randomUUID()}`;
    const res = await enroll(merchant.keys.pk_test, {
      capture_nonce: nonce,
      face_template: { ...descriptor, capture_nonce: nonce },
      consent: CONSENT,
    });
    expect(errorOf(res)).toEqual({ status: 403, code: "BIOMETRIC_LIVENESS_FAILED" });
    expect(res.body.reason).toBe("light_not_followed");
  });

  it("400 INVALID_INPUT names the light's fields, and a version the engine does not know", async () => {
    const merchant = await merchantFactory();
    const { descriptor, nonce } = capture(45, { light: true });
    const light = descriptor.signals.light!;
    const cases: Array<[unknown, string]> = [
      [
        { ...descriptor, signals: { ...descriptor.signals, light: { ...light, skin: light.skin.map(() => [300, 0, 0]) } } },
        "face_template.signals.light.skin",
      ],
      [{ ...descriptor, signals: { ...descriptor.signals, light: undefined } }, "face_template.signals.light"],
      [{ ...descriptor, version: 3 }, "face_template.version"],
    ];
    for (const [face_template, field] of cases) {
      const res = await enroll(merchant.keys.pk_test, { capture_nonce: nonce, face_template, consent: CONSENT });
      expect(errorOf(res)).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(res.body.fields).toContain(field);
    }
  });
});
