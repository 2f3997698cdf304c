import { trustAnchorOf } from "../../shared/identity/trust-list";
import { rpc } from "../../shared/kernel/db/rpc";
import type { Environment } from "../../shared/kernel/principal";
import { bytesOf, createTestCsca, createTestPassport, type PassportOptions, type TestCsca } from "../../shared/simulator/passports";
import { testDb } from "./factories";

const cscas = new Map<Environment, Promise<TestCsca>>();

/**
 * The test file's Country Signing CA of `environment`, on that environment's trust list: the
 * sandbox's as `document csca create` adds it, the live one as an imported master list would.
 */
export function trustedCsca(environment: Environment = "test"): Promise<TestCsca> {
  let csca = cscas.get(environment);
  if (!csca) {
    csca = (async () => {
      const made = await createTestCsca("UTO", new Date("2026-01-01T00:00:00Z"));
      const anchor = await trustAnchorOf(bytesOf(made.certificate));
      const source = environment === "test" ? "sandbox" : "master_list";
      await rpc(testDb(), "document_trust_anchors_add", { environment, source, now: new Date().toISOString(), anchors: [anchor] });
      return made;
    })();
    cscas.set(environment, csca);
  }
  return csca;
}

/**
 * The `document` a device sends after reading a passport of the trusted CSCA of `environment`, in
 * `options.case` (default valid), made for a capture at `options.at` (default now).
 */
export async function passport(options: Partial<PassportOptions> & { environment?: Environment } = {}) {
  const made = await createTestPassport(await trustedCsca(options.environment), { case: "valid", ...options });
  return made.document;
}
