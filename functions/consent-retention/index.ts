/**
 * The consent retention worker (cron, every minute): each tick ends the consents whose
 * `retention_days` ran out and erases what every ended consent covered (shared/consent/ledger.ts).
 * It serves no HTTP.
 */
import { sweepConsentRetention } from "../../shared/consent/ledger";
import { cronWorker } from "../../shared/edge/cron";

export default cronWorker("consent-retention", (sql, _config, at) => sweepConsentRetention(sql, at));
