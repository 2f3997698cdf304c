/**
 * What the service recorded about the person's acts and disclosures, at every merchant
 * (docs/decisions.md, D-469): the disclosures each merchant received (claims by key, never a value)
 * and the person's own approved and refused acts, each approved one with the receipt that
 * receipt-verify checks by its code, without a key.
 */
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { mountOf } from "../kernel/registry";
import type { PersonSession } from "./session";

/** Every disclosure made about the person, newest first. */
export async function listPersonDisclosures(deps: Deps, session: PersonSession) {
  return { disclosures: await rpc(deps.sql, "person_disclosures", { identity_id: session.identityId }) };
}

/** The person's acts, newest first (at most 200), each receipt with the address that verifies it. */
export async function listPersonReceipts(deps: Deps, session: PersonSession, serviceBaseUrl: string) {
  const acts = await rpc(deps.sql, "person_receipts", { identity_id: session.identityId, environment: session.environment });
  const verifyAt = `${serviceBaseUrl.replace(/\/+$/, "")}${mountOf("receipt-verify")}`;
  return {
    acts: acts.map((act) => ({
      ...act,
      receipt: act.receipt && { ...act.receipt, verify_url: `${verifyAt}?code=${encodeURIComponent(act.receipt.code)}` },
    })),
  };
}
