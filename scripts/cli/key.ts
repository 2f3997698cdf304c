import { parseApiKey } from "../../shared/kernel/api-keys";
import { rpc } from "../../shared/kernel/db/rpc";
import { environments } from "../../shared/kernel/principal";
import { sha256Hex } from "../../shared/lib/crypto";
import { UUID } from "../../shared/lib/uuid";
import { createKey } from "../../shared/merchants/accounts";
import { type CommandGroup, choiceFlag, type Flags, listFlag, managementApi, requireFlag, usage, withDatabase } from "./args";

/**
 * With the merchant's own key (`--api-key` or SERVICE_API_KEY), the commands are clients of the
 * management API (docs/management.md, "Keys") and act in that key's environment; without one they
 * are the operator's, on the database.
 */
const key: CommandGroup = {
  /** key list --api-key K: the environment's keys (hints only). */
  async list(flags) {
    return api(flags)("GET", "/api_keys");
  },

  /** key roll --api-key K --key-id ID [--overlap-seconds 0..86400]: a new key (shown once); the old one stops after the overlap. */
  async roll(flags) {
    const overlap = flags["overlap-seconds"] === undefined ? {} : { overlap_seconds: Number(requireFlag(flags, "overlap-seconds")) };
    return api(flags)("POST", `/api_keys/${encodeURIComponent(requireFlag(flags, "key-id"))}/roll`, overlap);
  },

  /** key create --merchant M --kind publishable|secret --env test|live: one more key, shown once. */
  async create(flags) {
    const client = managementApi(flags);
    if (client) {
      const kind = choiceFlag(flags, "kind", ["publishable", "secret"] as const, "secret");
      const scopes = listFlag(flags, "scopes");
      const name = typeof flags.name === "string" ? flags.name : undefined;
      return client("POST", "/api_keys", { kind, ...(scopes ? { scopes } : {}), ...(name ? { name } : {}) });
    }
    const merchantId = requireFlag(flags, "merchant");
    if (!UUID.test(merchantId)) throw usage("--merchant must be a merchant id");
    const kind = choiceFlag(flags, "kind", ["publishable", "secret"] as const);
    const environment = choiceFlag(flags, "env", environments);
    return withDatabase((sql) => createKey(sql, merchantId, kind, environment)).catch(unknownAs("merchant"));
  },

  /** key revoke --key <full key> | --key-id <id>: the key stops authenticating at once. */
  async revoke(flags) {
    const client = managementApi(flags);
    if (client) return client("POST", `/api_keys/${encodeURIComponent(requireFlag(flags, "key-id"))}/revoke`, {});
    if (typeof flags.key === "string") {
      if (!parseApiKey(flags.key)) throw usage("--key is not a well-formed API key");
      const keyHash = await sha256Hex(flags.key);
      return withDatabase((sql) => rpc(sql, "api_key_revoke", { key_hash: keyHash })).catch(unknownAs("key"));
    }
    const keyId = requireFlag(flags, "key-id");
    if (!UUID.test(keyId)) throw usage("--key-id must be a key id");
    return withDatabase((sql) => rpc(sql, "api_key_revoke", { key_id: keyId })).catch(unknownAs("key"));
  },
};

/** The management API, which these commands need: a key is required. */
function api(flags: Flags) {
  const client = managementApi(flags);
  if (!client) throw usage("--api-key (or SERVICE_API_KEY) is required: this command calls the service's management API");
  return client;
}

function unknownAs(what: string) {
  return (error: unknown) => {
    if ((error as { code?: string }).code === "not_found") throw new Error(`unknown ${what}`);
    throw error;
  };
}

export default key;
