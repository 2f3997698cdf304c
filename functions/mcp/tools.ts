/**
 * The MCP tools (issue 13): one per function of the spec's agent surface, each calling the same
 * domain operation as that function with the agent as the caller. A tool's input is the function's
 * body (or query), validated by the function's own schema, so errors keep its codes.
 */
import type { JWK } from "jose";
import * as v from "valibot";
import { requestVerification, resultSchema, toolRequestSchema, verificationResult } from "../../shared/agents/verifications";
import type { Deps } from "../../shared/kernel/deps";
import { ApiError } from "../../shared/kernel/errors";
import { jsonSchemaOf } from "../../shared/kernel/json-schema";
import type { AgentPrincipal } from "../../shared/kernel/principal";
import { idempotencyKey, parseInput } from "../../shared/kernel/validation";
import {
  checkMandate,
  consumeArgumentsAdvertised,
  consumeArgumentsSchema,
  consumeMandate,
  decisionSchema,
} from "../../shared/mandates/decision";
import { issueMandate, issueSchema } from "../../shared/mandates/issue";
import { getMandate, listMandates, mandateQuerySchema } from "../../shared/mandates/read";
import { revokeMandate, revokeSchema } from "../../shared/mandates/revoke";
import { scopeCatalogue } from "../../shared/mandates/scopes";
import { receiptLookupSchema, verifyStoredReceipt } from "../../shared/receipts/verify";

/** OAuth scopes an owner grants an agent: reading and deciding, or also acting on mandates. */
export const agentScopes = ["mandates:read", "mandates:write"] as const;
export type AgentScope = (typeof agentScopes)[number];

/** What a tool runs with besides its input: the key material some operations use, the service's base URL and the agent's registered name. */
export interface ToolContext {
  deps: Deps;
  agent: AgentPrincipal;
  jwks: { keys: JWK[] };
  serviceBaseUrl: string;
  /** The client name the agent registered with (read only by the tools that show it to a person). */
  agentName: () => Promise<string | null>;
}

/** What a tool needs: reading for every tool (any access needs it), writing on top for the tools that act. */
const READ: readonly AgentScope[] = ["mandates:read"];
const WRITE: readonly AgentScope[] = ["mandates:read", "mandates:write"];

export interface AgentTool<S extends v.GenericSchema = v.GenericSchema> {
  name: string;
  description: string;
  /** Every scope the agent's token must carry (server.ts answers `403 insufficient_scope` naming them). */
  scopes: readonly AgentScope[];
  schema: S;
  /** What the tool's JSON Schema states when it is stricter than `schema`, whose own refusals answer at run time. */
  advertised?: v.GenericSchema;
  run(context: ToolContext, input: v.InferOutput<S>): Promise<unknown>;
}

function tool<S extends v.GenericSchema>(definition: AgentTool<S>): AgentTool {
  return definition as unknown as AgentTool;
}

/**
 * A mandate the agent holds itself is not its to revoke (spec 4.11), and another agent's mandate
 * is not its to spend: both answer as an unknown mandate does. The holder never changes (a mandate
 * is immutable), so reading it first decides the same as a check inside the act would.
 */
async function mandateOfMerchant(context: ToolContext, mandateId: string) {
  return getMandate(context.deps, context.agent, mandateId);
}

