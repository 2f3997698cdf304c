/**
 * Every function of the registry as the generated-input test calls it (tests/platform/fuzz.test.ts):
 * its routes, the credentials and headers each reads, and a valid-ish input built from the route's
 * valibot schema (./schema-arbitrary.ts), with the fixture values it needs to get deep given as
 * markers (`$@MANDATE`), which the sender resolves (./fuzz-run.ts).
 */
import fc from "fast-check";
import { aliasRequestSchema } from "../../functions/alias-availability/schema";
import { agentTools } from "../../functions/mcp/tools";
import { checkMandateSchema, createMandateSchema, revokeMandateSchema } from "../../functions/resource-api/mandates";
import { requestSchema, resultSchema, toolRequestSchema } from "../../shared/agents/verifications";
import { discloseSchema, fetchSchema } from "../../shared/consent/disclose";
import { revokeConsentSchema } from "../../shared/consent/revoke";
import { sessionModes } from "../../shared/contracts/hosted-screen";
import {
  additionOptionsSchema,
  additionStatusSchema,
  approveAdditionSchema,
  lookupAdditionSchema,
  requestAdditionSchema,
} from "../../shared/devices/additions";
import { deviceChallengeSchema } from "../../shared/devices/challenges";
import { renameDeviceSchema, revokeDeviceSchema } from "../../shared/devices/devices";
import type { PresenceDescriptor } from "../../shared/engine";
import { claimHandoffSchema, handoffStatusSchema, registerHandoffSchema, screenHandoffStatusSchema } from "../../shared/handoffs/handoff";
import { attributeNames, attributeSchema } from "../../shared/identity/attributes";
import { claimSchema } from "../../shared/identity/claims";
import { reproofSchema } from "../../shared/identity/device-reproof";
import { documentEvidenceSchema } from "../../shared/identity/documents";
import { enrollmentSchema } from "../../shared/identity/enrollment";
import { identifySchema } from "../../shared/identity/identify";
import { recognitionSchema } from "../../shared/identity/recognitions";
import { decisionSchema } from "../../shared/mandates/decision";
import { grantTermsSchema, issueSchema } from "../../shared/mandates/issue";
import { mandatePageSchema } from "../../shared/mandates/page";
import { mandateQuerySchema } from "../../shared/mandates/read";
import { revokeSchema } from "../../shared/mandates/revoke";
import { scopes } from "../../shared/mandates/scopes";
import { receiptLookupSchema } from "../../shared/receipts/verify";
import { cancelSchema } from "../../shared/sessions/complete";
import { consumeSchema } from "../../shared/sessions/consume";
import { createSessionSchema } from "../../shared/sessions/create";
import { createModeSessionSchema } from "../../shared/sessions/mode-session";
import { getSessionSchema } from "../../shared/sessions/read";
import { passportCases } from "../../shared/simulator/passports";
import { themeRequestSchema } from "../../shared/themes/merchant-theme";
import { transactionSchema } from "../../shared/transactions/input";
import { arbitraryOf, type Overrides } from "./schema-arbitrary";

/** Placeholders for values known only when the request is sent (./fuzz-run.ts resolves them). */
export const MARK = {
  mandate: "$@MANDATE",
  spareMandate: "$@MANDATE_SPARE",
  /** A mandate granted to the cohort's MCP agent: the only kind it may consume. */
  agentMandate: "$@MANDATE_AGENT",
  subject: "$@SUBJECT",
  captureId: "$@CAPTURE_ID",
  merchant: "$@MERCHANT",
  receiptId: "$@RECEIPT_ID",
  receiptCode: "$@RECEIPT_CODE",
  claimToken: "$@CLAIM",
  /** An unused hosted session token while any is left, then a used one. */
  sessionToken: "$@SESSION_TOKEN",
  sessionId: "$@SESSION_ID",
  /** A verification card the cohort's owner minted. */
  card: "$@CARD",
  clientId: "$@CLIENT_ID",
  nonce: "$@NONCE",
  now: "$@NOW",
  face: "$@FACE",
  strangerFace: "$@STRANGER_FACE",
  /** `{"$@PROOF": {descriptor, consent?}}`: that payload, resolved, as a presence proof v1 string. */
  proof: "$@PROOF",
  /** `$@PASSPORT:<case>`: the `document` of a sandbox passport of that case (shared/simulator/passports.ts). */
  passport: "$@PASSPORT:",
  /** `$@IN:<seconds>`: the request's clock plus that many seconds, as ISO 8601. */
  inSeconds: "$@IN:",
} as const;

/** One route of a function. */
export interface RoutePlan {
  /** The path under the function's mount (`""` for its root), or from the origin with `root`; markers allowed. */
  path: string;
  root?: boolean;
  /** The methods it answers; the first is the usual one. */
  methods: string[];
  input: "json" | "query" | "json-or-query" | "form" | "none";
  /** The merchant key it reads from `x-service-api-key` (or, with `bearer: "key"`, from `Authorization`). */
  key: "secret" | "publishable" | "anonymous" | "none";
  /** What it reads from `Authorization: Bearer` as its own credential (`user`: the cohort's owner's session JWT, and no key). */
  bearer?: "key" | "screen" | "agent" | "user";
  /** Also accepts a first-party session JWT, or the service role, in `Authorization`. */
  userJwt?: boolean;
  serviceRole?: boolean;
  replay?: boolean;
  idempotency?: "optional" | "required";
  scenario?: boolean;
  /** Reads `Service-Version` (the resource API). */
  version?: boolean;
  /** A JSON-RPC endpoint: reads `Accept`, answers tool results inside 200s. */
  jsonRpc?: boolean;
  /** The valid-ish input, built from the route's schema. */
  body?: fc.Arbitrary<unknown>;
  /** How often it is drawn against the function's other routes (default 1). */
  weight?: number;
}

