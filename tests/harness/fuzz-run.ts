/**
 * Sends the generated-input test's requests (./fuzz-requests.ts, ./fuzz-plans.ts) for a cohort of
 * fixtures, judges every answer against docs/functions.md (./documented-answers.ts), and checks the
 * ledger: every row a request can write is attributed to an answer that says it was written.
 */
import * as v from "valibot";
import { encodeProof } from "../../shared/engine";
import type { Sql } from "../../shared/kernel/db/client";
import { rpc } from "../../shared/kernel/db/rpc";
import { cronsOf, type FunctionName, mountOf } from "../../shared/kernel/registry";
import { randomBase62 } from "../../shared/lib/crypto";
import { canonicalUuid } from "../../shared/lib/uuid";
import { mandateUuid } from "../../shared/mandates/ids";
import { grantTermsOf, grantTermsSchema } from "../../shared/mandates/issue";
import type { CreatedMerchant } from "../../shared/merchants/accounts";
import { addOwner, createKey } from "../../shared/merchants/accounts";
import { sessionUuid } from "../../shared/sessions/tokens";
import { type PassportCase, passportCases } from "../../shared/simulator/passports";
import { type DocumentedAnswers, EVERY_FUNCTION } from "./documented-answers";
import { passport } from "./documents";
import { testDb } from "./factories";
import { MARK } from "./fuzz-plans";
import { RawJson, type Recipe } from "./fuzz-requests";
import { fetchFrom, freshIp } from "./http";
import { randomFace } from "./identity";
import { grantableTerms, issue, mandateBody, mandateFixture, presenceCapture, proofCapture } from "./mandates";
import { serviceUnderTest } from "./service";
import { consumeSession, openSession } from "./sessions";
import { requestCard } from "./verifications";

/** A hosted session the cohort opened, whose screen credential and capture nonce a completion uses. */
interface Screen {
  sessionId: string;
  token: string;
  nonce: string;
  action: string;
}

/** The fixtures one batch of requests reaches deep with: one merchant and what it owns. */
export interface Cohort {
  merchant: CreatedMerchant;
  revokedKey: string;
  person: Awaited<ReturnType<typeof mandateFixture>>["person"];
  mandateId: string;
  spareMandateId: string;
  agentMandateId: string;
  captureId: string;
  receipt: { id: string; code: string };
  /** Hosted session tokens not yet exchanged (then the exchanged ones), and the screens opened. */
  sessionTokens: string[];
  usedSessionTokens: string[];
  sessionId: string;
  /** A verification card the person (an owner) minted. */
  cardId: string;
  screens: Screen[];
  agent: { clientId: string; accessToken: string };
  usedNonces: string[];
  usedIdempotencyKeys: string[];
  claimTokens: string[];
  /** A sandbox passport of each case, by case. */
  passports: Record<string, unknown>;
  /** The ledger's rows of this merchant before the batch (ledgerRows). */
  before: Ledger;
}

/** A lifetime ceiling no batch exhausts, so decisions get past the ceiling to every other rule. */
const LARGE_CEILING = { kind: "amount", amount: 1_000_000_000, currency: "USD", period: "lifetime" };
const REDIRECT = "http://127.0.0.1:9/callback";

export async function cohort(): Promise<Cohort> {
  const { merchant, person, mandate } = await mandateFixture({ ceiling: LARGE_CEILING });
  // A login that proves presence (a disclosure's attestation; no grant), and a grant capture for each mandate.
  const captureId = await presenceCapture(merchant, person, { document: true });
  const spare = await issue(merchant.keys.sk_test, mandateBody(person, await proofCapture(merchant, person)));
  if (spare.status !== 201) throw new Error(`spare mandate: ${spare.text}`);
  const revoked = await createKey(testDb(), merchant.merchant_id, "secret", "test");
  await rpc(testDb(), "api_key_revoke", { key_id: revoked.key_id });
  const [receipt] = await testDb()<
    { id: string; code: string }[]
  >`select id::text, code from private.receipts where capture_id = ${captureId}`;
  await addOwner(testDb(), merchant.merchant_id, person.subject_ref, new Date());
  const agent = await authorisedAgent(person.session_token);
  const agentTerms = { granted_to: agent.clientId, ceiling: LARGE_CEILING };
  const forAgent = await issue(merchant.keys.sk_test, mandateBody(person, await proofCapture(merchant, person, { terms: agentTerms })));
  if (forAgent.status !== 201) throw new Error(`agent mandate: ${forAgent.text}`);
  const opened = await Promise.all(
    ["login", "login", "login", "login", "enroll", "enroll", "login", "enroll", "login", "login"].map((action) =>
      openSession(merchant.keys.sk_test, { action }),
    ),
  );
  const screens: Screen[] = [];
  for (const session of opened.slice(0, 6)) {
    const exchanged = await consumeSession(session.session_token);
    if (exchanged.status !== 200) throw new Error(`hosted session exchange: ${exchanged.text}`);
    screens.push({
      sessionId: session.session_id,
      token: exchanged.body.screen_token,
      nonce: exchanged.body.capture_nonce,
      action: exchanged.body.action,
    });
  }
  const card = await requestCard(person.session_token, { merchant_id: merchant.merchant_id, purpose: "Generated-input test" });
  if (card.status !== 200) throw new Error(`verification card: ${card.text}`);
  return {
    merchant,
    revokedKey: revoked.key,
    person,
    mandateId: mandate.mandate_id,
    spareMandateId: spare.body.mandate_id,
    agentMandateId: forAgent.body.mandate_id,
    captureId,
    receipt,
    sessionTokens: opened.slice(6).map((session) => session.session_token),
    usedSessionTokens: opened.slice(0, 6).map((session) => session.session_token),
    sessionId: opened[0].session_id,
    cardId: card.body.verification_id,
    screens,
    agent,
    usedNonces: [],
    usedIdempotencyKeys: [],
    claimTokens: [],
    passports: Object.fromEntries(
      await Promise.all(Object.keys(passportCases).map(async (kind) => [kind, await passport({ case: kind as PassportCase })])),
    ),
    before: await ledgerRows(testDb(), merchant.merchant_id),
  };
}