export const agentTools: readonly AgentTool[] = [
  tool({
    name: "mandate-scopes",
    description: "The closed scope vocabulary of mandates, labelled in the caller's locale (GET mandate-scopes).",
    scopes: READ,
    schema: v.strictObject({}),
    run: async ({ deps }) => scopeCatalogue(deps.locale),
  }),
  tool({
    name: "mandate-issue",
    description:
      "Records what a person authorised an agent to do (POST mandate-issue): needs proof.capture_id, a live grant capture of that person made for exactly these terms, unused, no older than five minutes.",
    scopes: WRITE,
    schema: issueSchema,
    run: ({ deps, agent }, input) => issueMandate(deps, agent, input),
  }),
  tool({
    name: "mandate-check",
    description: "Advisory decision on an act under a mandate (POST mandate-check): nothing is reserved or debited.",
    scopes: READ,
    schema: decisionSchema,
    run: ({ deps, agent }, input) => checkMandate(deps, { tenant: agent }, input),
  }),
  tool({
    name: "mandate-consume",
    description:
      "The authoritative decision (POST mandate-consume): debits the ceiling once per idempotency_key. Only a mandate granted to this agent.",
    scopes: WRITE,
    schema: consumeArgumentsSchema,
    advertised: consumeArgumentsAdvertised,
    run: async (context, { idempotency_key, ...body }) => {
      const mandate = await mandateOfMerchant(context, body.mandate_id).catch(() => null);
      if (mandate && mandate.granted_to !== context.agent.clientId) throw new ApiError("not_found");
      const key = idempotencyKey(idempotency_key);
      return consumeMandate(context.deps, { tenant: context.agent }, body, { key, rawBody: JSON.stringify(body) });
    },
  }),
  tool({
    name: "mandate-get",
    description: "One mandate by id with its last 100 consumptions, or the merchant's mandates in one status (GET mandate-get).",
    scopes: READ,
    schema: mandateQuerySchema,
    run: ({ deps, agent }, query) => ("status" in query ? listMandates(deps, agent, query) : getMandate(deps, agent, query.id)),
  }),
  tool({
    name: "mandate-revoke",
    description: "Ends a mandate at once (POST mandate-revoke), as the issuing merchant. Never one granted to this agent (spec 4.11).",
    scopes: WRITE,
    schema: revokeSchema,
    run: async (context, input) => {
      const mandate = await mandateOfMerchant(context, input.mandate_id);
      if (mandate.granted_to === context.agent.clientId) throw new ApiError("not_found");
      return revokeMandate(context.deps, context.agent, input);
    },
  }),
  tool({
    name: "receipt-verify",
    description: "Public verification of a receipt by id or code (receipt-verify): signature, seal and anchoring.",
    scopes: READ,
    schema: receiptLookupSchema,
    run: ({ deps, jwks }, input) => verifyStoredReceipt(deps, jwks, input),
  }),
  tool({
    name: "agent-verification-request",
    description:
      "Asks a person to prove presence (POST agent-verification-request): answers a verification card whose url, opened once, shows the person this agent's name and the purpose, and takes one capture. merchant_id defaults to the agent's merchant. The card grants no authority.",
    scopes: READ,
    schema: toolRequestSchema,
    run: async (context, input) =>
      requestVerification(context.deps, context.agent, input, {
        serviceBaseUrl: context.serviceBaseUrl,
        agentName: await context.agentName(),
      }),
  }),
  tool({
    name: "agent-verification-result",
    description:
      "A verification card's state (GET agent-verification-result): pending, opened, verified (with assurance_level and receipt_code), refused (with the capture's reason) or expired. Poll it; there is no webhook.",
    scopes: READ,
    schema: resultSchema,
    run: ({ deps, agent }, input) => verificationResult(deps, agent, input.verification_id),
  }),
];

/**
 * Reads a tool's arguments as the function reads its body (parseInput: nesting, text that cannot be
 * stored, money as written where `writtenAt` knows the request's text, then the function's schema),
 * so errors are the function's.
 */
export function toolInput(definition: AgentTool, args: unknown, writtenAt?: (path: readonly string[]) => string | undefined) {
  return parseInput(definition.schema, args ?? {}, writtenAt);
}

/**
 * A tool's input as JSON Schema, converted from the function's valibot schema by
 * `@valibot/to-json-schema`. Checks that JSON Schema cannot say (the coded ones, the currency that
 * an amount needs) are left to the schema itself when the tool runs; money fields, which valibot
 * checks with a function, are integers from 0. MCP wants an object at the top: a choice of shapes
 * (mandate-get's `id` or `status`) is an object that is one of them.
 */
export function toolJsonSchema(definition: AgentTool): Record<string, unknown> {
  const schema = jsonSchemaOf(definition.advertised ?? definition.schema);
  return schema.type === "object" ? schema : { type: "object", ...schema };
}