export interface FunctionPlan {
  name: string;
  /** How often the function is drawn against the others (default 8). */
  weight?: number;
  routes: RoutePlan[];
}

/** Descriptor skeletons with placeholders for nonce, time and face: a live person's signals, and a photo attack's. */
interface Skeletons {
  live: PresenceDescriptor;
  attack: PresenceDescriptor;
}

/** A descriptor with its nonce, time and face left to the sender. */
export function skeletonOf(descriptor: PresenceDescriptor): PresenceDescriptor {
  return {
    ...descriptor,
    capture_nonce: MARK.nonce,
    captured_at: MARK.now,
    face: { ...descriptor.face, embedding: MARK.face as unknown as number[] },
  };
}

/** `arbitrary` once in `oneIn` draws, else absent. */
export const sometimes = <T>(arbitrary: fc.Arbitrary<T>, oneIn: number) =>
  fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });

const often = <T>(usual: fc.Arbitrary<T>, rare: fc.Arbitrary<T>, weight = 8) =>
  fc.oneof({ weight, arbitrary: usual }, { weight: 1, arbitrary: rare });

const currencies = fc.constantFrom("USD", "USD", "USD", "BRL", "EUR", "JPY", "XXX", "usd");
const smallAmount = fc.oneof(fc.integer({ min: 0, max: 5000 }), fc.constant(0));
const contexts = fc.constantFrom("shop.example", "grocer.example", "books", "BR", "US");

/** A descriptor as the device sends it: mostly the live skeleton (the cohort's face or a stranger's), sometimes an attack, rarely any JSON. */
function descriptorOf(skeletons: Skeletons): fc.Arbitrary<unknown> {
  const face = fc.constantFrom(MARK.face, MARK.face, MARK.strangerFace);
  const descriptor = fc
    .tuple(fc.constantFrom(skeletons.live, skeletons.live, skeletons.live, skeletons.attack), face)
    .map(([skeleton, embedding]) => ({ ...skeleton, face: { ...skeleton.face, embedding } }));
  return often<unknown>(descriptor, fc.jsonValue({ maxDepth: 2 }), 10);
}

/** The capture fields of identify, enrol and the sink: mostly the skeleton with a fresh nonce. */
function captureOverrides(skeletons: Skeletons, schema: unknown): Overrides {
  return {
    capture_nonce: often(fc.constant(MARK.nonce), arbitraryOf((schema as { entries: Record<string, unknown> }).entries?.capture_nonce)),
    face_template: descriptorOf(skeletons),
  };
}

/**
 * The `proof` of the /v1 identity routes: mostly a presence proof v1 of a live person (the cohort's
 * face or a stranger's) with the person's consent, sometimes a photo attack, a proof without consent,
 * a descriptor that is not one, or a string that is no proof at all.
 */
function proofOverride(skeletons: Skeletons): fc.Arbitrary<unknown> {
  const payload = fc
    .tuple(
      descriptorOf(skeletons),
      fc.constantFrom<Record<string, unknown> | undefined>(
        { version: "2026-11", retention_days: 365 },
        { version: "2026-11", retention_days: 365 },
        undefined,
        {},
      ),
    )
    .map(([descriptor, consent]) => ({ [MARK.proof]: consent === undefined ? { descriptor } : { descriptor, consent } }));
  return often<unknown>(payload, fc.oneof(fc.string({ maxLength: 40 }), fc.constant("pp1.e30")), 10);
}

/** A keyed JSON POST of the resource API. */
const v1Post = (path: string, plan: Partial<RoutePlan>): RoutePlan => ({
  path,
  methods: ["POST"],
  input: "json",
  key: "secret",
  bearer: "key",
  version: true,
  ...plan,
});

/** Document evidence as the sink and the hosted screen take it: mostly a sandbox passport of each case, else junk of its shape. */
const documentEvidence = often(
  fc.constantFrom(...Object.keys(passportCases), "valid", "valid").map((kind) => `${MARK.passport}${kind}`),
  arbitraryOf(documentEvidenceSchema),
  4,
);

