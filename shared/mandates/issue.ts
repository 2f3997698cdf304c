import * as v from "valibot";
import { currencySchema, isMinorUnitAmount } from "../lib/money";
import { ApiError } from "../platform/errors";
import { parseWith } from "../platform/validation";
import { mandateUuid } from "./ids";
import { constraintRequiredScopes, isScope, moneyScopes, type Scope } from "./scopes";

const allowlist = v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(100))), v.maxLength(100));

export const issueSchema = v.strictObject({
  granted_by: v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
  granted_to: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)),
  granted_to_kind: v.pipe(v.string(), v.regex(/^[a-z][a-z_]{0,31}$/, "lowercase kind, e.g. agent")),
  agent_display_name: v.optional(v.string()),
  agent_descriptor: v.optional(v.string()),
  scopes: v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(8)),
  constraints: v.optional(
    v.strictObject({
      merchant_allowlist: v.optional(allowlist),
      category_allowlist: v.optional(allowlist),
      country_allowlist: v.optional(allowlist),
    }),
  ),
  ceiling: v.optional(
    v.object({
      kind: v.picklist(["amount", "count", "both", "none"]),
      amount: v.optional(v.unknown()),
      currency: v.optional(currencySchema),
      count: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(1))),
      period: v.optional(v.picklist(["lifetime", "daily", "weekly", "monthly"]), "lifetime"),
    }),
  ),
  expires_at: v.pipe(v.string(), v.isoTimestamp()),
  step_up_of: v.optional(v.string()),
  proof: v.strictObject({ capture_id: v.pipe(v.string(), v.uuid()) }),
});

export type IssueInput = v.InferOutput<typeof issueSchema>;

export interface IssueRequest extends Omit<IssueInput, "ceiling" | "step_up_of"> {
  scopes: Scope[];
  ceiling: {
    kind: "amount" | "count" | "both" | "none";
    amount: number | null;
    currency: string | null;
    count: number | null;
    period: string;
  };
  step_up_of?: string;
}

/**
 * The numbered rules of spec 4.7 that need no database, in the order a caller fixes them: shape,
 * scopes (exact, closed, no wildcard), constraints for `task`, the ceiling's shape and money rules,
 * the agent fields (absent stays absent; blank or too long is refused), and an expiry in the future.
 * A client-sent period anchor in the ceiling is ignored.
 */
export function issueRequest(body: unknown, now: Date): IssueRequest {
  const input = parseWith(issueSchema, body);
  if (input.scopes.some((scope) => scope.includes("*"))) throw new ApiError("WILDCARD_SCOPE_FORBIDDEN");
  const unknown = input.scopes.filter((scope) => !isScope(scope));
  if (unknown.length) throw new ApiError("UNKNOWN_SCOPE", { scopes: unknown });
  const scopes = [...new Set(input.scopes)] as Scope[];

  const constrained = Object.values(input.constraints ?? {}).some((list) => list && list.length > 0);
  if (scopes.some((scope) => constraintRequiredScopes.includes(scope)) && !constrained)
    throw new ApiError("CONSTRAINTS_REQUIRED_FOR_SCOPE");

  const ceiling = ceilingOf(input.ceiling, scopes);
  checkAgentField(input.agent_display_name, 64, "AGENT_DISPLAY_NAME_EMPTY", "AGENT_DISPLAY_NAME_TOO_LONG");
  checkAgentField(input.agent_descriptor, 140, "AGENT_DESCRIPTOR_EMPTY", "AGENT_DESCRIPTOR_TOO_LONG");
  if (Date.parse(input.expires_at) <= now.getTime()) throw new ApiError("EXPIRES_AT_NOT_IN_FUTURE");
  const stepUpOf = input.step_up_of === undefined ? undefined : mandateUuid(input.step_up_of);
  if (stepUpOf === null) throw new ApiError("STEP_UP_OF_INVALID");
  return { ...input, scopes, ceiling, step_up_of: stepUpOf };
}

function ceilingOf(ceiling: IssueInput["ceiling"], scopes: Scope[]): IssueRequest["ceiling"] {
  if (!ceiling) return { kind: "none", amount: null, currency: null, count: null, period: "lifetime" };
  const wantsAmount = ceiling.kind === "amount" || ceiling.kind === "both";
  const wantsCount = ceiling.kind === "count" || ceiling.kind === "both";
  if (ceiling.amount !== undefined && !isMinorUnitAmount(ceiling.amount)) throw new ApiError("AMOUNT_INVALID");
  if (wantsAmount && scopes.some((scope) => !moneyScopes.includes(scope))) throw new ApiError("AMOUNT_CEILING_NOT_APPLICABLE");
  const shapeProblems = [
    wantsAmount !== (ceiling.amount !== undefined) && "ceiling.amount",
    wantsAmount !== (ceiling.currency !== undefined) && "ceiling.currency",
    wantsCount !== (ceiling.count !== undefined) && "ceiling.count",
    ceiling.amount === 0 && "ceiling.amount",
  ].filter((field): field is string => typeof field === "string");
  if (shapeProblems.length) throw new ApiError("INVALID_CEILING", { fields: [...new Set(shapeProblems)] });
  return {
    kind: ceiling.kind,
    amount: (ceiling.amount as number | undefined) ?? null,
    currency: ceiling.currency ?? null,
    count: ceiling.count ?? null,
    period: ceiling.period,
  };
}

function checkAgentField(
  value: string | undefined,
  max: number,
  empty: "AGENT_DISPLAY_NAME_EMPTY" | "AGENT_DESCRIPTOR_EMPTY",
  tooLong: "AGENT_DISPLAY_NAME_TOO_LONG" | "AGENT_DESCRIPTOR_TOO_LONG",
) {
  if (value === undefined) return;
  if (value.trim() === "") throw new ApiError(empty);
  if ([...value].length > max) throw new ApiError(tooLong);
}
