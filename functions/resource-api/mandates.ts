/**
 * /v1/mandates (resource API 2.3, 4.6 to 4.8): list, create, read, revoke and check, each an
 * adapter over the mandate operations the functions call. `check` here is authoritative: it is
 * mandate-consume's decision, and moves the ceiling.
 */
import { Hono } from "hono";
import * as v from "valibot";
import { currencySchema } from "../../shared/lib/money";
import { consumeMandate, contextSchema, type DecisionBody } from "../../shared/mandates/decision";
import { ceilingCount, type IssueInput, issueMandate, issueSchema } from "../../shared/mandates/issue";
import { mandatePageSchema, pageMandates, readMandate } from "../../shared/mandates/page";
import { revokeMandate } from "../../shared/mandates/revoke";
import { type AppEnv, depsOf } from "../../shared/platform/app";
import { idempotency, idempotencyKeyOf } from "../../shared/platform/idempotency";
import { input } from "../../shared/platform/input";
import { minorUnitAmount, money } from "../../shared/platform/validation";
import { secretKey } from "./auth";
import { idempotencyScope } from "./idempotency";

const periods = { day: "daily", week: "weekly", month: "monthly", lifetime: "lifetime" } as const;

const issued = issueSchema.entries;

/** `POST /v1/mandates`: mandate-issue's fields, in this surface's names where they differ (docs/resource-api.md). */
export const createMandateSchema = v.strictObject({
  granted_by: issued.granted_by,
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
  proof: issued.proof,
});

/** `POST /v1/mandates/{id}/check`: the act (`operation` is the scope it falls under). */
export const checkMandateSchema = v.pipe(
  v.strictObject({
    operation: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
    amount: v.optional(minorUnitAmount),
    currency: v.optional(currencySchema),
    action_ref: v.optional(v.pipe(v.string(), v.maxLength(200))),
    context: contextSchema,
  }),
  v.forward(
    v.partialCheck([["amount"], ["currency"]], (body) => body.amount === undefined || body.currency !== undefined, "currency is required"),
    ["currency"],
  ),
);

export const revokeMandateSchema = v.strictObject({ reason: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(500))) });

/** The issue input of a create body: the ceiling's kind follows from the fields it carries. */
function issueInputOf(body: v.InferOutput<typeof createMandateSchema>): IssueInput {
  const { scope, until, ceiling, ...rest } = body;
  const hasAmount = ceiling?.amount !== undefined || ceiling?.currency !== undefined;
  const hasCount = ceiling?.count !== undefined;
  return {
    ...rest,
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

export const mandates = new Hono<AppEnv>();

mandates.get("/", secretKey("reads"), input("query", mandatePageSchema), async (c) => {
  c.header("cache-control", "no-store");
  return c.json(await pageMandates(depsOf(c.var), c.var.principal, c.var.input));
});

mandates.post("/", secretKey("writes"), idempotency(idempotencyScope), input("json", createMandateSchema), async (c) => {
  const deps = depsOf(c.var);
  const issued = await issueMandate(deps, c.var.principal, issueInputOf(c.var.input));
  return c.json(await readMandate(deps, c.var.principal, issued.mandate_id), 201);
});

mandates.get("/:id", secretKey("reads"), async (c) => {
  c.header("cache-control", "no-store");
  return c.json(await readMandate(depsOf(c.var), c.var.principal, c.req.param("id")));
});

mandates.post("/:id/revoke", secretKey("writes"), input("json", revokeMandateSchema), async (c) => {
  const deps = depsOf(c.var);
  const id = c.req.param("id");
  await revokeMandate(deps, c.var.principal, { mandate_id: id, reason: c.var.input.reason });
  return c.json(await readMandate(deps, c.var.principal, id));
});

mandates.post("/:id/check", secretKey("check"), idempotency(idempotencyScope), input("json", checkMandateSchema), async (c) => {
  const { operation, ...act } = c.var.input;
  const decision: DecisionBody = { mandate_id: c.req.param("id"), scope: operation, ...act };
  // The ledger debits once per key: the caller's, or one of this request's own when it sent none.
  const key = idempotencyKeyOf(c.req.raw.headers) ?? `v1-check-${crypto.randomUUID()}`;
  const answer = await consumeMandate(depsOf(c.var), c.var, decision, { key, rawBody: JSON.stringify(decision) });
  c.header("content-language", c.var.locale);
  return c.json(answer);
});
