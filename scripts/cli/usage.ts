import { rpc } from "../../shared/kernel/db/rpc";
import { UUID } from "../../shared/lib/uuid";
import { type CommandGroup, managementApi, requireFlag, usage as usageError, withDatabase } from "./args";

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

const usage: CommandGroup = {
  /**
   * usage --merchant M [--month YYYY-MM]: the merchant's billed claims in the month (default: this
   * month, UTC) and its allowance, per environment, from the billing ledger (docs/resource-api.md, "Billing").
   */
  async ""(flags) {
    // With the merchant's own key: the management API, for that key's environment (docs/management.md, "Usage").
    const client = managementApi(flags);
    if (client) {
      const month = flags.month;
      if (month !== undefined && (typeof month !== "string" || !MONTH.test(month))) throw usageError("--month must be YYYY-MM");
      return client("GET", `/usage${month ? `?month=${month}` : ""}`);
    }
    const merchantId = requireFlag(flags, "merchant");
    if (!UUID.test(merchantId)) throw usageError("--merchant must be a merchant id");
    const month = flags.month;
    if (month !== undefined && (typeof month !== "string" || !MONTH.test(month))) throw usageError("--month must be YYYY-MM");
    return withDatabase((sql) =>
      rpc(sql, "billing_usage", { merchant_id: merchantId, now: new Date().toISOString(), ...(month ? { month } : {}) }),
    ).catch(unknownMerchant);
  },
};

export function unknownMerchant(error: unknown): never {
  if ((error as { code?: string }).code === "not_found") throw new Error("unknown merchant");
  throw error;
}

export default usage;
