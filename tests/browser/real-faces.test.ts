/**
 * A different real person never matches an enrolled one (D-385): face-api's own descriptors of
 * every real face at hand (scripts/media/faces.ts: two public-domain portraits, Grace Hopper's held
 * out, and 22 faces of face-api's group photographs), computed in Chromium as the client computes
 * them, enrolled through the service and shown to it as someone else. The live signals are the
 * simulator's (the face is what is under test here); the browser project runs it because the
 * descriptors come from real Chromium.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type RealFace, realFaces } from "../../scripts/media/faces";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf, replayHeaders } from "../harness/http";
import { enrollStranger } from "../harness/identity";
import { useOwnService } from "../harness/own-service";

// A service and database of this file's own: each test empties the sandbox gallery before it enrols,
// which on the run's database would take the templates of every test running beside it (D-760).
useOwnService("real_faces", ["face-identify", "process-biovital-enrollment", "process-biovital-transaction"]);

let faces: RealFace[];

beforeAll(async () => {
  faces = await realFaces(["plain", "mirror"]);
});

const persons = () => [...new Set(faces.map((f) => f.person))];
const faceOf = (person: string, variant: "plain" | "mirror") => faces.find((f) => f.person === person && f.variant === variant);

function identify(key: string, shot: { descriptor: unknown; nonce: string }) {
  return call("face-identify", {
    key,
    body: { face_template: shot.descriptor, capture_nonce: shot.nonce },
    headers: replayHeaders(),
  });
}

function login(key: string, subjectRef: string, shot: { descriptor: unknown; nonce: string }) {
  return call("process-biovital-transaction", {
    key,
    body: {
      action: "ACTION_LOGIN",
      service_hash: `svc:${crypto.randomUUID()}`,
      user_id: subjectRef,
      capture_nonce: shot.nonce,
      face_template: shot.descriptor,
    },
    headers: replayHeaders(),
  });
}

describe("real faces: a different person never matches an enrolled one", () => {
  it("has the real faces: both portraits and at least 20 persons in all", () => {
    expect(faces.filter((f) => f.portrait && f.variant === "plain").map((f) => f.person)).toEqual(["astronaut", "hopper"]);
    expect(persons().length).toBeGreaterThanOrEqual(20);
  });

  for (const enrolledPerson of ["astronaut", "hopper"]) {
    it(`enrols ${enrolledPerson}, recognises them mirrored, and refuses every other real person at identification and at login`, async () => {
      // The sandbox gallery holds this face once, from this portrait: an enrolment of a face the
      // environment knows keeps that person's template, not this one; the other test enrolled the
      // other portrait here.
      await testDb()`delete from private.face_templates where environment = 'test'`;
      const merchant = await merchantFactory();
      const own = faceOf(enrolledPerson, "plain");
      const mirrored = faceOf(enrolledPerson, "mirror");
      if (!own || !mirrored) throw new Error(`no face of ${enrolledPerson}`);
      const enrolled = await enrollStranger(merchant.keys.pk_test, own.embedding);

      // The same person, mirrored by another camera: recognised, and signed in.
      const again = enrolled.capture();
      again.descriptor.face.embedding = mirrored.embedding;
      expect((await identify(merchant.keys.pk_test, again)).body).toMatchObject({ matched: true, subject_ref: enrolled.subject_ref });
      const signedIn = enrolled.capture();
      signedIn.descriptor.face.embedding = mirrored.embedding;
      expect((await login(merchant.keys.sk_test, enrolled.subject_ref, signedIn)).status).toBe(200);

      // Everyone else, as they are and mirrored: never identified, never signed in as the enrolled one.
      const others = faces.filter((f) => f.person !== enrolledPerson);
      const wrongly: string[] = [];
      for (const other of others) {
        const shot = enrolled.capture();
        shot.descriptor.face.embedding = other.embedding;
        const found = await identify(merchant.keys.pk_test, shot);
        if (found.body.matched !== false) wrongly.push(`identified ${other.person}/${other.variant}`);
        const attempt = enrolled.capture();
        attempt.descriptor.face.embedding = other.embedding;
        const refused = errorOf(await login(merchant.keys.sk_test, enrolled.subject_ref, attempt));
        if (refused.code !== "FACE_MATCH_BELOW_THRESHOLD")
          wrongly.push(`${other.person}/${other.variant} signed in: ${JSON.stringify(refused)}`);
      }
      expect(wrongly).toEqual([]);
      expect(others.length).toBeGreaterThanOrEqual(40);
    }, 240_000);
  }
});
