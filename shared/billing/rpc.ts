/**
 * The billing slice of the RPC catalogue (shared/kernel/db/rpc.ts): a merchant's monthly allowance
 * and its billed claims (the CLI's usage and allowance commands; claims bill inside identity_claim).
 */

import type { Environment } from "../kernel/principal";
import type { Iso, Uuid } from "../kernel/rpc";

/** A merchant's billed claims in one month and its allowance, per environment (billing_usage). */
export interface BillingUsage {
  merchant_id: Uuid;
  month: string;
  period_start: Iso;
  period_end: Iso;
  environments: Record<Environment, { claims_billed: number; allowance: number; allowance_remaining: number; persons_billed: number }>;
}

declare module "../kernel/db/rpc" {
  interface RpcCatalogue {
    billing_allowance_set: [
      { merchant_id: Uuid; environment: Environment; monthly_claims: number; now: Iso },
      { merchant_id: Uuid; environment: Environment; monthly_claims: number },
    ];
    billing_usage: [{ merchant_id: Uuid; now: Iso; month?: string }, BillingUsage];
  }
}
