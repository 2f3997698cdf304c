/**
 * /v1/mandates (resource API 2.3, 4.6 to 4.8): list, create, read, revoke and check, each an
 * adapter over the mandate operations the functions call. `check` here is authoritative: it is
 * mandate-consume's decision, and moves the ceiling.
 */
import { Hono } from "hono";
import * as v from "valibot";
import { afterAnswer } from "../../shared/edge/after-answer";
import { type AppEnv, depsOf } from "../../shared/edge/app";
import { idempotency, idempotencyKeyOf } from "../../shared/edge/idempotency";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { minorUnitAmount } from "../../shared/kernel/validation";
import { currencySchema } from "../../shared/lib/money";
import { decisionAnswerSchema, mandateObjectSchema, mandatePageAnswerSchema } from "../../shared/mandates/answers";
import { consumeMandate, contextSchema, type DecisionBody } from "../../shared/mandates/decision";
import { mandateUuid } from "../../shared/mandates/ids";
import { issueActCodes, issueMandateStored, issueRuleCodes, issueSchema } from "../../shared/mandates/issue";
import { mandatePageSchema, pageMandates, readMandate } from "../../shared/mandates/page";
import { revokeMandate } from "../../shared/mandates/revoke";
import { issueInputOf, mandateTermsSchema } from "../../shared/mandates/terms";
import { deliverSoon } from "../../shared/webhooks/run";
import { keyPolicy, secretKey, supportReads } from "./auth";
import { idempotencyScope } from "./idempotency";

const issued = issueSchema.entries;

/** `POST /v1/mandates`: the terms with the granter and the proof (docs/resource-api.md). */
export const createMandateSchema = v.strictObject({
  granted_by: issued.granted_by,
  ...mandateTermsSchema.entries,
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
  v.examples([{ operation: "purchase", amount: 2599, currency: "EUR", action_ref: "order-77", context: { merchant: "books.example" } }]),
);

export const revokeMandateSchema = v.strictObject({ reason: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(500))) });

export const mandates = new Hono<AppEnv>();

mandates.get(
  "/",
  documented({
    summary: "List mandates, newest first",
    description:
      "Filter by granted_by, granted_to and status; limit 1 to 100 (25). Pass next_cursor as cursor for the next page; it is null on the last.",
    success: { status: 200, description: "A page of mandates", schema: mandatePageAnswerSchema },
  }),
  noStore,
  keyPolicy("reads", supportReads),
  input("query", mandatePageSchema),
  async (c) => {
    return c.json(await pageMandates(depsOf(c.var), c.var.principal, c.var.input));
  },
);

mandates.post(
  "/",
  documented({
    summary: "Create a mandate",
    success: { status: 201, description: "The mandate", schema: mandateObjectSchema },
    answers: [...issueRuleCodes, ...issueActCodes],
  }),
  secretKey("writes"),
  idempotency(idempotencyScope),
  input("json", createMandateSchema),
  async (c) => {
    const { granted_by, proof, ...terms } = c.var.input;
    const issue = issueInputOf(terms, granted_by, proof);
    return c.json(await issueMandateStored(depsOf(c.var), c.var.principal, issue, c.var.storedResponse), 201);
  },
);

mandates.get(
  "/:id",
  documented({
    summary: "Read a mandate",
    success: { status: 200, description: "The mandate", schema: mandateObjectSchema },
    answers: ["not_found"],
  }),
  noStore,
  keyPolicy("reads", supportReads),
  async (c) => {
    return c.json(await readMandate(depsOf(c.var), c.var.principal, c.req.param("id")));
  },
);

mandates.post(
  "/:id/revoke",
  documented({
    summary: "Revoke a mandate",
    success: { status: 200, description: "The mandate, revoked", schema: mandateObjectSchema },
    answers: ["not_found"],
  }),
  secretKey("writes"),
  input("json", revokeMandateSchema),
  async (c) => {
    const deps = depsOf(c.var);
    const id = c.req.param("id");
    await revokeMandate(deps, c.var.principal, { mandate_id: id, reason: c.var.input.reason });
    afterAnswer(c, "webhooks", deliverSoon(c.var.principal));
    return c.json(await readMandate(deps, c.var.principal, id));
  },
);

mandates.post(
  "/:id/check",
  documented({
    summary: "Check an act against a mandate, consuming it when allowed",
    description: "A refusal is 200 with allowed false and a reason.",
    success: { status: 200, description: "The decision", schema: decisionAnswerSchema },
  }),
  secretKey("check"),
  idempotency(idempotencyScope),
  input("json", checkMandateSchema),
  async (c) => {
    const { operation, ...act } = c.var.input;
    const decision: DecisionBody = { mandate_id: c.req.param("id"), scope: operation, ...act };
    // The ledger debits once per key: the caller's, or one of this request's own when it sent none.
    const key = idempotencyKeyOf(c.req.raw.headers) ?? `v1-check-${crypto.randomUUID()}`;
    const answer = await consumeMandate(depsOf(c.var), c.var, decision, { key, rawBody: JSON.stringify(decision) });
    // A check that consumed is replayed by the mandate's ledger (the one rule of every surface), never from the store.
    const consumed = mandateUuid(decision.mandate_id);
    if (c.var.storedResponse && typeof answer.consumption_id === "string" && consumed) c.var.storedResponse.mandateId = consumed;
    c.header("content-language", c.var.locale);
    return c.json(answer);
  },
);