/**
 * An MCP agent the person (an owner of the merchant) authorised, by the OAuth flow a client runs:
 * registration, the owner's consent signed in with their session, the code for a token (PKCE).
 */
async function authorisedAgent(sessionToken: string): Promise<{ clientId: string; accessToken: string }> {
  const oauth = `${serviceUnderTest().baseUrl}/functions/v1/mcp/oauth`;
  const registered = await fetch(`${oauth}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "Fuzz agent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
  });
  const client = (await registered.json()) as { client_id: string };
  const verifier = `${crypto.randomUUID()}${crypto.randomUUID()}`;
  const challenge = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))).toString("base64url");
  const resource = `${serviceUnderTest().baseUrl}/functions/v1/mcp`;
  const authorize = new URL(`${oauth}/authorize`);
  const query = {
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    scope: "mandates:read mandates:write",
    state: "fuzz",
    resource,
  };
  for (const [name, value] of Object.entries(query)) authorize.searchParams.set(name, value);
  const page = await fetch(authorize, { headers: { authorization: `Bearer ${sessionToken}` } });
  const html = await page.text();
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? "";
  const form = new URLSearchParams({
    handle: field("handle"),
    session_token: sessionToken,
    merchant_id: field("merchant_id"),
    decision: "approve",
  });
  for (const scope of ["mandates:read", "mandates:write"]) form.append("scope", scope);
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const approved = await fetch(authorize, { method: "POST", body: form, headers: { cookie }, redirect: "manual" });
  const code = new URL(approved.headers.get("location") ?? REDIRECT).searchParams.get("code") ?? "";
  const token = await fetch(`${oauth}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT,
      client_id: client.client_id,
      code_verifier: verifier,
      resource,
    }),
  });
  const tokens = (await token.json()) as { access_token?: string };
  if (!tokens.access_token) throw new Error(`no MCP token: ${JSON.stringify(tokens)}`);
  return { clientId: client.client_id, accessToken: tokens.access_token };
}

// ---------------------------------------------------------------- sending

/** The result of a tool call inside an MCP answer: the function's body, and its status when an error. */
interface ToolOutcome {
  name: string;
  status: number;
  code: string;
  body: any;
}

/** One request's answer, with what the sender chose for it. */
export interface Outcome {
  recipe: Recipe;
  status: number;
  code: string;
  body: any;
  text: string;
  replayed: boolean;
  ms: number;
  /** The capture nonce, Idempotency-Key and user_id the request carried, if any. */
  captureNonce?: string;
  /** A grant capture made for this request's terms before it was sent: its transaction's id and nonce. */
  grantCapture?: { id: string; nonce: string };
  idempotencyKey?: string;
  subjectRef?: string;
  carriedDocument: boolean;
  /** The hosted screen the request presented, and the environment of the key it presented. */
  screen?: Screen;
  environment: "test" | "live";
  tool?: ToolOutcome;
}

function serialize(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? "null" : serialize(item))).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const fields = Object.entries(value).filter(([, item]) => item !== undefined);
    return `{${fields.map(([key, item]) => `${JSON.stringify(key)}:${serialize(item)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The markers of `value` replaced by this cohort's values at this instant. */
function resolve(value: unknown, markers: Record<string, unknown>, now: number): unknown {
  if (typeof value === "string") {
    if (value in markers) return markers[value];
    if (value.startsWith(MARK.inSeconds)) return new Date(now + Number(value.slice(MARK.inSeconds.length)) * 1000).toISOString();
    return value;
  }
  if (value instanceof RawJson || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => resolve(item, markers, now));
  if (MARK.proof in value) {
    const { descriptor, consent } = resolve((value as Record<string, unknown>)[MARK.proof], markers, now) as Record<string, any>;
    return encodeProof(descriptor, consent);
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item, markers, now)]));
}

