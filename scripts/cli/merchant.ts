import { UUID } from "../../shared/lib/uuid";
import { addOwner, createMerchant, listOwners, removeOwner } from "../../shared/merchants/accounts";
import { type CommandGroup, type Flags, managementApi, requireFlag, usage, withDatabase } from "./args";

const merchant: CommandGroup = {
  /** merchant create --name N: a merchant with pk/sk keys for test and live, shown once. */
  async create(flags) {
    const name = requireFlag(flags, "name").trim();
    if (name.length > 200) throw usage("--name must be at most 200 characters");
    return withDatabase((sql) => createMerchant(sql, name));
  },

  /**
   * merchant owner add --merchant M --subject-ref sub_…: the person the merchant knows by that
   * pseudonym (they enrolled with it) may authorise AI agents for it, in the environment they enrolled in.
   */
  async "owner add"(flags) {
    // With the merchant's own key: an invitation the person accepts by proving presence (D-452), not an owner added.
    const api = managementApi(flags);
    if (api) return api("POST", "/owners", { subject_ref: requireFlag(flags, "subject-ref") });
    const merchantId = merchantFlag(flags);
    const subjectRef = requireFlag(flags, "subject-ref");
    return withDatabase((sql) => addOwner(sql, merchantId, subjectRef, new Date())).catch((error) => {
      const code = (error as { code?: string }).code;
      if (code === "not_found") throw new Error("unknown merchant, or no person enrolled with it has that subject_ref");
      if (code === "IDENTITY_UNREACHABLE") throw new Error("that person's identity was erased");
      throw error;
    });
  },

  /** merchant owner list --merchant M: the owners, oldest first. */
  async "owner list"(flags) {
    const api = managementApi(flags);
    if (api) return api("GET", "/owners");
    const merchantId = merchantFlag(flags);
    return withDatabase((sql) => listOwners(sql, merchantId)).catch(unknownMerchant);
  },

  /** merchant owner remove --merchant M --subject-ref sub_…: the agents that person authorised stop at their next call. */
  async "owner remove"(flags) {
    const api = managementApi(flags);
    if (api) return api("POST", `/owners/${encodeURIComponent(requireFlag(flags, "subject-ref"))}/remove`, {});
    const merchantId = merchantFlag(flags);
    const subjectRef = requireFlag(flags, "subject-ref");
    return withDatabase((sql) => removeOwner(sql, merchantId, subjectRef)).catch(unknownMerchant);
  },
};

function merchantFlag(flags: Flags): string {
  const merchantId = requireFlag(flags, "merchant");
  if (!UUID.test(merchantId)) throw usage("--merchant must be a merchant id");
  return merchantId.toLowerCase();
}

function unknownMerchant(error: unknown): never {
  if ((error as { code?: string }).code === "not_found") throw new Error("unknown merchant");
  throw error;
}

export default merchant;
