import * as v from "valibot";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError, type ErrorCode } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import type { PendingResponse } from "../kernel/rpc";
import { money } from "../kernel/validation";
import { sha256Hex } from "../lib/crypto";
import { canonicalJson } from "../lib/json";
import { currencySchema, isMinorUnitAmount } from "../lib/money";
import { mandateUuid } from "./ids";
import type { MandateCeiling } from "./rpc";
import { constraintRequiredScopes, isScope, moneyScopes, type Scope, scopeLabel } from "./scopes";

/**
 * A count ceiling: uses per period, at most what the Postgres `int` column holds (a larger one
 * would be no ceiling at all: kind `none`). The resource API's ceiling takes the same.
 */
export const ceilingCount = v.pipe(v.number(), v.safeInteger(), v.minValue(1), v.maxValue(2_147_483_647));

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
      amount: v.optional(money(v.unknown())),
      currency: v.optional(currencySchema),
      count: v.optional(ceilingCount),
      period: v.optional(v.picklist(["lifetime", "daily", "weekly", "monthly"]), "lifetime"),
    }),
  ),
  expires_at: v.pipe(v.string(), v.isoTimestamp()),
  step_up_of: v.optional(v.string()),
  proof: v.strictObject({ capture_id: v.pipe(v.string(), v.uuid()) }),
});

export type IssueInput = v.InferOutput<typeof issueSchema>;

interface IssueRequest extends Omit<IssueInput, "ceiling" | "step_up_of"> {
  scopes: Scope[];
  ceiling: MandateCeiling;
  step_up_of?: string;
}

/** What the rules of an issue can answer before anything is written (issueRules), as the document lists them. */
export const issueRuleCodes = [
  "WILDCARD_SCOPE_FORBIDDEN",
  "UNKNOWN_SCOPE",
  "CONSTRAINTS_REQUIRED_FOR_SCOPE",
  "AMOUNT_INVALID",
  "AMOUNT_CEILING_NOT_APPLICABLE",
  "INVALID_CEILING",
  "AGENT_DISPLAY_NAME_EMPTY",
  "AGENT_DISPLAY_NAME_TOO_LONG",
  "AGENT_DESCRIPTOR_EMPTY",
  "AGENT_DESCRIPTOR_TOO_LONG",
  "EXPIRES_AT_NOT_IN_FUTURE",
  "EXPIRES_AT_TOO_FAR",
  "STEP_UP_OF_INVALID",
] as const satisfies readonly ErrorCode[];

/**
 * What the issue itself can refuse: the proof (`PROOF_INVALID` with its reason: `not_the_grantor`,
 * `proof_expired`, `coercion_detected`, `liveness_failed`, `not_a_grant`, `proof_used`,
 * `terms_mismatch`), a document for money scopes, the step-up's parent.
 */
export const issueActCodes = ["PROOF_INVALID", "DOCUMENT_REQUIRED", "STEP_UP_OF_INVALID"] as const satisfies readonly ErrorCode[];

/** Rule 1: a capture older than this is no proof. */
const PROOF_MAX_AGE_SECONDS = 300;
/**
 * No mandate is open-ended: expires_at is at most this long after issue. Checked here, at issue, and
 * nowhere else: a table constraint would bind every later update of a row as well, so a mandate
 * issued before this rule could no longer be revoked.
 */
export const MANDATE_MAX_LIFETIME_DAYS = 365;

/**
 * mandate-issue (spec 4.7): records what a verified person authorises an agent to do, against a
 * capture of that person at most five minutes old. The assurance level is the capture's; the
 * mandate is immutable afterwards. Answers the mandate with its scopes' labels in the caller's locale.
 */
export async function issueMandate(deps: Deps, tenant: Tenant, body: IssueInput) {
  const mandate = await rpc(deps.sql, "mandate_issue", await issueParams(deps, tenant, body));
  return { ...mandate, scope_labels: mandate.scopes.map((scope) => ({ scope, label: scopeLabel(scope as Scope, deps.locale) })) };
}

/**
 * `POST /v1/mandates`: the same issue, answered in the resource API's shape (docs/resource-api.md),
 * the answer stored under the request's Idempotency-Key in the issue's own transaction.
 */
export async function issueMandateStored(deps: Deps, tenant: Tenant, body: IssueInput, storedResponse: PendingResponse | undefined) {
  const mandate = await rpc(deps.sql, "mandate_issue_stored", {
    ...(await issueParams(deps, tenant, body)),
    ...(storedResponse && { stored_response: { record: storedResponse.record } }),
  });
  if (storedResponse) storedResponse.stored = true;
  return mandate;
}

