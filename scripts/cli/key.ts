import { parseApiKey } from "../../shared/kernel/api-keys";
import { rpc } from "../../shared/kernel/db/rpc";
import { environments } from "../../shared/kernel/principal";
import { sha256Hex } from "../../shared/lib/crypto";
import { UUID } from "../../shared/lib/uuid";
import { createKey } from "../../shared/merchants/accounts";
import { type CommandGroup, choiceFlag, requireFlag, usage, withDatabase } from "./args";

const key: CommandGroup = {
  /** key create --merchant M --kind publishable|secret --env test|live: one more key, shown once. */
  async create(flags) {
    const merchantId = requireFlag(flags, "merchant");
    if (!UUID.test(merchantId)) throw usage("--merchant must be a merchant id");
    const kind = choiceFlag(flags, "kind", ["publishable", "secret"] as const);
    const environment = choiceFlag(flags, "env", environments);
    return withDatabase((sql) => createKey(sql, merchantId, kind, environment)).catch(unknownAs("merchant"));
  },

  /** key revoke --key <full key> | --key-id <id>: the key stops authenticating at once. */
  async revoke(flags) {
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

function unknownAs(what: string) {
  return (error: unknown) => {
    if ((error as { code?: string }).code === "not_found") throw new Error(`unknown ${what}`);
    throw error;
  };
}

export default key;
