import { evaluatePresence, type PresenceBaseline, type PresenceDescriptor, type PresenceModality } from "../../shared/engine";
import { type AttackType, simulateCapture } from "../../shared/simulator";

let counter = 0;

/** A fresh capture nonce, unique across the run. */
export function captureNonce(): string {
  return `cap-${Date.now().toString(36)}-${(counter++).toString(36)}-${crypto.randomUUID().slice(0, 8)}`;
}

type State = "calm" | "coerced";

/**
 * Whether a simulated capture is the fixture it claims to be. The engine's error rates are
 * measured by `npm run bench:engine` and its unit tests; HTTP tests need fixtures whose verdict
 * is known, so a seed is drawn until the descriptor is a clear example of its kind.
 */
function isClearExample(
  descriptor: PresenceDescriptor,
  attack: AttackType,
  state: State,
  baseline: PresenceBaseline | null,
  modality: PresenceModality = "face_voice",
): boolean {
  const result = evaluatePresence(descriptor, { baseline, modality });
  if (attack !== "none") return !result.liveness.passed;
  return result.liveness.passed && (baseline === null || result.coercion.signal === (state === "coerced"));
}

/**
 * A simulator descriptor of sandbox test person `person` taken at `at` (default now), bound to a
 * fresh capture nonce. Persons 1..1000 are the documented sandbox test persons. With `baseline`
 * (the identity's), a calm capture shows no coercion signal and a coerced one shows it. With
 * `light`, a descriptor v2 under the light challenge; with `faceOnly` (and the light), a silent one,
 * judged as a face-only capture (D-428).
 */
export function capture(
  person: number,
  options: {
    attack?: AttackType;
    at?: Date;
    state?: State;
    nonce?: string;
    baseline?: PresenceBaseline | null;
    light?: boolean;
    faceOnly?: boolean;
  } = {},
): {
  descriptor: PresenceDescriptor;
  nonce: string;
} {
  const nonce = options.nonce ?? captureNonce();
  const attack = options.attack ?? "none";
  const state = options.state ?? "calm";
  for (let attempt = 0; attempt < 50; attempt++) {
    const descriptor = simulateCapture({
      person,
      attack,
      nonce,
      state,
      capturedAt: (options.at ?? new Date()).toISOString(),
      seed: Math.floor(Math.random() * 2 ** 31),
      ...(options.light || options.faceOnly ? { light: true } : {}),
      ...(options.faceOnly ? { faceOnly: true } : {}),
    });
    const modality = options.faceOnly ? "face" : "face_voice";
    if (isClearExample(descriptor, attack, state, options.baseline ?? null, modality)) return { descriptor, nonce };
  }
  throw new Error(`no clear ${attack}/${state} capture of person ${person} in 50 seeds`);
}