/**
 * The issue RPC's parameters once the rules that need no database hold, with the digest of the
 * terms that the proof must have shown (a grant capture of exactly these terms, docs/decisions.md).
 */
async function issueParams(deps: Deps, tenant: Tenant, body: IssueInput) {
  const input = issueRules(body, deps.now);
  return {
    id: crypto.randomUUID(),
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    now: deps.now.toISOString(),
    granted_by_ref: input.granted_by,
    granted_to: input.granted_to,
    granted_to_kind: input.granted_to_kind,
    agent_display_name: input.agent_display_name,
    agent_descriptor: input.agent_descriptor,
    scopes: input.scopes,
    money_scopes: moneyScopes,
    constraints: input.constraints ?? {},
    ceiling: input.ceiling,
    expires_at: new Date(input.expires_at).toISOString(),
    step_up_of: input.step_up_of,
    capture_id: input.proof.capture_id,
    terms_digest: await grantTermsDigest(input),
    proof_max_age_seconds: PROOF_MAX_AGE_SECONDS,
  };
}

/** A mandate's terms as a grant capture shows them: mandate-issue's request without the granter and the proof. */
export type GrantTerms = Omit<IssueRequest, "granted_by" | "proof">;

/** The terms a grant capture is made for, in mandate-issue's names, as the sink takes them (`grant`). */
export const grantTermsSchema = v.omit(issueSchema, ["granted_by", "proof"]);

/**
 * The terms of `terms` as rules-checked terms (issueRules: scopes deduplicated, the ceiling with
 * every field, the step-up's parent as a uuid), or the rules' refusal. The granter is the capture's
 * person, so it is not part of the terms.
 */
export function grantTermsOf(terms: v.InferOutput<typeof grantTermsSchema>, now: Date): GrantTerms {
  const { granted_by: _, proof: __, ...checked } = issueRules({ ...terms, granted_by: "-", proof: { capture_id: "-" } }, now);
  return checked;
}

/**
 * SHA-256 (hex) of the terms a person was shown when they granted, in one canonical form (canonical
 * JSON: keys sorted; scopes and allowlists sorted, the instant in ISO 8601 UTC, absent as null): a grant capture
 * records it, and mandate-issue proves only a mandate whose terms have the same digest. The same
 * terms give the same digest whichever surface carried them (the sink's `grant`, a `/v1` session's
 * `mandate`, mandate-issue, `POST /v1/mandates`), because each goes through issueRules first.
 */
export async function grantTermsDigest(terms: GrantTerms): Promise<string> {
  const sorted = (list: string[] | undefined) => (list && list.length > 0 ? [...list].sort() : null);
  const canonical = {
    granted_to: terms.granted_to,
    granted_to_kind: terms.granted_to_kind,
    agent_display_name: terms.agent_display_name ?? null,
    agent_descriptor: terms.agent_descriptor ?? null,
    scopes: [...terms.scopes].sort(),
    constraints: {
      merchant_allowlist: sorted(terms.constraints?.merchant_allowlist),
      category_allowlist: sorted(terms.constraints?.category_allowlist),
      country_allowlist: sorted(terms.constraints?.country_allowlist),
    },
    ceiling: {
      kind: terms.ceiling.kind,
      amount: terms.ceiling.amount,
      currency: terms.ceiling.currency,
      count: terms.ceiling.count,
      period: terms.ceiling.period,
    },
    expires_at: new Date(terms.expires_at).toISOString(),
    step_up_of: terms.step_up_of ?? null,
  };
  return sha256Hex(canonicalJson(canonical));
}

/**
 * The numbered rules of spec 4.7 that need no database, in the order a caller fixes them: shape,
 * scopes (exact, closed, no wildcard), constraints for `task`, the ceiling's shape and money rules,
 * the agent fields (absent stays absent; blank or too long is refused), and an expiry in the future
 * but at most 365 days away.
 * A client-sent period anchor in the ceiling is ignored.
 */
export function issueRules(input: IssueInput, now: Date): IssueRequest {
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
  const expiresAt = Date.parse(input.expires_at);
  if (expiresAt <= now.getTime()) throw new ApiError("EXPIRES_AT_NOT_IN_FUTURE");
  if (expiresAt > now.getTime() + MANDATE_MAX_LIFETIME_DAYS * 86_400_000) {
    throw new ApiError("EXPIRES_AT_TOO_FAR", { max_days: MANDATE_MAX_LIFETIME_DAYS });
  }
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
