import { verifyConsentLedger } from "../../shared/consent/ledger";
import { UUID } from "../../shared/lib/uuid";
import { type CommandGroup, failRun, usage, withDatabase } from "./args";

const consent: CommandGroup = {
  /**
   * consent verify [--identity <user_id>]: recomputes the hash chain of every person's consent ledger
   * (or one person's) and lists where it breaks; the exit status is 1 when it breaks anywhere.
   */
  async verify(flags) {
    const identity = flags.identity;
    if (identity !== undefined && (typeof identity !== "string" || !UUID.test(identity))) throw usage("--identity must be a user_id");
    const report = await withDatabase((sql) => verifyConsentLedger(sql, identity));
    if (!report.ok) failRun();
    return report;
  },
};

export default consent;