const resolvePath = (path: string, markers: Record<string, unknown>) =>
  path.replace(/\$@[A-Z_]+/g, (marker) => (typeof markers[marker] === "string" ? (markers[marker] as string) : marker));

/** The hosted screen a completion or cancel presents: one still open, of the body's kind when it can be. */
function screenFor(c: Cohort, recipe: Recipe): Screen | undefined {
  const body = recipe.body.kind === "json" ? (recipe.body.value as Record<string, unknown> | null) : null;
  const enroll = body !== null && typeof body === "object" && "consent" in body;
  const index = c.screens.findIndex((screen) => (screen.action === "enroll") === enroll);
  if (index >= 0) return c.screens.splice(index, 1)[0];
  return c.screens.shift();
}

/** Sends `recipe` for `c` and returns its answer; never throws for an answer, only for no answer at all. */
/** A grant capture of the terms of `body` (a mandate-issue body proven by the cohort's login), or undefined where no grant could show them. */
async function grantFor(
  c: Cohort,
  body: unknown,
  now: Date,
  surface: "function" | "resource",
): Promise<{ id: string; nonce: string } | undefined> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return undefined;
  const { granted_by, proof, ...terms } = body as Record<string, unknown>;
  if (granted_by !== c.person.subject_ref || (proof as { capture_id?: unknown } | null)?.capture_id !== c.captureId) return undefined;
  let grant: Record<string, unknown> | null = null;
  if (surface === "resource") grant = grantableTerms(terms, c.person.subject_ref, now);
  else {
    const parsed = v.safeParse(grantTermsSchema, terms);
    try {
      if (parsed.success && grantTermsOf(parsed.output, now)) grant = terms;
    } catch {}
  }
  if (!grant) return undefined;
  const id = await presenceCapture(c.merchant, c.person, { grant }).catch(() => undefined);
  if (!id) return undefined;
  const [row] = await testDb()<{ nonce: string }[]>`select capture_nonce as nonce from private.captures where id = ${id}::uuid`;
  return { id, nonce: row.nonce };
}

