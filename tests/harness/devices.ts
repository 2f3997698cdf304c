/**
 * Devices for the HTTP tests: a person's identity id (the `sub` of their first-party session JWT),
 * and devices registered for them through the real registration path (shared/devices/registration.ts)
 * with a software authenticator (./authenticator.ts): the ceremony's challenge issued by the RPC the
 * function uses, the attestation verified, the credential stored with its event.
 */
import { assertionChallenge, descriptorDigest } from "../../shared/contracts/device";
import type { RelyingParty } from "../../shared/devices/ceremony";
import { issueDeviceChallenge } from "../../shared/devices/challenges";
import type { DeviceView } from "../../shared/devices/devices";
import { registerDevice } from "../../shared/devices/registration";
import type { Environment } from "../../shared/kernel/principal";
import { SoftwareCredential } from "./authenticator";
import { testDb } from "./factories";

/** The identity id a first-party session JWT names (its `sub`). */
export function identityOf(sessionToken: string): string {
  return JSON.parse(Buffer.from(sessionToken.split(".")[1], "base64url").toString("utf8")).sub;
}

/** The relying party the seeds register for (any: an assertion is judged against the service's own). */
const SEED_RP: RelyingParty = { id: "localhost", name: "Seed", origins: ["http://localhost"] };

/**
 * Registers a new software credential for `identityId` as `merchantId`'s enrollment ceremony would,
 * at `now` (with the registration options' `userHandle` when given), and answers it with the device the service stored.
 */
export async function seedDevice(
  merchantId: string,
  environment: Environment,
  identityId: string,
  options: { now?: Date; synced?: boolean; userHandle?: string } = {},
): Promise<{ credential: SoftwareCredential; device: DeviceView }> {
  const deps = { sql: testDb(), now: options.now ?? new Date(), locale: "en" as const };
  const tenant = { merchantId, environment };
  const credential = new SoftwareCredential();
  // With a user handle, as the hosted screen's served options carry one (the credential keeps it).
  const { challenge } = await issueDeviceChallenge(deps, tenant, "enroll", options.userHandle ? { userHandle: options.userHandle } : {});
  const digest = await descriptorDigest({ seeded: true });
  const response = credential.register(assertionChallenge(challenge, digest), SEED_RP.origins[0], { synced: options.synced });
  const registered = await registerDevice(deps, tenant, {
    identityId,
    purpose: "enroll",
    challenge,
    descriptorDigest: digest,
    response,
    rp: SEED_RP,
  });
  if (!registered.ok) throw new Error(`the seeded registration was refused: ${registered.reason}`);
  return { credential, device: registered.device };
}