/** Every function of the registry and how to call it. */
export function functionPlans(skeletons: Skeletons): FunctionPlan[] {
  const scopeIds: string[] = scopes.map((entry) => entry.scope);
  const scope = fc.constantFrom(...scopeIds, "purchase", "purchase", "purchase");
  const decisionOverrides: Overrides = {
    mandate_id: often(fc.constant(MARK.mandate), fc.string({ maxLength: 40 })),
    scope: often(scope, fc.string({ maxLength: 10 })),
    amount: fc.option(smallAmount, { nil: undefined, freq: 3 }),
    currency: fc.option(currencies, { nil: undefined, freq: 4 }),
    "context.merchant": fc.option(contexts, { nil: undefined }),
    "context.category": fc.option(contexts, { nil: undefined }),
    "context.country": fc.option(contexts, { nil: undefined }),
  };
  const withCurrency = (body: any) => (body.amount !== undefined && body.currency === undefined ? { ...body, currency: "USD" } : body);
  const decision = arbitraryOf(decisionSchema, decisionOverrides).map(withCurrency);

  const transaction = arbitraryOf(transactionSchema, {
    ...captureOverrides(skeletons, transactionSchema),
    user_id: often(fc.constant(MARK.subject), fc.string({ minLength: 1, maxLength: 60 })),
    amount: fc.option(smallAmount, { nil: undefined, freq: 2 }),
    currency: fc.option(currencies, { nil: undefined, freq: 2 }),
    document: sometimes(documentEvidence, 4),
    mandate_id: fc.option(fc.constant(MARK.mandate), { nil: undefined, freq: 2 }),
    // a grant's terms in one request of six: a sink request that always carried one would always be
    // judged by mandate-issue's rules first, and the run would never reach an approval
    grant: sometimes(arbitraryOf(grantTermsSchema), 6),
    scope: fc.option(scope, { nil: undefined, freq: 2 }),
    "context.merchant": fc.option(contexts, { nil: undefined }),
  }).map((body: any) => {
    // a payment names its money, money names its currency; a stand-in carries no face
    const act = body.action === "ACTION_PAYMENT" && body.amount === undefined ? { ...body, amount: 100, currency: "USD" } : { ...body };
    if (act.amount !== undefined && act.currency === undefined) act.currency = "USD";
    if (act.amount === undefined) delete act.currency;
    if (act.mandate_id !== undefined) {
      delete act.face_template;
      delete act.capture_nonce;
    }
    return act;
  });

  const expiresAt = fc
    .oneof(
      { weight: 6, arbitrary: fc.integer({ min: 3600, max: 300 * 86_400 }) },
      { weight: 1, arbitrary: fc.constantFrom(-3600, 0, 365 * 86_400 - 60, 365 * 86_400 + 3600) },
    )
    .map((seconds) => `${MARK.inSeconds}${seconds}`);
  const grantedScopes = often<string[]>(
    fc.oneof(
      fc.constantFrom<string[]>(["purchase"], ["login"], ["read"], ["payment", "purchase"]),
      fc.subarray<string>(scopeIds, { minLength: 1, maxLength: 3 }),
    ),
    fc.array(fc.string({ maxLength: 12 }), { maxLength: 9 }),
  );
  const issueOverrides: Overrides = {
    granted_by: often(fc.constant(MARK.subject), fc.string({ minLength: 1, maxLength: 60 })),
    scopes: grantedScopes,
    // mostly a ceiling whose fields match its kind, so issuing gets past the shape to the rules behind it
    ceiling: fc.option(
      often(
        fc
          .oneof(
            fc.record({ kind: fc.constant("amount"), amount: fc.integer({ min: 1, max: 1_000_000 }), currency: currencies }),
            fc.record({ kind: fc.constant("count"), count: arbitraryOf(issueSchema.entries.ceiling.wrapped.entries.count.wrapped) }),
            fc.record({ kind: fc.constant("none") }),
          )
          .chain((ceiling) =>
            fc.record({ period: fc.constantFrom("lifetime", "daily", "weekly", "monthly") }).map((p) => ({ ...ceiling, ...p })),
          ),
        arbitraryOf(issueSchema.entries.ceiling.wrapped, {
          amount: fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: undefined }),
          currency: fc.option(currencies, { nil: undefined }),
        }),
        3,
      ),
      { nil: undefined, freq: 4 },
    ),
    expires_at: often(expiresAt, arbitraryOf(issueSchema.entries.expires_at)),
    step_up_of: sometimes(fc.constantFrom(MARK.mandate, MARK.spareMandate, "mdt_0"), 4),
    "proof.capture_id": often(fc.constant(MARK.captureId), fc.uuid()),
  };
  const issue = arbitraryOf(issueSchema, issueOverrides);

  const sessionToken = often(fc.constant(MARK.sessionToken), fc.string({ minLength: 1, maxLength: 80 }), 6);
  // mostly fields the catalogue answers (so most disclosures get deep), sometimes anything
  const catalogueField = fc.constantFrom(
    { key: "subject_ref", disclosure_type: "value" },
    { key: "assurance_level", disclosure_type: "value" },
    { key: "enrolled_on", disclosure_type: "value" },
    { key: "issuing_country", disclosure_type: "value", requires_kyc: true },
    { key: "age_over_18", disclosure_type: "zk_proof", circuit_id: "age_over" },
    { key: "age_over_21", disclosure_type: "zk_proof", public_input: { threshold: 21 } },
    { key: "document_valid", disclosure_type: "zk_proof" },
    { key: "issuing_country_in", disclosure_type: "zk_proof", public_input: { countries: ["BR", "PT"] } },
    { key: "identity_document", disclosure_type: "document" },
  );
  const anyField = fc.record(
    {
      key: fc.constantFrom("subject_ref", "age_over_18", "age_over_200", "issuing_country_in", "identity_document", "favourite_colour"),
      disclosure_type: fc.constantFrom("value", "zk_proof", "document"),
      requires_kyc: fc.boolean(),
      circuit_id: fc.constantFrom("age_over", "document_valid", "x"),
      public_input: fc.constantFrom({ threshold: 18 }, { countries: ["BR"] }, {}),
    },
    { requiredKeys: ["key", "disclosure_type"] },
  );
  const disclosure = arbitraryOf(discloseSchema, {
    merchant_id: often(fc.constant(MARK.merchant), fc.constantFrom("00000000-0000-4000-8000-000000000000", "")),
    "biometric_attestation.capture_id": often(fc.constant(MARK.captureId), fc.uuid()),
    requestedFields: fc.uniqueArray(often(catalogueField, anyField as fc.Arbitrary<{ key: string }>, 6), {
      minLength: 1,
      maxLength: 4,
      selector: (field) => field.key,
    }),
  });
  const enrolment = arbitraryOf(enrollmentSchema, captureOverrides(skeletons, enrollmentSchema.pipe[1]));
  // The hosted screen's completion: an enrolment's body with the consent it offers, or a capture.
  const completion = fc.oneof(
    enrolment.map((body: any) => ({ ...body, consent: { version: "hosted-capture-1", retention_days: 365, accepted: true } })),
    fc.record({
      capture_nonce: fc.constant(MARK.nonce),
      face_template: captureOverrides(skeletons, identifySchema).face_template,
      document: sometimes(documentEvidence, 5),
    }),
    enrolment,
  );

  const cardOverrides = {
    merchant_id: sometimes(often(fc.constant(MARK.merchant), fc.constantFrom("00000000-0000-4000-8000-000000000000", "acme"), 4), 4),
    purpose: sometimes(fc.string({ maxLength: 150 }), 2),
    external_ref: sometimes(fc.string({ maxLength: 210 }), 3),
  };
  const cardId = often(fc.constant(MARK.card), fc.string({ maxLength: 70 }), 4);
  const agentMandate = often(fc.constant(MARK.agentMandate), fc.constantFrom(MARK.mandate, MARK.spareMandate, "mdt_0"), 3);
  const toolArguments: Record<string, fc.Arbitrary<unknown>> = {
    "mandate-scopes": fc.constant({}),
    "mandate-issue": arbitraryOf(issueSchema, {
      ...issueOverrides,
      granted_to: often(fc.constant(MARK.clientId), fc.string({ maxLength: 20 }), 2),
    }),
    "mandate-check": arbitraryOf(decisionSchema, { ...decisionOverrides, mandate_id: agentMandate }).map(withCurrency),
    "mandate-consume": arbitraryOf(agentTools.find((t) => t.name === "mandate-consume")!.schema, {
      ...decisionOverrides,
      mandate_id: agentMandate,
      idempotency_key: fc.option(
        fc.uuid().map((id) => `fz-${id}`),
        { nil: undefined, freq: 6 },
      ),
    }).map(withCurrency),
    "mandate-get": arbitraryOf(mandateQuerySchema, { id: agentMandate }),
    "mandate-revoke": arbitraryOf(revokeSchema, { mandate_id: fc.constantFrom(MARK.spareMandate, MARK.agentMandate, "mdt_0") }),
    "agent-verification-request": arbitraryOf(toolRequestSchema, cardOverrides),
    "agent-verification-result": arbitraryOf(resultSchema, { verification_id: cardId }),
    "receipt-verify": fc.oneof(
      fc.constant({ id: MARK.receiptId }),
      fc.constant({ code: MARK.receiptCode }),
      arbitraryOf(receiptLookupSchema),
    ),
  };
  let rpcId = 0;
  const toolCall = fc
    .constantFrom(...agentTools.map((t) => t.name), "no-such-tool")
    .chain((name) => (toolArguments[name] ?? fc.jsonValue({ maxDepth: 2 })).map((args) => ({ name, arguments: args })));
  const jsonRpc = fc.oneof(
    { weight: 8, arbitrary: toolCall.map((params) => ({ jsonrpc: "2.0", id: ++rpcId, method: "tools/call", params })) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
        { jsonrpc: "2.0", id: 2, method: "ping" },
        {
          jsonrpc: "2.0",
          id: 3,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } },
        },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 4, method: "resources/list" },
        { jsonrpc: "1.0", id: 5, method: "tools/list" },
        [{ jsonrpc: "2.0", id: 6, method: "ping" }],
      ),
    },
  );

  /** The caller's strings, returned unchanged: sometimes a few. */
  const metadata = sometimes(fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.string({ maxLength: 30 }), { maxKeys: 4 }), 3);
  const resourceCreate = arbitraryOf(createMandateSchema, {
    granted_by: issueOverrides.granted_by,
    scope: grantedScopes,
    until: often(expiresAt, arbitraryOf(issueSchema.entries.expires_at)),
    step_up_of: issueOverrides.step_up_of,
    "proof.capture_id": issueOverrides["proof.capture_id"],
    "ceiling.amount": fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: undefined }),
    "ceiling.currency": fc.option(currencies, { nil: undefined }),
  });

  const returnUrls = often(
    fc.constantFrom("https://shop.example/return", "https://shop.example/r?order=1#top"),
    fc.string({ maxLength: 30 }),
  );
  const resourceSession = arbitraryOf(createModeSessionSchema, {
    mode: often(fc.constantFrom(...sessionModes), fc.string({ maxLength: 10 })),
    return_url: returnUrls,
    cancel_url: fc.option(returnUrls, { nil: undefined, freq: 2 }),
    facetoken: fc.option(often(fc.constant(MARK.subject), fc.string({ maxLength: 20 })), { nil: undefined, freq: 2 }),
    "mandate.scope": grantedScopes,
    "mandate.until": often(expiresAt, arbitraryOf(issueSchema.entries.expires_at)),
    "mandate.ceiling.amount": fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: undefined }),
    "mandate.ceiling.currency": fc.option(currencies, { nil: undefined }),
  });

  return [
    { name: "mandate-scopes", weight: 2, routes: [{ path: "", methods: ["GET"], input: "none", key: "none" }] },
    {
      name: "openapi",
      weight: 1,
      routes: ["", "/reference", "/reference/style.css"].map((path): RoutePlan => ({ path, methods: ["GET"], input: "none", key: "none" })),
    },
    {
      name: "merchant-theme-get",
      routes: [
        {
          path: "",
          methods: ["GET", "POST"],
          input: "json-or-query",
          key: "publishable",
          weight: 8,
          body: arbitraryOf(themeRequestSchema, { merchant_id: often(fc.constant(MARK.merchant), fc.uuid(), 4) }),
        },
        ...["logo-wide.svg", "logo-square.svg", "logo-icon.svg", "fonts/system-sans.css", "nothing.svg", "../x"].map(
          (file): RoutePlan => ({ path: `/assets/${file}`, methods: ["GET"], input: "none", key: "none" }),
        ),
      ],
    },
    {
      name: "alias-availability",
      routes: [
        {
          path: "",
          methods: ["POST"],
          input: "json",
          key: "anonymous",
          body: arbitraryOf(aliasRequestSchema, {
            alias: often(fc.stringMatching(/^@?[a-z][a-z0-9_]{2,29}$/), fc.string({ maxLength: 140 }), 4),
            claim_token: often(fc.constant(MARK.claimToken), fc.string({ minLength: 1, maxLength: 60 }), 3),
          }),
        },
      ],
    },
    {
      name: "face-identify",
      routes: [
        {
          path: "",
          methods: ["POST"],
          input: "json",
          key: "publishable",
          replay: true,
          scenario: true,
          body: arbitraryOf(identifySchema, captureOverrides(skeletons, identifySchema)),
        },
      ],
    },
    {
      name: "device-challenge",
      routes: [
        { path: "", methods: ["POST"], input: "json", key: "publishable", replay: true, body: arbitraryOf(deviceChallengeSchema, {}) },
      ],
    },
    {
      name: "device-add",
      routes: [
        { path: "/options", methods: ["POST"], input: "json", key: "publishable", body: arbitraryOf(additionOptionsSchema, {}) },
        {
          path: "/request",
          methods: ["POST"],
          input: "json",
          key: "publishable",
          replay: true,
          body: arbitraryOf(requestAdditionSchema, {}),
        },
        { path: "/status", methods: ["GET"], input: "query", key: "publishable", body: arbitraryOf(additionStatusSchema, {}) },
        { path: "/approve", methods: ["GET"], input: "none", key: "none" },
        { path: "/approve.js", methods: ["GET"], input: "none", key: "none" },
        { path: "/lookup", methods: ["POST"], input: "json", key: "none", body: arbitraryOf(lookupAdditionSchema, {}) },
        { path: "/approve", methods: ["POST"], input: "json", key: "none", body: arbitraryOf(approveAdditionSchema, {}) },
        { path: "/passport", methods: ["POST"], input: "json", key: "publishable", replay: true, body: arbitraryOf(reproofSchema, {}) },
      ],
    },
    {
      name: "device-manage",
      routes: [
        { path: "", methods: ["GET"], input: "none", key: "none", bearer: "user" },
        { path: "/revoke", methods: ["POST"], input: "json", key: "none", bearer: "user", body: arbitraryOf(revokeDeviceSchema, {}) },
        { path: "/rename", methods: ["POST"], input: "json", key: "none", bearer: "user", body: arbitraryOf(renameDeviceSchema, {}) },
      ],
    },
    {
      // The merchant's console without its cookies: the sign-in opens nothing for an unknown merchant,
      // every page is the sign-in page, every action answers its documented refusal.
      name: "console",
      routes: [
        {
          path: "/sign-in",
          methods: ["POST"],
          input: "form",
          key: "none",
          body: fc.record({ merchant_id: fc.uuid(), environment: fc.constantFrom("test", "live") }, { requiredKeys: [] }),
        },
        { path: "/sign-in/finish", methods: ["POST"], input: "form", key: "none", body: fc.record({ session_id: fc.uuid() }) },
        ...[
          "",
          "/keys",
          "/webhooks",
          "/mandates",
          "/sessions",
          "/receipts",
          "/consents",
          "/theme",
          "/owners",
          "/audit",
          "/audit/export",
        ].map((path): RoutePlan => ({ path, methods: ["GET"], input: "none", key: "none" })),
        ...["/sign-out", "/keys", "/webhooks", "/owners/invite", "/theme/draft"].map(
          (path): RoutePlan => ({
            path,
            methods: ["POST"],
            input: "form",
            key: "none",
            body: fc.record({ csrf_token: fc.string({ maxLength: 64 }) }),
          }),
        ),
      ],
    },
    {
      // The person's page without its cookies (a browser's secrets the generator cannot hold): every
      // route answers its documented refusal; a sign-in through an unknown merchant writes nothing.
      name: "me",
      routes: [
        {
          path: "/sign-in",
          methods: ["POST"],
          input: "json",
          key: "none",
          body: fc.record({ merchant_id: fc.uuid(), environment: fc.constantFrom("test", "live") }, { requiredKeys: [] }),
        },
        { path: "/sign-in/finish", methods: ["POST"], input: "json", key: "none", body: fc.record({ session_id: fc.uuid() }) },
        ...["/session", "/mandates", "/merchants", "/consent-ledger", "/disclosures", "/receipts", "/devices"].map(
          (path): RoutePlan => ({ path, methods: ["GET"], input: "none", key: "none" }),
        ),
        ...[
          "/sign-out",
          "/mandates/revoke",
          "/consents/withdraw",
          "/devices/revoke",
          "/devices/rename",
          "/exports",
          "/presence",
          "/erase",
        ].map(
          (path): RoutePlan => ({
            path,
            methods: ["POST"],
            input: "json",
            key: "none",
            body: fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 })),
          }),
        ),
      ],
    },
    {
      name: "process-biovital-enrollment",
      routes: [{ path: "", methods: ["POST"], input: "json", key: "publishable", scenario: true, body: enrolment }],
    },
    {
      name: "process-biovital-transaction",
      routes: [
        {
          path: "",
          methods: ["POST"],
          input: "json",
          key: "secret",
          userJwt: true,
          replay: true,
          idempotency: "optional",
          scenario: true,
          body: transaction,
        },
      ],
    },
    {
      name: "mandate-issue",
      // A grant needs a fresh capture, a proof and terms that all hold: rare among generated bodies,
      // so twice the usual draws, for the run to reach a 201 on its fixed seed.
      weight: 16,
      routes: [{ path: "", methods: ["POST"], input: "json", key: "secret", replay: true, body: issue }],
    },
    { name: "mandate-check", routes: [{ path: "", methods: ["POST"], input: "json", key: "secret", replay: true, body: decision }] },
    {
      name: "mandate-consume",
      routes: [{ path: "", methods: ["POST"], input: "json", key: "secret", replay: true, idempotency: "required", body: decision }],
    },
    {
      name: "mandate-get",
      routes: [
        {
          path: "",
          methods: ["GET"],
          input: "query",
          key: "secret",
          body: arbitraryOf(mandateQuerySchema, { id: often(fc.constant(MARK.mandate), fc.string({ maxLength: 70 }), 4) }),
        },
      ],
    },
    {
      name: "mandate-revoke",
      routes: [
        {
          path: "",
          methods: ["POST"],
          input: "json",
          key: "secret",
          userJwt: true,
          serviceRole: true,
          body: arbitraryOf(revokeSchema, {
            mandate_id: fc.oneof(
              { weight: 6, arbitrary: fc.constant(MARK.spareMandate) },
              { weight: 1, arbitrary: fc.constant(MARK.mandate) },
              { weight: 2, arbitrary: fc.string({ maxLength: 70 }) },
            ),
          }),
        },
      ],
    },
    {
      name: "receipt-verify",
      routes: [
        {
          path: "",
          methods: ["GET", "POST"],
          input: "json-or-query",
          key: "none",
          weight: 6,
          body: arbitraryOf(receiptLookupSchema, {
            id: fc.option(often(fc.constant(MARK.receiptId), fc.uuid(), 3), { nil: undefined }),
            code: fc.option(often(fc.constant(MARK.receiptCode), fc.string({ maxLength: 70 }), 3), { nil: undefined }),
          }),
        },
        { path: "/jwks", methods: ["GET"], input: "none", key: "none" },
      ],
    },
    {
      name: "agent-verification-request",
      routes: [
        {
          path: "",
          methods: ["POST"],
          input: "json",
          key: "none",
          bearer: "user",
          body: arbitraryOf(requestSchema, {
            ...cardOverrides,
            merchant_id: often(fc.constant(MARK.merchant), fc.string({ maxLength: 70 }), 6),
          }),
        },
      ],
    },
    {
      name: "agent-verification-result",
      routes: [
        {
          path: "",
          methods: ["GET"],
          input: "query",
          key: "none",
          bearer: "user",
          body: arbitraryOf(resultSchema, { verification_id: cardId }),
        },
      ],
    },
    {
      name: "hosted-session-create",
      routes: [
        {
          path: "",
          methods: ["POST"],
          input: "json",
          key: "secret",
          body: arbitraryOf(createSessionSchema, {
            merchant_id: sometimes(fc.constantFrom(MARK.merchant, "00000000-0000-4000-8000-000000000000"), 4),
            external_txn_ref: fc.option(fc.stringMatching(/^[A-Za-z0-9:._-]{8,40}$/), { nil: undefined }),
            amount_cents: fc.option(smallAmount, { nil: undefined }),
            currency: fc.option(currencies, { nil: undefined }),
            brand: sometimes(often(fc.constantFrom("Grocer", "A brand"), fc.string({ maxLength: 90 })), 3),
            metadata: sometimes(fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.string({ maxLength: 20 }), { maxKeys: 4 }), 3),
          }).map((body: any) => {
            // an authorize mostly names what it needs, and the other actions mostly name no money
            if (body.action === "authorize") return { external_txn_ref: "order-1234", amount_cents: 1500, currency: "USD", ...body };
            const { amount_cents: _amount, currency: _currency, ...rest } = body;
            return rest;
          }),
        },
      ],
    },
    {
      name: "hosted-session-consume",
      routes: [
        {
          path: "",
          methods: ["POST"],
          input: "json",
          key: "secret",
          serviceRole: true,
          body: arbitraryOf(consumeSchema, { session_token: sessionToken }),
        },
      ],
    },
    {
      name: "hosted-session-get",
      routes: [
        {
          path: "",
          methods: ["GET"],
          input: "query",
          key: "secret",
          body: arbitraryOf(getSessionSchema, { session_id: often(fc.constant(MARK.sessionId), fc.string({ maxLength: 70 }), 4) }),
        },
      ],
    },
    {
      name: "hosted-capture",
      routes: [
        {
          path: "/boot",
          methods: ["POST"],
          input: "json",
          key: "none",
          weight: 2,
          body: arbitraryOf(consumeSchema, { session_token: sessionToken }),
        },
        { path: "/complete", methods: ["POST"], input: "json", key: "none", bearer: "screen", scenario: true, weight: 4, body: completion },
        { path: "/cancel", methods: ["POST"], input: "json", key: "none", bearer: "screen", body: arbitraryOf(cancelSchema) },
        {
          path: "/handoff",
          methods: ["POST"],
          input: "json",
          key: "none",
          body: arbitraryOf(registerHandoffSchema, { session_token: sessionToken }),
        },
        {
          path: "/handoff/status",
          methods: ["POST"],
          input: "json",
          key: "none",
          body: arbitraryOf(screenHandoffStatusSchema, {
            session_token: sessionToken,
            handoff_id: often(fc.stringMatching(/^hof_[0-9a-f]{32}$/), fc.string({ maxLength: 70 }), 2),
          }),
        },
        { path: "/check", methods: ["GET"], input: "none", key: "none" },
        { path: "/session", methods: ["GET"], input: "none", key: "none" },
        { path: "/assets/check.js", methods: ["GET"], input: "none", key: "none" },
        { path: "/assets/session.js", methods: ["GET"], input: "none", key: "none" },
      ],
    },
    {
      name: "resource-api",
      // Some twenty-five routes behind one name, and a 201 only where a whole body holds: three times the usual draws.
      weight: 24,
      routes: [
        {
          path: "/mandates",
          methods: ["GET"],
          input: "query",
          key: "secret",
          bearer: "key",
          version: true,
          body: arbitraryOf(mandatePageSchema),
        },
        {
          path: "/mandates",
          methods: ["POST"],
          input: "json",
          key: "secret",
          bearer: "key",
          version: true,
          idempotency: "optional",
          weight: 6,
          body: resourceCreate,
        },
        { path: `/mandates/${MARK.mandate}`, methods: ["GET"], input: "none", key: "secret", bearer: "key", version: true },
        {
          path: `/mandates/${MARK.spareMandate}/revoke`,
          methods: ["POST"],
          input: "json",
          key: "secret",
          bearer: "key",
          version: true,
          body: arbitraryOf(revokeMandateSchema),
        },
        ...[MARK.mandate, "mdt_0"].map(
          (mandate): RoutePlan => ({
            path: `/mandates/${mandate}/check`,
            methods: ["POST"],
            input: "json",
            key: "secret",
            bearer: "key",
            version: true,
            idempotency: "optional",
            weight: mandate === MARK.mandate ? 6 : 1,
            body: arbitraryOf(checkMandateSchema, {
              operation: often(scope, fc.string({ maxLength: 10 })),
              amount: decisionOverrides.amount,
              currency: decisionOverrides.currency,
            }).map(withCurrency),
          }),
        ),
        {
          path: "/sessions",
          methods: ["POST"],
          input: "json",
          key: "secret",
          bearer: "key",
          version: true,
          idempotency: "optional",
          weight: 8,
          body: resourceSession,
        },
        ...[MARK.sessionId, "hs_0"].map(
          (session): RoutePlan => ({
            path: `/sessions/${session}`,
            methods: ["GET"],
            input: "none",
            key: "secret",
            bearer: "key",
            version: true,
          }),
        ),
        { path: "/openapi.json", methods: ["GET"], input: "none", key: "none" },
        ...[MARK.receiptId, MARK.receiptCode, "nothing"].map(
          (receipt): RoutePlan => ({ path: `/receipts/${receipt}/verify`, methods: ["GET"], input: "none", key: "none", version: true }),
        ),
        v1Post("/identity/claims", {
          idempotency: "optional",
          weight: 4,
          body: arbitraryOf(claimSchema, { proof: proofOverride(skeletons), source: sometimes(fc.constant("document"), 12), metadata }),
        }),
        v1Post("/identity/recognitions", { weight: 3, body: arbitraryOf(recognitionSchema, { proof: proofOverride(skeletons) }) }),
        v1Post("/identity/attributes", {
          idempotency: "optional",
          weight: 3,
          body: arbitraryOf(attributeSchema, {
            proof: proofOverride(skeletons),
            facetoken: often(fc.constant(MARK.subject), fc.string({ maxLength: 60 })),
            attribute: often(fc.constantFrom(...attributeNames, "document_verified"), fc.string({ maxLength: 20 })),
            metadata,
          }),
        }),
        ...["/receipts", "/mandates/x/y", "/identity/claims", "/identity"].map(
          (path): RoutePlan => ({ path, methods: ["GET", "POST"], input: "none", key: "none" }),
        ),
        ...["mdt_0", "%00", "%ED%A0%80", "..%2f"].map(
          (mandate): RoutePlan => ({ path: `/mandates/${mandate}`, methods: ["GET", "POST"], input: "none", key: "secret", bearer: "key" }),
        ),
      ],
    },
    {
      name: "mcp",
      weight: 12,
      routes: [
        { path: "", methods: ["POST"], input: "json", key: "none", bearer: "agent", jsonRpc: true, weight: 16, body: jsonRpc },
        { path: "", methods: ["GET", "DELETE"], input: "none", key: "none", bearer: "agent" },
        {
          path: "/oauth/register",
          methods: ["POST"],
          input: "json",
          key: "none",
          body: fc.record(
            {
              client_name: fc.string({ maxLength: 40 }),
              redirect_uris: fc.array(fc.oneof(fc.constant("http://127.0.0.1:9/callback"), fc.webUrl(), fc.string()), { maxLength: 3 }),
              token_endpoint_auth_method: fc.constantFrom("none", "client_secret_basic", "private_key_jwt", "x"),
              grant_types: fc.subarray(["authorization_code", "refresh_token", "client_credentials", "password"]),
              response_types: fc.subarray(["code", "token"]),
              scope: fc.constantFrom("mandates:read", "mandates:read mandates:write", "admin"),
            },
            { requiredKeys: [] },
          ),
        },
        {
          path: "/oauth/token",
          methods: ["POST"],
          input: "form",
          key: "none",
          body: fc.record(
            {
              grant_type: fc.constantFrom("authorization_code", "refresh_token", "client_credentials", "x"),
              code: fc.string({ maxLength: 40 }),
              refresh_token: fc.string({ maxLength: 40 }),
              client_id: often(fc.constant(MARK.clientId), fc.string({ maxLength: 20 }), 3),
              redirect_uri: fc.constantFrom("http://127.0.0.1:9/callback", "https://evil.example/cb"),
              code_verifier: fc.string({ maxLength: 60 }),
              resource: fc.constantFrom("http://example.invalid/functions/v1/mcp", "x"),
            },
            { requiredKeys: [] },
          ),
        },
        {
          path: "/oauth/authorize",
          methods: ["GET", "POST"],
          input: "query",
          key: "none",
          userJwt: true,
          body: fc.record(
            {
              response_type: fc.constantFrom("code", "token"),
              client_id: often(fc.constant(MARK.clientId), fc.string({ maxLength: 20 }), 3),
              redirect_uri: fc.constantFrom("http://127.0.0.1:9/callback", "https://evil.example/cb"),
              code_challenge: fc.string({ minLength: 43, maxLength: 43 }),
              code_challenge_method: fc.constantFrom("S256", "plain"),
              scope: fc.constantFrom("mandates:read", "mandates:read mandates:write", "admin"),
              state: fc.string({ maxLength: 20 }),
            },
            { requiredKeys: [] },
          ),
        },
        { path: "/oauth/nothing", methods: ["GET", "POST"], input: "none", key: "none" },
        ...["/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/functions/v1/mcp"].map(
          (path): RoutePlan => ({ path, root: true, methods: ["GET"], input: "none", key: "none" }),
        ),
      ],
    },
    { name: "session-expiry-and-webhooks", weight: 1, routes: [{ path: "", methods: ["POST"], input: "none", key: "none" }] },
    { name: "receipt-anchor", weight: 1, routes: [{ path: "", methods: ["POST"], input: "none", key: "none" }] },
    { name: "consent-retention", weight: 1, routes: [{ path: "", methods: ["POST"], input: "none", key: "none" }] },
    {
      name: "disclose-claims",
      routes: [
        { path: "", methods: ["POST"], input: "json", key: "secret", weight: 3, body: disclosure },
        {
          path: "/fetch",
          methods: ["POST"],
          input: "json",
          key: "secret",
          body: arbitraryOf(fetchSchema, {
            consent_token: often(fc.stringMatching(/^cst_[A-Za-z0-9_-]{43}$/), fc.string({ maxLength: 60 }), 2),
          }),
        },
      ],
    },
    {
      name: "revoke-consent",
      routes: [
        {
          path: "",
          methods: ["POST"],
          input: "json",
          key: "secret",
          // the cohort's person is withdrawn only rarely, so the other functions keep getting deep
          body: arbitraryOf(revokeConsentSchema, {
            consent_token: sometimes(often(fc.stringMatching(/^cst_[A-Za-z0-9_-]{43}$/), fc.string({ maxLength: 60 })), 2),
            subject_ref: sometimes(often(fc.stringMatching(/^sub_[0-9a-f]{48}$/), fc.constant(MARK.subject), 30), 2),
          }),
        },
      ],
    },
    {
      name: "handoff-register-public",
      routes: [
        {
          path: "",
          methods: ["POST"],
          input: "json",
          key: "publishable",
          body: arbitraryOf(registerHandoffSchema, { session_token: sessionToken }),
        },
        {
          path: "/claim",
          methods: ["POST"],
          input: "json",
          key: "none",
          body: arbitraryOf(claimHandoffSchema, {
            handoff_code: often(fc.stringMatching(/^hoc_[A-Za-z0-9_-]{43}$/), fc.string({ maxLength: 60 }), 2),
          }),
        },
        {
          path: "/status",
          methods: ["GET"],
          input: "query",
          key: "publishable",
          body: arbitraryOf(handoffStatusSchema, {
            handoff_id: often(fc.stringMatching(/^hof_[0-9a-f]{32}$/), fc.string({ maxLength: 70 }), 2),
          }),
        },
      ],
    },
  ];
}