export async function send(c: Cohort, recipe: Recipe): Promise<Outcome> {
  const now = Date.now();
  const { route } = recipe;
  const screen = route.bearer === "screen" && recipe.authorization === undefined ? screenFor(c, recipe) : undefined;
  const captureNonce = screen?.nonce ?? `fz-${crypto.randomUUID()}`;
  const markers: Record<string, unknown> = {
    [MARK.mandate]: c.mandateId,
    [MARK.spareMandate]: c.spareMandateId,
    [MARK.agentMandate]: c.agentMandateId,
    [MARK.subject]: c.person.subject_ref,
    [MARK.captureId]: c.captureId,
    [MARK.merchant]: c.merchant.merchant_id,
    [MARK.receiptId]: c.receipt.id,
    [MARK.receiptCode]: c.receipt.code,
    [MARK.claimToken]: c.claimTokens.at(-1) ?? `ct_${randomBase62(43)}`,
    [MARK.sessionId]: c.sessionId,
    [MARK.card]: c.cardId,
    [MARK.clientId]: c.agent.clientId,
    [MARK.nonce]: captureNonce,
    [MARK.now]: new Date(now - 2000).toISOString(),
    [MARK.face]: c.person.face,
    [MARK.strangerFace]: randomFace(),
    ...Object.fromEntries(Object.entries(c.passports).map(([kind, document]) => [`${MARK.passport}${kind}`, document])),
  };
  // a session token is taken from the pool only by a request that names one
  Object.defineProperty(markers, MARK.sessionToken, {
    enumerable: true,
    get: () => {
      const token = c.sessionTokens.shift() ?? c.usedSessionTokens[0] ?? `hst_${randomBase62(43)}`;
      c.usedSessionTokens.push(token);
      return token;
    },
  });

  const headers: Record<string, string> = {};
  const keys = c.merchant.keys;
  const plan = recipe.key;
  const publishable = route.key === "publishable" || route.key === "anonymous";
  const keyOf = (kind: "secret" | "publishable", live = false) =>
    kind === "publishable" ? (live ? keys.pk_live : keys.pk_test) : live ? keys.sk_live : keys.sk_test;
  const presented =
    plan === "right" || plan === "legacy" || plan === "both"
      ? keyOf(publishable ? "publishable" : "secret")
      : plan === "secret" || plan === "publishable"
        ? keyOf(plan)
        : plan === "live"
          ? keyOf(publishable ? "publishable" : "secret", true)
          : plan === "revoked"
            ? c.revokedKey
            : plan === "unknown"
              ? `sk_test_${randomBase62(40)}`
              : typeof plan === "object"
                ? plan.malformed
                : undefined;
  // a route whose own credential is the owner's session takes no key, but sometimes gets one
  if (presented !== undefined && !(route.bearer === "user" && plan === "right")) {
    if (route.bearer === "key" && plan !== "legacy") headers.authorization = `Bearer ${presented}`;
    else headers[plan === "legacy" ? "x-api-key" : "x-service-api-key"] = presented;
    if (plan === "both") headers[route.bearer === "key" ? "x-service-api-key" : "x-api-key"] = "not-a-key";
  }
  const auth = recipe.authorization;
  if (auth === undefined) {
    if (route.bearer === "screen") headers.authorization = `Bearer ${screen?.token ?? `hsc_${randomBase62(43)}`}`;
    if (route.bearer === "agent") headers.authorization = `Bearer ${c.agent.accessToken}`;
    if (route.bearer === "user") headers.authorization = `Bearer ${c.person.session_token}`;
  } else if (auth === "missing") {
    delete headers.authorization;
  } else {
    headers.authorization =
      auth === "user"
        ? `Bearer ${c.person.session_token}`
        : auth === "service"
          ? `Bearer ${serviceUnderTest().bindings.SERVICE_ROLE_KEY}`
          : auth === "wrong-service"
            ? `Bearer svc_${randomBase62(64)}`
            : auth.raw;
    // a bearer is read only when no key is presented
    if ((auth === "user" || auth === "service") && plan === "right") delete headers["x-service-api-key"];
  }
  const replayValue = (p: Recipe["timestamp"] | Recipe["idempotency"], good: () => string, reused: () => string) =>
    p === "good" || p === "fresh" ? good() : p === "missing" ? undefined : p === "reused" ? reused() : p.raw;
  const timestamp = replayValue(
    recipe.timestamp,
    () => String(Math.floor(now / 1000)),
    () => String(Math.floor(now / 1000) - 3600),
  );
  if (timestamp !== undefined) headers["x-service-timestamp"] = timestamp;
  const nonce = replayValue(
    recipe.nonce,
    () => `fz-${crypto.randomUUID()}`,
    () => c.usedNonces[0] ?? `fz-${crypto.randomUUID()}`,
  );
  if (nonce !== undefined) {
    headers["x-service-nonce"] = nonce;
    if (c.usedNonces.length < 4) c.usedNonces.push(nonce);
  }
  const idempotencyKey = replayValue(
    recipe.idempotency,
    () => `fz-${crypto.randomUUID()}`,
    () => c.usedIdempotencyKeys.at(-1) ?? `fz-${crypto.randomUUID()}`,
  );
  if (idempotencyKey !== undefined) {
    headers["idempotency-key"] = idempotencyKey;
    c.usedIdempotencyKeys.push(idempotencyKey);
  }
  if (recipe.scenario !== undefined) headers["x-service-scenario"] = recipe.scenario;
  if (recipe.language !== undefined) headers["accept-language"] = recipe.language;
  if (recipe.requestId !== undefined) headers["x-request-id"] = recipe.requestId;
  if (recipe.accept !== undefined) headers.accept = recipe.accept;
  if (recipe.version !== undefined) headers["service-version"] = recipe.version;
  if (recipe.contentType !== null) headers["content-type"] = recipe.contentType;

  const base = serviceUnderTest().baseUrl;
  let url = `${base}${route.root ? "" : mountOf(recipe.fn)}${resolvePath(route.path, markers)}${recipe.suffix}`;
  if (recipe.query.kind === "raw") url += `?${recipe.query.text}`;
  else if (recipe.query.kind === "params" && recipe.query.value !== null && typeof recipe.query.value === "object") {
    const resolved = resolve(recipe.query.value, markers, now) as Record<string, unknown>;
    const params = new URLSearchParams();
    for (const [name, item] of Object.entries(resolved)) params.append(name, typeof item === "string" ? item : serialize(item));
    if ([...params].length) url += `?${params}`;
  }
  const resolvedBody = recipe.body.kind === "json" || recipe.body.kind === "form" ? resolve(recipe.body.value, markers, now) : undefined;
  // A login proves no grant (issue 25): a mandate-issue whose proof is the cohort's login and whose
  // terms a person could be shown gets a grant capture of exactly those terms first, made through
  // the sink as the person's app would, so the run still reaches issued mandates.
  const v1Create = recipe.fn === "resource-api" && route.path === "/mandates" && recipe.method === "POST";
  const grantCapture =
    (recipe.fn === "mandate-issue" || v1Create) && recipe.body.kind === "json"
      ? await grantFor(c, resolvedBody, new Date(now), v1Create ? "resource" : "function")
      : undefined;
  if (grantCapture) (resolvedBody as { proof: unknown }).proof = { capture_id: grantCapture.id };
  let body: string | Blob | undefined;
  if (recipe.body.kind === "json") body = serialize(resolvedBody);
  else if (recipe.body.kind === "form") {
    const form = new URLSearchParams();
    if (resolvedBody !== null && typeof resolvedBody === "object" && !Array.isArray(resolvedBody)) {
      for (const [name, item] of Object.entries(resolvedBody))
        if (item !== undefined) form.append(name, typeof item === "string" ? item : serialize(item));
    }
    body = form.toString();
  } else if (recipe.body.kind === "raw") body = recipe.body.text;
  else if (recipe.body.kind === "bytes") body = new Blob([new Uint8Array(recipe.body.bytes)]);
  if (recipe.method === "GET" || recipe.method === "HEAD") body = undefined;

  const started = performance.now();
  // Each request from a client address of its own, so per-IP limits never decide an answer.
  const sentBody = body instanceof Blob ? new Uint8Array(await body.arrayBuffer()) : body;
  const response = await fetchFrom(freshIp(), url, { method: recipe.method, headers, body: sentBody }).catch((error: Error) => {
    // Which request the connection failed on, so a failure can be replayed and understood.
    const size = typeof body === "string" ? body.length : (body?.size ?? 0);
    throw new Error(`${recipe.method} ${url.slice(0, 200)} (${recipe.body.kind} body of ${size} bytes) failed: ${error.message}`, {
      cause: error,
    });
  });
  const text = await response.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // a JSON-RPC answer may come as one server-sent event
    const event = /^data: (.*)$/m.exec(text);
    if (event) parsed = JSON.parse(event[1]);
  }
  const sent = resolvedBody as Record<string, any> | undefined;
  if (recipe.fn === "alias-availability" && response.status === 200 && typeof parsed?.claim_token === "string")
    c.claimTokens.push(parsed.claim_token);
  const toolName = route.jsonRpc && sent?.method === "tools/call" ? sent?.params?.name : undefined;
  const structured = parsed?.result?.structuredContent;
  return {
    recipe,
    status: response.status,
    code: response.status >= 400 && typeof parsed?.code === "string" ? parsed.code : "",
    body: parsed,
    text,
    replayed: response.headers.get("idempotency-status") === "replayed",
    ms: performance.now() - started,
    // a proof the plan built carries the request's nonce inside it
    captureNonce: typeof sent?.capture_nonce === "string" ? sent.capture_nonce : typeof sent?.proof === "string" ? captureNonce : undefined,
    idempotencyKey,
    grantCapture,
    subjectRef: typeof sent?.user_id === "string" ? sent.user_id : undefined,
    carriedDocument: sent !== undefined && sent !== null && typeof sent === "object" && "document" in sent,
    screen,
    environment: plan === "live" ? "live" : "test",
    tool:
      typeof toolName === "string" && structured && typeof structured === "object"
        ? {
            name: toolName,
            status: parsed.result.isError ? Number(structured.status) : 200,
            code: parsed.result.isError && typeof structured.code === "string" ? structured.code : "",
            body: structured,
          }
        : undefined,
  };
}

