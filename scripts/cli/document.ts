import { readFile } from "node:fs/promises";
import * as v from "valibot";
import { masterListCertificates, trustAnchorOf } from "../../shared/identity/trust-list";
import { rpc } from "../../shared/kernel/db/rpc";
import { environments } from "../../shared/kernel/principal";
import {
  bytesOf,
  createTestCsca,
  createTestPassport,
  type PassportCase,
  passportCases,
  type TestCsca,
} from "../../shared/simulator/passports";
import { type CommandGroup, choiceFlag, requireFlag, usage, withDatabase } from "./args";

/** Identity documents (docs/documents.md): sandbox CSCAs and passports, and the trust lists documents are verified against. */
const document: CommandGroup = {
  /**
   * csca create [--country UTO]: a test Country Signing CA, added to the sandbox trust list. Prints
   * its certificate and private key: save it to a file for `passport create --csca`.
   */
  async "csca create"(flags) {
    const country = typeof flags.country === "string" ? flags.country : "UTO";
    if (!/^[A-Z]{1,3}$/.test(country)) throw usage("--country must be an ICAO code of 1 to 3 letters");
    const csca = await createTestCsca(country);
    const anchor = await trustAnchorOf(bytesOf(csca.certificate));
    await withDatabase((sql) =>
      rpc(sql, "document_trust_anchors_add", { environment: "test", source: "sandbox", now: new Date().toISOString(), anchors: [anchor] }),
    );
    return { ...csca, fingerprint: anchor.fingerprint, subject: anchor.subject, environment: "test" };
  },

  /**
   * passport create --csca FILE --case valid|tampered|wrong-signer|expired|unknown-csca [--at ISO]
   * [--expires-on YYYY-MM-DD] [--portrait-similarity N]: a test passport of the CSCA in FILE (what
   * `csca create` printed), as the device sends it (`document`), with the code the case is refused with.
   */
  async "passport create"(flags) {
    const csca = await cscaFile(requireFlag(flags, "csca"));
    const at = typeof flags.at === "string" ? new Date(flags.at) : new Date();
    if (Number.isNaN(at.getTime())) throw usage("--at must be an ISO 8601 time");
    const expiresOn = typeof flags["expires-on"] === "string" ? flags["expires-on"] : undefined;
    if (expiresOn !== undefined && !/^20\d\d-\d\d-\d\d$/.test(expiresOn))
      throw usage("--expires-on must be a date YYYY-MM-DD in 2000-2099");
    const similarity = typeof flags["portrait-similarity"] === "string" ? Number(flags["portrait-similarity"]) : undefined;
    if (similarity !== undefined && !(similarity >= -1 && similarity <= 1))
      throw usage("--portrait-similarity must be a number from -1 to 1");
    const kind = choiceFlag(flags, "case", Object.keys(passportCases) as PassportCase[], "valid");
    return createTestPassport(csca, { case: kind, at, expiresOn, portraitSimilarity: similarity });
  },

  /**
   * trust-list import --file ML --env live|test: the CSCAs of an ICAO master list (its signature and
   * its signer's chain checked first), added to the environment's trust list.
   */
  async "trust-list import"(flags) {
    const environment = choiceFlag(flags, "env", environments);
    const file = requireFlag(flags, "file");
    const bytes = new Uint8Array(await readFile(file));
    const { signer, certificates } = await masterListCertificates(bytes).catch((error: Error) => {
      throw new Error(`${file}: ${error.message}`);
    });
    const anchors = await Promise.all(certificates.map(trustAnchorOf));
    const result = await withDatabase((sql) =>
      rpc(sql, "document_trust_anchors_add", { environment, source: "master_list", now: new Date().toISOString(), anchors }),
    );
    return { environment, master_list_signer: signer, certificates: anchors.length, ...result };
  },

  /** trust-list show --env live|test: the environment's CSCAs (without the certificates). */
  async "trust-list show"(flags) {
    const environment = choiceFlag(flags, "env", environments);
    return { environment, ...(await withDatabase((sql) => rpc(sql, "document_trust_anchors_list", { environment }))) };
  },

  /** trust-list remove --env live|test --fingerprint HEX: documents signed under that CSCA verify no more. */
  async "trust-list remove"(flags) {
    const environment = choiceFlag(flags, "env", environments);
    const fingerprint = requireFlag(flags, "fingerprint").toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(fingerprint)) throw usage("--fingerprint must be the SHA-256 of the certificate, 64 hex digits");
    const result = await withDatabase((sql) => rpc(sql, "document_trust_anchors_remove", { environment, fingerprint }));
    if (result.removed === 0) throw new Error(`no CSCA ${fingerprint} on the ${environment} trust list`);
    return { environment, fingerprint, ...result };
  },
};

const cscaSchema = v.object({ country: v.string(), certificate: v.string(), private_key: v.string() });

async function cscaFile(file: string): Promise<TestCsca> {
  try {
    return v.parse(cscaSchema, JSON.parse(await readFile(file, "utf8")));
  } catch (error) {
    throw new Error(`${file} is not what \`document csca create\` printed: ${(error as Error).message}`);
  }
}

export default document;
