import { simulateCapture, type AttackType } from "../../shared/engine/simulate";
import type { PresenceDescriptor } from "../../shared/engine";

let counter = 0;

/** A fresh capture nonce, unique across the run. */
export function captureNonce(): string {
  return `cap-${Date.now().toString(36)}-${(counter++).toString(36)}-${crypto.randomUUID().slice(0, 8)}`;
}

/**
 * A simulator descriptor of sandbox test person `person` taken at `at` (default now), bound to a
 * fresh capture nonce. Persons 1..1000 are the documented sandbox test persons.
 */
export function capture(person: number, options: { attack?: AttackType; at?: Date; state?: "calm" | "coerced"; nonce?: string } = {}): {
  descriptor: PresenceDescriptor;
  nonce: string;
} {
  const nonce = options.nonce ?? captureNonce();
  const descriptor = simulateCapture({
    person,
    attack: options.attack,
    nonce,
    state: options.state,
    capturedAt: (options.at ?? new Date()).toISOString(),
    seed: Math.floor(Math.random() * 2 ** 31),
  });
  return { descriptor, nonce };
}

/**
 * Sandbox persons are shared by every test of a run against one database; a test that needs a
 * person nobody else enrolled takes one from its own range.
 */
export function uniquePerson(): number {
  return 1 + Math.floor(Math.random() * 1000);
}