// ---------------------------------------------------------------- judging answers

/** The functions whose 200 answers may be refusals with `allowed: false` and a `reason`. */
const DECISIONS = new Set(["mandate-check", "mandate-consume", "process-biovital-transaction", "resource-api"]);

/** What is wrong with an answer, by the documented answers; empty when nothing is. */
export function problemsOf(outcome: Outcome, docs: DocumentedAnswers): string[] {
  const problems: string[] = [];
  const { status, code, body, recipe } = outcome;
  if (status >= 500) problems.push(`${status} ${code}: a 5xx`);
  const documented = docs.functions.get(recipe.fn);
  const common = cronsOf(recipe.fn as FunctionName).length === 0 ? docs.functions.get(EVERY_FUNCTION) : undefined;
  if (!documented) return [...problems, `no section for ${recipe.fn} in docs/functions.md`];
  const listed = (answer: string) => documented.answers.has(answer) || (common?.answers.has(answer) ?? false);
  if (recipe.method === "HEAD") {
    // an answer to HEAD has no body to read a code from: its status must be one the function gives
    const statuses = [...documented.answers, ...(common?.answers ?? [])].map((answer) => answer.split(" ")[0]);
    if (!statuses.includes(String(status))) problems.push(`${status} to HEAD: not listed for ${recipe.fn}`);
    return problems;
  }
  if (!listed(`${status} ${code}`)) problems.push(`${status} ${code}: not listed for ${recipe.fn}`);
  // rows without a code are answers in another shape (OAuth's, JSON-RPC's, the runtime's) and the successes
  if (status >= 400 && !listed(`${status} `) && (typeof body?.error !== "string" || typeof body?.code !== "string")) {
    problems.push(`${status}: the body is not {error, code}`);
  }
  const refusal = DECISIONS.has(recipe.fn) && status === 200 && body?.allowed === false;
  if (refusal && !docs.refusalReasons.has(body?.reason)) problems.push(`refusal reason ${body?.reason}: not listed`);
  if (recipe.fn === "alias-availability" && status === 200 && body?.format_ok === false && !documented.formatCodes.has(body.format_code)) {
    problems.push(`format_code ${body.format_code}: not listed`);
  }
  const tool = outcome.tool;
  if (tool) {
    // a tool answers what its function answers (docs/mcp.md), or the MCP section's own codes
    const fn = docs.functions.get(tool.name);
    const answer = `${tool.status} ${tool.code}`;
    if (tool.status >= 500) problems.push(`tool ${tool.name}: ${answer}, a 5xx inside the result`);
    if (!(fn?.answers.has(answer) || documented.answers.has(answer) || common?.answers.has(answer)))
      problems.push(`tool ${tool.name}: ${answer} not listed`);
    if (tool.status === 200 && tool.body?.allowed === false && !docs.refusalReasons.has(tool.body.reason)) {
      problems.push(`tool ${tool.name}: refusal reason ${tool.body.reason} not listed`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------- the ledger

/** The rows of one merchant that requests can write, as comparable strings per table. */
type Ledger = Record<string, Set<string>>;

const LEDGER_QUERIES: Record<string, string> = {
  mandates: "select id::text as row from private.mandates where merchant_id = $1",
  revocations: "select id::text as row from private.mandates where merchant_id = $1 and revoked_at is not null",
  consumptions: `select c.id::text as row from private.mandate_consumptions c join private.mandates m on m.id = c.mandate_id
                 where m.merchant_id = $1`,
  captures: "select id::text || ' ' || capture_nonce as row from private.captures where merchant_id = $1",
  receipts: "select capture_id::text || ' ' || id::text as row from private.receipts where merchant_id = $1",
  outbox: `select id::text || ' ' || type || ' ' || coalesce(data ->> 'consumption_id', data ->> 'mandate_id', data ->> 'id', '') as row
           from private.outbox_events where merchant_id = $1`,
  idempotency: `select environment || ' ' || state || ' ' || coalesce(response_status::text, '-') || ' ' || idempotency_key as row
                from private.idempotency_keys where merchant_id = $1`,
  aliases: "select alias as row from private.aliases where merchant_id = $1",
  sessions: "select token_hash || ' ' || identity_id::text as row from private.sessions where merchant_id = $1",
  consents: "select id::text || ' ' || identity_id::text as row from private.consents where merchant_id = $1",
  subjectRefs: "select subject_ref || ' ' || identity_id::text as row from private.subject_refs where merchant_id = $1",
  captureNonces: "select capture_nonce as row from private.capture_nonces where merchant_id = $1",
  documents: `select d.id::text || ' ' || d.identity_id::text as row from private.identity_documents d
              where d.identity_id in (select identity_id from private.consents where merchant_id = $1)`,
  hostedSessions: "select id::text as row from private.hosted_sessions where merchant_id = $1",
  cards: "select id::text || ' ' || session_id::text as row from private.agent_verifications where merchant_id = $1",
  billing: "select identity_id::text as row from private.billing_ledger where merchant_id = $1",
  // the running totals must always be the ledger's sums (the trigger keeps them)
  usageDrift: `select u.mandate_id::text as row from private.mandate_usage u join private.mandates m on m.id = u.mandate_id
               where m.merchant_id = $1 group by u.mandate_id
               having sum(u.used_count) <> (select count(*) from private.mandate_consumptions c where c.mandate_id = u.mandate_id)
                   or sum(u.used_amount) <> (select coalesce(sum(amount), 0) from private.mandate_consumptions c where c.mandate_id = u.mandate_id)`,
};

export async function ledgerRows(sql: Sql, merchantId: string): Promise<Ledger> {
  const entries = await Promise.all(
    Object.entries(LEDGER_QUERIES).map(async ([table, query]) => {
      const rows = await sql.unsafe<{ row: string }[]>(query, [merchantId]);
      return [table, new Set(rows.map((r) => r.row))] as const;
    }),
  );
  return Object.fromEntries(entries);
}

const uuidOf = (id: unknown) => (typeof id === "string" ? (mandateUuid(id.replace(/^cns_/, "mdt_")) ?? sessionUuid(id) ?? id) : "");

/** Refusals of the sink that record the judged capture (for audit), so its row and its nonce's use are theirs. */
const AUDITED_REFUSALS = new Set([
  "IDENTITY_MISMATCH",
  "FACE_MATCH_BELOW_THRESHOLD",
  "BIOMETRIC_LIVENESS_FAILED",
  "COERCION_DETECTED",
  "DOCUMENT_REQUIRED",
]);

/** The writes of an answered act, wherever it was answered: a function, a /v1 route or an MCP tool. */
interface Act {
  fn: string;
  status: number;
  code: string;
  body: any;
}

/** What the answers say was written: the only rows the ledger may have gained. */
export class Attribution {
  issued = new Set<string>();
  revoked = new Set<string>();
  consumed = new Set<string>();
  approved = new Set<string>();
  auditedNonces = new Set<string>();
  claimedNonces = new Set<string>();
  reservedAliases = new Set<string>();
  sessionHashes = new Set<string>();
  documentSubjects = new Set<string>();
  hostedCreated = new Set<string>();
  /** Verification cards a 200 answered as minted (function or tool). */
  cardsMinted = new Set<string>();
  /** Hosted sessions a completion or cancel answered 200 for (their outcome names what they wrote). */
  hostedEnded = new Set<string>();
  hostedEndedNonces = new Set<string>();
  /** Nonces of every hosted session a completion or cancel was sent for: identification claims its nonce first. */
  hostedNonces = new Set<string>();
  /** What the /v1 claims answered 201 wrote: their captures (by nonce), receipts and facetokens. */
  claimNonces = new Set<string>();
  claimReceipts = new Set<string>();
  claimedSubjects = new Set<string>();
  /** `<environment> <Idempotency-Key>` → the statuses answered to it (not replayed). */
  idempotencyAnswers = new Map<string, Set<number>>();

  record(o: Outcome): void {
    const { recipe } = o;
    if (o.grantCapture) {
      this.approved.add(o.grantCapture.id);
      this.claimedNonces.add(o.grantCapture.nonce);
    }
    const path = recipe.route.path;
    if (o.tool) this.act({ fn: o.tool.name, status: o.tool.status, code: o.tool.code, body: o.tool.body });
    else if (recipe.fn === "resource-api") this.act({ fn: resourceAct(recipe.method, path), status: o.status, code: o.code, body: o.body });
    else this.act({ fn: recipe.fn, status: o.status, code: o.code, body: o.body });
    const ok = o.status >= 200 && o.status < 300;
    if (recipe.fn === "process-biovital-enrollment" && ok && o.captureNonce) this.claimedNonces.add(o.captureNonce);
    // a live identification judges the device after the match, so a device refusal has claimed the nonce (D-345)
    if (recipe.fn === "face-identify" && (ok || o.code === "UNAUTHORIZED_DEVICE") && o.captureNonce) this.claimedNonces.add(o.captureNonce);
    if (recipe.fn === "process-biovital-transaction") {
      if (ok && o.carriedDocument && o.subjectRef) this.documentSubjects.add(o.subjectRef);
      if (o.captureNonce && (ok || AUDITED_REFUSALS.has(o.code))) {
        this.claimedNonces.add(o.captureNonce);
        this.auditedNonces.add(o.captureNonce);
      }
    }
    if (recipe.fn === "resource-api" && recipe.method === "POST" && ok && o.captureNonce) {
      // a claim and an attribute answer use their capture as an act; a claim also records it with its receipt
      if (path === "/identity/attributes") this.claimedNonces.add(o.captureNonce);
      if (path === "/identity/claims" && o.status === 201) {
        this.claimedNonces.add(o.captureNonce);
        this.claimNonces.add(o.captureNonce);
        this.claimReceipts.add(o.body.receipt.id);
        this.claimedSubjects.add(o.body.facetoken);
      }
    }
    if (recipe.fn === "hosted-capture" && o.screen) {
      this.hostedNonces.add(o.screen.nonce);
      if (ok) {
        this.hostedEnded.add(uuidOf(o.screen.sessionId));
        this.hostedEndedNonces.add(o.screen.nonce);
      }
    }
    const keyed = recipe.fn === "process-biovital-transaction" || (recipe.fn === "resource-api" && recipe.method === "POST");
    if (keyed && o.idempotencyKey && !o.replayed) {
      const answers = this.idempotencyAnswers.get(`${o.environment} ${o.idempotencyKey}`) ?? new Set();
      this.idempotencyAnswers.set(`${o.environment} ${o.idempotencyKey}`, answers.add(o.status));
    }
  }

  private act({ fn, status, body }: Act): void {
    const ok = status >= 200 && status < 300;
    if (!ok || body === null || typeof body !== "object") return;
    if (fn === "mandate-issue" || fn === "v1 create") this.issued.add(uuidOf(body.mandate_id ?? body.id));
    if ((fn === "mandate-revoke" || fn === "v1 revoke") && (body.already_revoked === false || body.status === "revoked")) {
      this.revoked.add(uuidOf(body.mandate_id ?? body.id));
    }
    if ((fn === "mandate-consume" || fn === "v1 check") && body.allowed === true) this.consumed.add(uuidOf(body.consumption_id));
    if (fn === "alias-availability" && body.reserved === true) this.reservedAliases.add(body.alias);
    if (fn === "process-biovital-enrollment") this.sessionHashes.add(body.session_token_hash);
    if (fn === "process-biovital-transaction") {
      this.approved.add(body.transaction_id);
      if (body.mandate?.consumption_id) this.consumed.add(uuidOf(body.mandate.consumption_id));
    }
    if (fn === "hosted-session-create" && status === 201) this.hostedCreated.add(uuidOf(body.session_id));
    if (fn === "agent-verification-request" && typeof body.verification_id === "string") {
      this.cardsMinted.add(canonicalUuid(body.verification_id.slice(3)) ?? "");
    }
    if (fn === "v1 session" && status === 201) this.hostedCreated.add(uuidOf(body.id));
  }

  /**
   * Every row `after` gained over `before` that no answer accounts for, as `<table>: <row>`.
   * `hosted` is what the sessions that ended with a 200 recorded as their outcome (transaction ids
   * and the identities they enrolled or acted for), `documented` the identities of approved acts
   * that carried a document, `claimed` the identities of the /v1 claims answered 201.
   */
  unattributed(
    before: Ledger,
    after: Ledger,
    hosted: { transactions: Set<string>; identities: Set<string> },
    documented: Set<string>,
    claimed: Set<string>,
  ): string[] {
    const added = (table: string) => [...after[table]].filter((row) => !before[table].has(row));
    const problems: string[] = [];
    const expect = (table: string, attributed: (row: string) => boolean) => {
      for (const row of added(table)) if (!attributed(row)) problems.push(`${table}: ${row}`);
    };
    expect("mandates", (row) => this.issued.has(row));
    expect("revocations", (row) => this.revoked.has(row));
    expect("consumptions", (row) => this.consumed.has(row));
    expect("captures", (row) => {
      const [id, nonce] = row.split(" ");
      return this.approved.has(id) || this.auditedNonces.has(nonce) || this.hostedEndedNonces.has(nonce) || this.claimNonces.has(nonce);
    });
    expect("receipts", (row) => {
      const [captureId, receiptId] = row.split(" ");
      return this.approved.has(captureId) || hosted.transactions.has(captureId) || this.claimReceipts.has(receiptId);
    });
    expect("outbox", (row) => {
      const [, type, subject] = row.split(" ");
      if (type === "mandate.granted") return this.issued.has(uuidOf(subject));
      if (type === "mandate.consumed" || type === "mandate.at_limit") return this.consumed.has(uuidOf(subject));
      if (type === "mandate.revoked") return this.revoked.has(uuidOf(subject));
      if (type === "session.completed") return this.hostedEnded.has(uuidOf(subject));
      return false;
    });
    expect("idempotency", (row) => {
      const [environment, state, status, ...key] = row.split(" ");
      return state === "done" && (this.idempotencyAnswers.get(`${environment} ${key.join(" ")}`)?.has(Number(status)) ?? false);
    });
    expect("aliases", (row) => this.reservedAliases.has(row));
    const newSessions = added("sessions").filter((row) => this.sessionHashes.has(row.split(" ")[0]));
    const enrolled = new Set([...newSessions.map((row) => row.split(" ")[1]), ...hosted.identities, ...claimed]);
    expect(
      "sessions",
      (row) => this.sessionHashes.has(row.split(" ")[0]) || hosted.identities.has(row.split(" ")[1]) || claimed.has(row.split(" ")[1]),
    );
    expect("consents", (row) => enrolled.has(row.split(" ")[1]));
    expect("subjectRefs", (row) => enrolled.has(row.split(" ")[1]));
    expect("captureNonces", (row) => this.claimedNonces.has(row) || this.hostedNonces.has(row));
    expect("documents", (row) => documented.has(row.split(" ")[1]) || hosted.identities.has(row.split(" ")[1]));
    expect("cards", (row) => this.cardsMinted.has(row.split(" ")[0]));
    const cardSessions = new Set(
      added("cards")
        .filter((row) => this.cardsMinted.has(row.split(" ")[0]))
        .map((row) => row.split(" ")[1]),
    );
    expect("hostedSessions", (row) => this.hostedCreated.has(row) || cardSessions.has(row));
    expect("billing", (row) => claimed.has(row) || hosted.identities.has(row));
    for (const row of after.usageDrift) problems.push(`mandate_usage: totals of ${row} differ from its consumptions`);
    return problems;
  }
}

/** The act a /v1 route performs, named for the attribution. */
function resourceAct(method: string, path: string): string {
  if (method !== "POST") return "v1 read";
  if (path === "/mandates") return "v1 create";
  if (path === "/sessions") return "v1 session";
  if (path.endsWith("/revoke")) return "v1 revoke";
  if (path.endsWith("/check")) return "v1 check";
  return "v1 other";
}

/** The identities behind a merchant's pseudonyms. */
export async function identitiesOf(sql: Sql, merchantId: string, subjects: Set<string>): Promise<Set<string>> {
  if (subjects.size === 0) return new Set();
  const rows = await sql<{ identity_id: string }[]>`
    select identity_id::text from private.subject_refs
    where merchant_id = ${merchantId} and subject_ref = any(string_to_array(${[...subjects].join(",")}::text, ','))`;
  return new Set(rows.map((r) => r.identity_id));
}

/** What the hosted sessions that ended with a 200 recorded: their acts' transactions and persons. */
export async function hostedOutcomes(sql: Sql, merchantId: string, ended: Set<string>) {
  const rows = ended.size
    ? await sql<{ transaction_id: string | null; subject_ref: string | null }[]>`
        select result ->> 'transaction_id' as transaction_id, result ->> 'subject_ref' as subject_ref from private.hosted_sessions
        where merchant_id = ${merchantId} and id::text = any(string_to_array(${[...ended].join(",")}::text, ','))`
    : [];
  const subjects = new Set(rows.map((r) => r.subject_ref).filter((s): s is string => !!s));
  return {
    transactions: new Set(rows.map((r) => r.transaction_id).filter((t): t is string => !!t)),
    identities: await identitiesOf(sql, merchantId, subjects),
  };
}
