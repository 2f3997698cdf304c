import { createMerchant } from "../../shared/merchants/merchants";
import { type CommandGroup, requireFlag, usage, withDatabase } from "./args";

const merchant: CommandGroup = {
  /** merchant create --name N: a merchant with pk/sk keys for test and live, shown once. */
  async create(flags) {
    const name = requireFlag(flags, "name").trim();
    if (name.length > 200) throw usage("--name must be at most 200 characters");
    return withDatabase((sql) => createMerchant(sql, name));
  },
};

export default merchant;
