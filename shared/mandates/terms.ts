/**
 * A mandate's terms as the resource API takes them (docs/resource-api.md#mandates): mandate-issue's
 * fields in this surface's names (`scope`, `until`, a ceiling whose kind follows from the fields it
 * carries, `period` as `day` … `lifetime`), without the granter and the proof. `POST /v1/mandates`
 * adds those two; a `mandate` session carries the terms and the screen supplies both.
 */
import * as v from "valibot";
import { money } from "../kernel/validation";
import { currencySchema } from "../lib/money";
import { ceilingCount, type IssueInput, issueSchema } from "./issue";

const periods = { day: "daily", week: "weekly", month: "monthly", lifetime: "lifetime" } as const;

const issued = issueSchema.entries;

export const mandateTermsSchema = v.strictObject({
  granted_to: issued.granted_to,
  granted_to_kind: v.optional(issued.granted_to_kind, "agent"),
  agent_display_name: issued.agent_display_name,
  agent_descriptor: issued.agent_descriptor,
  scope: issued.scopes,
  constraints: issued.constraints,
  ceiling: v.optional(
    v.strictObject({
      amount: v.optional(money(v.unknown())),
      currency: v.optional(currencySchema),
      count: v.optional(ceilingCount),
      period: v.optional(v.picklist(Object.keys(periods) as (keyof typeof periods)[]), "lifetime"),
    }),
  ),
  until: issued.expires_at,
  step_up_of: issued.step_up_of,
});

export type MandateTerms = v.InferOutput<typeof mandateTermsSchema>;

/** mandate-issue's input for `terms` granted by `grantedBy` on `proof`: the ceiling's kind follows from its fields. */
export function issueInputOf(terms: MandateTerms, grantedBy: string, proof: IssueInput["proof"]): IssueInput {
  const { scope, until, ceiling, ...rest } = terms;
  const hasAmount = ceiling?.amount !== undefined || ceiling?.currency !== undefined;
  const hasCount = ceiling?.count !== undefined;
  return {
    ...rest,
    granted_by: grantedBy,
    proof,
    scopes: scope,
    expires_at: until,
    ...(ceiling && {
      ceiling: {
        ...ceiling,
        kind: hasAmount && hasCount ? "both" : hasAmount ? "amount" : hasCount ? "count" : "none",
        period: periods[ceiling.period],
      },
    }),
  };
}
