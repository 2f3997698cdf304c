import { rpc } from "../../shared/kernel/db/rpc";
import { environments } from "../../shared/kernel/principal";
import { UUID } from "../../shared/lib/uuid";
import { type CommandGroup, choiceFlag, requireFlag, usage, withDatabase } from "./args";
import { unknownMerchant } from "./usage";

/** The most an operator may allow per month (the column's bound). */
const MAX_MONTHLY_CLAIMS = 1_000_000_000;

const allowance: CommandGroup = {
  /**
   * allowance set --merchant M --env test|live --claims N: the billed claims the merchant may make per
   * calendar month (UTC) in that environment, from its next claim on; 0 stops billable claims.
   */
  async set(flags) {
    const merchantId = requireFlag(flags, "merchant");
    if (!UUID.test(merchantId)) throw usage("--merchant must be a merchant id");
    const environment = choiceFlag(flags, "env", environments);
    const claims = requireFlag(flags, "claims");
    if (!/^\d{1,10}$/.test(claims) || Number(claims) > MAX_MONTHLY_CLAIMS)
      throw usage(`--claims must be a whole number from 0 to ${MAX_MONTHLY_CLAIMS}`);
    return withDatabase((sql) =>
      rpc(sql, "billing_allowance_set", {
        merchant_id: merchantId,
        environment,
        monthly_claims: Number(claims),
        now: new Date().toISOString(),
      }),
    ).catch(unknownMerchant);
  },
};

export default allowance;
