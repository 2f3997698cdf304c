/**
 * /functions/v1/console: the merchant's console (docs/decisions.md, D-620 to D-624). An owner signs
 * in by proving presence on the hosted screen of the merchant and environment they chose, holds a
 * console session in a `__Host-console-session` cookie (shared/edge/cookie-session.ts), and runs
 * the account from server-rendered pages: every page and action is an adapter over shared/management
 * (and the resource API's own reads) with the owner as the actor. Every route refuses a request
 * from another site; every state-changing one needs the session's CSRF token.
 */

import type { Context, MiddlewareHandler } from "hono";
import * as v from "valibot";
import { FREE_SECONDS, PACED_SECONDS } from "../../shared/contracts/hosted-screen";
import { afterAnswer } from "../../shared/edge/after-answer";
import { type AppEnv, createFunctionApp, depsOf, type ErrorPage } from "../../shared/edge/app";
import { cookieOf, csrfGuard, newBrowserSecret, sameOrigin, sessionCookies, setHostCookie } from "../../shared/edge/cookie-session";
import { sessionPage } from "../../shared/edge/hosted-screen-page";
import { formOf, input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented, type RouteDoc, withDoc } from "../../shared/edge/openapi";
import { contentSecurityPolicy, securePage } from "../../shared/edge/pages";
import { clientAddressBudget, clientIp, type RateLimitRule, rateLimit } from "../../shared/edge/rate-limit";
import { serviceBaseUrl } from "../../shared/kernel/config";
import { ApiError } from "../../shared/kernel/errors";
import { type Locale, type MessageKey, translate } from "../../shared/kernel/i18n";
import { signingKeysOf } from "../../shared/kernel/keys";
import { mountOf } from "../../shared/kernel/registry";
import { parseInput } from "../../shared/kernel/validation";
import { colours, ownAsset, schemes, shape } from "../../shared/lib/screen-theme";
import { canonicalUuid } from "../../shared/lib/uuid";
import { type auditEventSchema, auditExportAnswerSchema } from "../../shared/management/answers";
import { auditExportSchema, auditPageSchema, exportAudit, pageAudit } from "../../shared/management/audit";
import { keyScopes } from "../../shared/management/caller";
import {
  createKey,
  createKeySchema,
  listKeys,
  MAX_ROLL_OVERLAP_SECONDS,
  revokeKey,
  rollKey,
  rollKeySchema,
} from "../../shared/management/keys";
import { revokeMandateAsOwner } from "../../shared/management/mandates";
import {
  authenticateOwnerSession,
  csrfTokenOf,
  endOwnerSession,
  finishOwnerSignIn,
  OWNER_SESSION_TTL_SECONDS,
  OWNER_SIGN_IN_SCREEN_TTL_SECONDS,
  type OwnerSession,
  ownerCaller,
  ownerMerchants,
  startOwnerSignIn,
} from "../../shared/management/owner-sessions";
import { inviteOwner, inviteOwnerSchema, listOwners, removeOwner } from "../../shared/management/owners";
import { consentPageQuerySchema, pageConsents, pageReceipts, receiptPageQuerySchema } from "../../shared/management/read-views";
import { pageSessions, sessionPageQuerySchema } from "../../shared/management/sessions";
import {
  checkTheme,
  draftTheme,
  draftThemeSchema,
  listAssets,
  previewTheme,
  publishTheme,
  readThemes,
  themeAssetSchema,
  uploadAsset,
  uploadAssetSchema,
} from "../../shared/management/themes";
import { checksByDay, readUsage } from "../../shared/management/usage";
import {
  createEndpoint,
  createEndpointSchema,
  listEndpoints,
  pageDeliveries,
  readDelivery,
  readEndpoint,
  replayDelivery,
  rotateSecret,
  rotateSecretSchema,
  sendTestEvent,
  setEndpointStatus,
  updateEndpoint,
  updateEndpointSchema,
  webhookSettingsOf,
} from "../../shared/management/webhooks";
import { mandatePageSchema, pageMandates } from "../../shared/mandates/page";
import { getMandate } from "../../shared/mandates/read";
import { verifyStoredReceipt } from "../../shared/receipts/verify";
import { screenUrl } from "../../shared/sessions/create";
import { fontTokens, surfaces, themeAssetBases } from "../../shared/themes/theme";
import { deliverSoon } from "../../shared/webhooks/run";
import { CONSOLE_CSS, CONSOLE_JS } from "./assets";
import { type Html, html } from "./html";
import {
  type Chrome,
  checkPage,
  checksChart,
  form,
  nextLink,
  type Problem,
  type ProblemKind,
  page,
  problemPage,
  shownOnce,
  signInPage,
  table,
  when,
  words,
} from "./views";

/** The browser's sign-in secret and the owner's console session (D-590, D-621). */
const cookies = sessionCookies("console");

/** Rate limits (D-621): per client address for the sign-in, per session for everything after it. */
export const consoleLimits = {
  signInIp: { name: "console-sign-in-ip", limit: 10, windowSeconds: 600 },
  finishIp: { name: "console-sign-in-finish-ip", limit: 120, windowSeconds: 60 },
  session: { name: "console-session", limit: 240, windowSeconds: 60 },
} as const satisfies Record<string, RateLimitRule>;

type Signed = { Variables: { owner: OwnerSession; csrfToken: string } };
type Env = AppEnv & Signed;

/** Only this origin, for the style sheet, the script, images and the upload; forms post here only. */
const CONSOLE_CONTENT_SECURITY_POLICY = contentSecurityPolicy({
  "script-src": "'self'",
  "style-src": "'self'",
  "img-src": "'self'",
  "connect-src": "'self'",
  "frame-src": "'self'",
  "form-action": "'self'",
});

/**
 * The theme's preview frames (D-670): the hosted screen's own style sheet, the theme's generated
 * one and its fonts, its logo, all from this origin; no script at all; framed by the console only.
 */
const PREVIEW_CONTENT_SECURITY_POLICY = contentSecurityPolicy({
  "style-src": "'self'",
  "img-src": "'self'",
  "font-src": "'self'",
  "frame-ancestors": "'self'",
});

/**
 * The pages' headers: the service's (shared/edge/pages.ts), with one change. Under `no-referrer` a
 * browser sends `Origin: null` with a form's POST, which `sameOrigin` must refuse; `same-origin`
 * keeps the referrer on this origin only and lets the form say where it comes from (D-623).
 */
function secure(headers: Headers, csp = CONSOLE_CONTENT_SECURITY_POLICY): void {
  securePage(headers, { csp, permissions: "camera=(), microphone=(), geolocation=()" });
  headers.set("referrer-policy", "same-origin");
}

const base = mountOf("console");
const ipOf = <E extends AppEnv>(c: Context<E>) => {
  const ip = clientIp(c);
  return ip === "unknown" ? null : ip;
};

/** An HTML answer with the page's headers. */
function htmlAnswer<E extends AppEnv>(c: Context<E>, body: string, status: 200 | 201 = 200): Response {
  const response = c.html(body, status);
  secure(response.headers);
  response.headers.set("content-language", c.var.locale);
  response.headers.set("vary", "accept-language");
  return response;
}

/** After an action: back to a page (303 See Other, with a link for a client that does not follow it), which then reads what changed. */
function seeOther<E extends AppEnv>(c: Context<E>, to: string): Response {
  const response = c.html(html`<!doctype html><title>303</title><a href="${base}${to}">${base}${to}</a>`.text, 303);
  response.headers.set("location", `${base}${to}`);
  secure(response.headers);
  return response;
}

async function sessionFrom<E extends AppEnv>(c: Context<E>): Promise<{ owner: OwnerSession; csrf: string }> {
  const token = cookieOf(c, cookies.session);
  const owner = await authenticateOwnerSession(depsOf(c.var), token);
  return { owner, csrf: await csrfTokenOf(token ?? "") };
}

/**
 * A page's session: without a live one the page is the sign-in page (saying the session ended when
 * the browser still sent a cookie), so following a link after a timeout lands on the sign-in.
 */
const pageSession: MiddlewareHandler<Env> = async function pageSession(c, next) {
  try {
    const { owner, csrf } = await sessionFrom(c);
    c.set("owner", owner);
    c.set("csrfToken", csrf);
  } catch (error) {
    if (!(error instanceof ApiError) || !error.code.startsWith("OWNER_SESSION_")) throw error;
    const t = words(c.var.locale);
    const notice = c.req.query("signed_out")
      ? t("console.signedout")
      : cookieOf(c, cookies.session)
        ? t("console.session.ended")
        : undefined;
    return htmlAnswer(c, signInPage(c.var.locale, base, { notice }));
  }
  await next();
};

/** An action's session: `401 OWNER_SESSION_REQUIRED` / `OWNER_SESSION_EXPIRED` without a live one. */
const actionSession: MiddlewareHandler<Env> = withDoc(
  async function actionSession(c, next) {
    const { owner, csrf } = await sessionFrom(c);
    c.set("owner", owner);
    c.set("csrfToken", csrf);
    await next();
  },
  { answers: ["OWNER_SESSION_REQUIRED", "OWNER_SESSION_EXPIRED"] },
);

const perSession = rateLimit<Env>((c) => ({ rule: consoleLimits.session, identifier: `owner:${c.var.owner.sessionId}` }));
const perIp = (rule: RateLimitRule) => rateLimit((c) => ({ rule, identifier: clientAddressBudget(c) }));
const csrf = csrfGuard<Env>((c) => c.var.owner);

/** The middleware of every page and of every action, in order. */
const pageGuards = [sameOrigin, pageSession, perSession] as const;
const actionGuards = [sameOrigin, actionSession, perSession, csrf] as const;

const caller = <E extends Env>(c: Context<E>) => ownerCaller(c.var.owner, ipOf(c));
const deps = <E extends Env>(c: Context<E>) => depsOf(c.var);
const t = <E extends AppEnv>(c: Context<E>) => words(c.var.locale);

async function chrome<E extends Env>(c: Context<E>, notice?: Html | string): Promise<Chrome> {
  const done = c.req.query("done");
  return {
    locale: c.var.locale,
    base,
    owner: c.var.owner,
    csrf: c.var.csrfToken,
    merchants: await ownerMerchants(deps(c), c.var.owner),
    notice: notice ?? (done ? t(c)("console.done") : undefined),
  };
}

/** A route a person reaches in a browser: its refusals are also pages (D-700). */
const pageDocumented = (doc: RouteDoc) => documented({ ...doc, refusalPages: true });
const pageDoc = (summary: string, answers: Parameters<typeof documented>[0]["answers"] = []) =>
  pageDocumented({ summary, success: { status: 200, description: "The page", contentType: "text/html" }, answers });
const actionDoc = (summary: string, answers: Parameters<typeof documented>[0]["answers"] = []) =>
  pageDocumented({ summary, success: { status: 303, description: "Done: back to the page", contentType: "text/html" }, answers });
const shownDoc = (summary: string, answers: Parameters<typeof documented>[0]["answers"] = []) =>
  pageDocumented({
    summary,
    success: { status: 200, description: "The page, with what is shown once", contentType: "text/html" },
    answers,
  });

/** A form's optional text: absent when empty. */
const optionalText = (max: number) => v.optional(v.pipe(v.string(), v.trim(), v.maxLength(max)));
/** A form field that may repeat (checkboxes): always a list. */
const repeated = <S extends v.GenericSchema>(item: S) =>
  v.optional(
    v.pipe(
      v.union([item, v.array(item)]),
      v.transform((value) => [value].flat() as v.InferOutput<S>[]),
    ),
    [],
  );
/** Event types as one comma-separated field: a list, or null (every type) when empty. */
const eventTypesText = v.pipe(
  v.optional(v.pipe(v.string(), v.maxLength(4000)), ""),
  v.transform((text) => {
    const types = text
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    return types.length ? types : null;
  }),
);

// ---------------------------------------------------------------------------------------------
// Refusals as pages (D-700)
// ---------------------------------------------------------------------------------------------

/** The weight `accept` gives `type` itself (not a wildcard), 0 when it does not name it. */
function acceptWeight(accept: string, type: string): number {
  for (const part of accept.split(",")) {
    const [name, ...params] = part.trim().split(";");
    if (name.trim().toLowerCase() !== type) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const weight = q ? Number(q.slice(2)) : 1;
    return Number.isFinite(weight) ? weight : 0;
  }
  return 0;
}

/**
 * Whether a refusal is answered as a page: when the request names `text/html` in Accept at least as
 * high as `application/json`, as every browser's navigation and form submission does. A client that
 * asks for JSON, or names neither (any type: the page's script's fetch, curl, the tests' HTTP calls), keeps
 * the coded JSON.
 */
export function wantsPage(accept: string | undefined): boolean {
  const page = acceptWeight(accept ?? "", "text/html");
  return page > 0 && page >= acceptWeight(accept ?? "", "application/json");
}

/** What went wrong, by the refusal's code (and its status for the codes not named). */
function problemKind(error: ApiError): ProblemKind {
  switch (error.code) {
    case "OWNER_SESSION_REQUIRED":
    case "OWNER_SESSION_EXPIRED":
      return "session";
    case "CSRF_TOKEN_INVALID":
      return "csrf";
    case "CROSS_SITE_REQUEST":
      return "cross_site";
    case "LAST_OWNER":
      return "last_owner";
    case "not_found":
    case "ROUTE_NOT_FOUND":
    case "METHOD_NOT_ALLOWED":
      return "not_found";
    case "RATE_LIMITED":
      return "busy";
  }
  if (error.status >= 500) return "failed";
  return [400, 413, 422].includes(error.status) ? "input" : "refused";
}

/** The page each action's form is on: an action's path up to its object. */
const PAGE_OF_ACTION: [RegExp, (id: string) => string][] = [
  [/^\/keys(?:\/|$)/, () => "/keys"],
  [/^\/webhooks\/([^/]+)/, (id) => `/webhooks/${id}`],
  [/^\/webhooks\/?$/, () => "/webhooks"],
  [/^\/deliveries\/([^/]+)/, (id) => `/deliveries/${id}`],
  [/^\/mandates\/([^/]+)/, (id) => `/mandates/${id}`],
  [/^\/theme(?:\/|$)/, () => "/theme"],
  [/^\/owners(?:\/|$)/, () => "/owners"],
];

/** The form fields a way back fills in again: what an owner types, short, never a token or a secret (a theme's draft is kept by its own page). */
const KEPT_FIELDS = ["name", "kind", "url", "event_types", "subject_ref", "return_url", "reason", "surface"] as const;
const KEPT_LENGTH = 2048;

const urlOf = (text: string | undefined) => {
  try {
    return text ? new URL(text) : null;
  } catch {
    return null;
  }
};

const segment = (raw: string) => {
  try {
    return encodeURIComponent(decodeURIComponent(raw));
  } catch {
    return "";
  }
};

/**
 * Where the refusal's page leads back to. A form's action: the page the form is on, with what the
 * owner typed in its short fields (the page fills them in again). A page that failed to load: the
 * console page the owner came from (Referer, on this origin only), else the overview. No session:
 * the sign-in. Another site's request: the overview, carrying nothing of it.
 */
async function wayBack(c: Context<AppEnv>, kind: ProblemKind): Promise<Problem["back"]> {
  if (kind === "session") return { href: `${base}/`, label: "sign_in" };
  if (kind === "cross_site") return { href: `${base}/`, label: "home" };
  const path = c.req.path.slice(base.length) || "/";
  if (c.req.method !== "POST") {
    const referer = urlOf(c.req.header("referer"));
    const here = new URL(c.req.url);
    const from = referer && referer.origin === here.origin && referer.pathname.startsWith(`${base}/`) ? referer : null;
    const href = from && from.pathname + from.search !== here.pathname + here.search ? from.pathname + from.search : `${base}/`;
    return { href, label: "back" };
  }
  const match = PAGE_OF_ACTION.map(([pattern, to]) => [pattern.exec(path), to] as const).find(([m]) => m);
  const to = match?.[0] ? match[1](segment(match[0][1] ?? "")) : "/";
  const kept = new URLSearchParams();
  if (/^application\/x-www-form-urlencoded\b/i.test(c.req.header("content-type") ?? "")) {
    const fields = await formOf(c).catch(() => ({}) as Record<string, string | string[]>);
    for (const name of KEPT_FIELDS) {
      const value = fields[name];
      if (typeof value === "string" && value.length > 0 && value.length <= KEPT_LENGTH) kept.set(name, value);
    }
  }
  if (to !== "/theme") kept.delete("surface");
  const query = kept.toString();
  return { href: `${base}${to}${query ? `?${query}` : ""}`, label: "back" };
}

/** A refusal as the console's page, with the refusal's status, for a request that reads pages (D-700). */
const consoleErrorPage: ErrorPage = async (c, error) => {
  if (!wantsPage(c.req.header("accept"))) return undefined;
  const kind = problemKind(error);
  const fields = Array.isArray(error.extra.fields) ? error.extra.fields.filter((f): f is string => typeof f === "string") : [];
  const body = problemPage(c.var.locale, base, {
    kind,
    code: error.code,
    requestId: c.var.requestId,
    detail: error.message,
    fields,
    back: await wayBack(c, kind),
  });
  const response = c.html(body, error.status as 400);
  secure(response.headers);
  response.headers.set("content-language", c.var.locale);
  response.headers.set("vary", "accept, accept-language");
  return response;
};

const app = createFunctionApp("console", { errorPage: consoleErrorPage });
app.use(noStore);

// ---------------------------------------------------------------------------------------------
// Assets
// ---------------------------------------------------------------------------------------------
for (const [file, body, type] of [
  ["console.css", CONSOLE_CSS, "text/css; charset=utf-8"],
  ["console.js", CONSOLE_JS, "text/javascript; charset=utf-8"],
] as const) {
  app.get(
    `/assets/${file}`,
    documented({ summary: `The console's ${file}`, success: { status: 200, description: "The file", contentType: type } }),
    (c) => {
      const response = c.body(body, 200, { "content-type": type });
      secure(response.headers);
      return response;
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Sign-in and the session
// ---------------------------------------------------------------------------------------------
const signInSchema = v.strictObject({
  merchant_id: v.pipe(v.string(), v.trim(), v.maxLength(64)),
  environment: v.picklist(["test", "live"]),
});
const finishSchema = v.strictObject({
  session_id: v.pipe(v.string(), v.maxLength(64)),
  url: v.optional(v.pipe(v.string(), v.maxLength(512))),
});

app.post(
  "/sign-in",
  pageDocumented({
    summary: "Start signing in: the hosted screen to prove presence on, for the merchant and environment chosen",
    success: { status: 200, description: "The check's page, bound to this browser by a cookie", contentType: "text/html" },
    answers: ["not_found"],
  }),
  sameOrigin,
  perIp(consoleLimits.signInIp),
  input("form", signInSchema),
  async (c) => {
    const merchantId = canonicalUuid(c.var.input.merchant_id);
    if (!merchantId) throw new ApiError("not_found");
    const browserSecret = newBrowserSecret();
    const tenant = { merchantId, environment: c.var.input.environment };
    const started = await startOwnerSignIn(depsOf(c.var), tenant, browserSecret, serviceBaseUrl(c.var.config, c.req.url));
    setHostCookie(c, cookies.signIn, browserSecret, OWNER_SIGN_IN_SCREEN_TTL_SECONDS * 3);
    return htmlAnswer(c, checkPage(c.var.locale, base, started));
  },
);

app.post(
  "/sign-in/finish",
  pageDocumented({
    summary: "Finish signing in once the screen identified an owner: the session's cookie, then the overview",
    success: { status: 303, description: "Signed in: the session's cookie, then the overview", contentType: "text/html" },
    alsoAnswers: [
      {
        status: 200,
        description: "Not signed in: the check's page while it is not done, the sign-in page saying why when it failed",
        contentType: "text/html",
      },
    ],
  }),
  sameOrigin,
  perIp(consoleLimits.finishIp),
  input("form", finishSchema),
  async (c) => {
    const screen = screenUrl(serviceBaseUrl(c.var.config, c.req.url), "");
    const url = c.var.input.url?.startsWith(screen) ? c.var.input.url : screen;
    try {
      const signedIn = await finishOwnerSignIn(depsOf(c.var), c.var.input.session_id, cookieOf(c, cookies.signIn) ?? "", ipOf(c));
      setHostCookie(c, cookies.session, signedIn.token, OWNER_SESSION_TTL_SECONDS);
      setHostCookie(c, cookies.signIn, "", 0);
      return seeOther(c, "/");
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.code === "SIGN_IN_PENDING")
        return htmlAnswer(c, checkPage(c.var.locale, base, { session_id: c.var.input.session_id, url }, true));
      if (error.code !== "SIGN_IN_FAILED") throw error;
      const reason = String(error.extra.reason ?? "refused");
      return htmlAnswer(c, signInPage(c.var.locale, base, { notice: `${error.message} (${reason})` }));
    }
  },
);

app.post(
  "/sign-out",
  actionDoc("Sign out of this console session, or (everywhere=1) of every console session of this owner"),
  ...actionGuards,
  input("form", v.strictObject({ everywhere: v.optional(v.literal("1")) })),
  async (c) => {
    await endOwnerSession(deps(c), c.var.owner, c.var.input.everywhere === "1", ipOf(c));
    setHostCookie(c, cookies.session, "", 0);
    return seeOther(c, "/?signed_out=1");
  },
);

// ---------------------------------------------------------------------------------------------
// Overview
// ---------------------------------------------------------------------------------------------
app.get("/", pageDoc("The overview: this month's usage, checks per day, recent failures"), ...pageGuards, async (c) => {
  const tr = t(c);
  const [usage, checks, failedDeliveries] = await Promise.all([
    readUsage(deps(c), c.var.owner, {}),
    checksByDay(deps(c), c.var.owner),
    pageDeliveries(deps(c), caller(c), { state: "failed", limit: 5 }),
  ]);
  const content = html`<section class="card" aria-labelledby="usage-title"><h2 id="usage-title">${tr("console.overview.month", { month: usage.month })}</h2>
<dl class="fields"><div><dt>${tr("console.overview.claims")}</dt><dd id="claims-billed">${usage.claims_billed}</dd></div>
<div><dt>${tr("console.overview.persons")}</dt><dd>${usage.persons_billed}</dd></div>
<div><dt>${tr("console.overview.allowance")}</dt><dd>${usage.allowance_remaining} / ${usage.allowance}</dd></div></dl></section>
<h2>${tr("console.overview.checks")}</h2>
${checksChart(tr, checks.data)}
<h2>${tr("console.overview.failures")}</h2>
${table(
  tr,
  [tr("console.audit.when"), tr("console.audit.action"), tr("console.status")],
  checks.recent_failures.map((f) => [
    html`${when(c.var.locale, f.at)}`,
    html`${f.action}`,
    html`${f.state}${f.reason ? ` (${f.reason})` : ""}`,
  ]),
)}
<h2>${tr("console.overview.deliveries")}</h2>
${table(
  tr,
  [tr("console.created"), tr("console.webhooks.event"), tr("console.status")],
  failedDeliveries.data.map((d) => [
    html`<a href="${base}/deliveries/${String(d.id)}">${when(c.var.locale, d.created_at)}</a>`,
    html`${String((d.event as { type?: string })?.type ?? "")}`,
    html`${String(d.state)}`,
  ]),
)}`;
  return htmlAnswer(c, page(await chrome(c), "overview", content));
});

// ---------------------------------------------------------------------------------------------
// API keys
// ---------------------------------------------------------------------------------------------
async function keysPage<E extends Env>(c: Context<E>, shown?: Html) {
  const tr = t(c);
  const { data } = await listKeys(deps(c), caller(c));
  const rows = data.map((k) => [
    html`<code>${k.hint}</code>${k.name ? html`<br>${k.name}` : null}`,
    html`${k.kind}<br><span class="muted">${k.scopes.join(", ")}</span>`,
    html`${k.status}${k.expires_at ? html`<br><span class="muted">${tr("console.keys.expires")}: ${when(c.var.locale, k.expires_at)}</span>` : null}`,
    html`${when(c.var.locale, k.created_at)}`,
    html`${when(c.var.locale, k.last_used_at)}`,
    k.status === "active"
      ? html`${form(
          chromeOf(c),
          `/keys/${k.id}/roll`,
          html`<label>${tr("console.keys.overlap")}<input type="number" name="overlap_hours" min="0" max="24" value="24" required></label><button type="submit" class="secondary">${tr("console.keys.roll")}</button>`,
          html`class="inline"`,
        )}${form(chromeOf(c), `/keys/${k.id}/revoke`, html`<button type="submit" class="danger">${tr("console.keys.revoke")}</button>`, html`class="inline"`)}`
      : html``,
  ]);
  const content = html`${shown ?? null}
<h2>${tr("console.keys.create")}</h2>
${form(
  chromeOf(c),
  "/keys",
  html`<div class="fields"><label>${tr("console.keys.name")}<input name="name" maxlength="80" value="${kept(c, "name")}"></label>
<label>${tr("console.keys.kind")}<select name="kind"><option value="secret">${tr("console.keys.secret")}</option><option value="publishable"${kept(c, "kind") === "publishable" ? html` selected` : null}>${tr("console.keys.publishable")}</option></select></label>
<fieldset><legend>${tr("console.keys.scopes")}</legend>${keyScopes.map((s) => html`<label><span><input type="checkbox" name="scopes" value="${s}" checked> ${s}</span></label>`)}</fieldset>
<div><button type="submit">${tr("console.keys.create")}</button></div></div>`,
  html`class="card"`,
)}
${table(tr, [tr("console.keys.hint"), tr("console.keys.kind"), tr("console.status"), tr("console.created"), tr("console.keys.last_used"), tr("console.actions")], rows)}`;
  return page(await chrome(c), "keys", content);
}

/** The chrome's form fields only (base and CSRF token), for building forms before the chrome is read. */
const chromeOf = <E extends Env>(c: Context<E>) => ({ base, csrf: c.var.csrfToken });

/** A field's value the way back from a refused action carries in the query (D-700), to fill the form in again. */
const kept = <E extends AppEnv>(c: Context<E>, field: (typeof KEPT_FIELDS)[number]) => c.req.query(field) ?? "";

app.get("/keys", pageDoc("The API keys"), ...pageGuards, async (c) => htmlAnswer(c, await keysPage(c)));

app.post(
  "/keys",
  shownDoc("Create a key: shown once", ["INSUFFICIENT_SCOPE", "INVALID_INPUT"]),
  ...actionGuards,
  input(
    "form",
    v.strictObject({ name: optionalText(80), kind: v.picklist(["secret", "publishable"]), scopes: repeated(v.picklist(keyScopes)) }),
  ),
  async (c) => {
    const { name, kind, scopes } = c.var.input;
    const body = { kind, ...(name ? { name } : {}), ...(kind === "secret" && scopes.length ? { scopes } : {}) };
    const created = await createKey(deps(c), caller(c), parseInput(createKeySchema, body));
    return htmlAnswer(c, await keysPage(c, shownOnce(t(c), "console.keys.shown_once", "new-key", created.secret)));
  },
);

app.post(
  "/keys/:id/roll",
  shownDoc("Roll a key: the new key shown once; the old one stops after the overlap (at most 24 hours)", ["not_found", "KEY_INACTIVE"]),
  ...actionGuards,
  input(
    "form",
    v.strictObject({
      overlap_hours: v.pipe(v.string(), v.regex(/^\d{1,2}$/), v.transform(Number), v.maxValue(MAX_ROLL_OVERLAP_SECONDS / 3600)),
    }),
  ),
  async (c) => {
    const overlap = parseInput(rollKeySchema, { overlap_seconds: c.var.input.overlap_hours * 3600 });
    const rolled = await rollKey(deps(c), caller(c), c.req.param("id"), overlap);
    return htmlAnswer(c, await keysPage(c, shownOnce(t(c), "console.keys.shown_once", "new-key", rolled.secret)));
  },
);

app.post(
  "/keys/:id/revoke",
  actionDoc("Revoke a key at once", ["not_found"]),
  ...actionGuards,
  input("form", v.strictObject({})),
  async (c) => {
    await revokeKey(deps(c), caller(c), c.req.param("id"));
    return seeOther(c, "/keys?done=revoked");
  },
);

// ---------------------------------------------------------------------------------------------
// Webhooks
// ---------------------------------------------------------------------------------------------
const endpointForm = v.strictObject({ url: v.pipe(v.string(), v.trim(), v.maxLength(2048)), event_types: eventTypesText });

async function webhooksPage<E extends Env>(c: Context<E>) {
  const tr = t(c);
  const { data } = await listEndpoints(deps(c), caller(c));
  const rows = data.map((e) => [
    html`<a href="${base}/webhooks/${e.id}">${e.url}</a>`,
    html`${e.event_types ? e.event_types.join(", ") : "*"}`,
    html`${e.status}`,
    html`${e.deliveries.succeeded} ✓ · ${e.deliveries.failed} ✗ · ${e.deliveries.pending} …`,
  ]);
  const content = html`<h2>${tr("console.webhooks.create")}</h2>
${form(
  chromeOf(c),
  "/webhooks",
  html`<div class="fields"><label>${tr("console.webhooks.url")}<input name="url" type="url" required maxlength="2048" placeholder="https://" value="${kept(c, "url")}"></label>
<label>${tr("console.webhooks.events")}<input name="event_types" maxlength="4000" value="${kept(c, "event_types")}"></label>
<div><button type="submit">${tr("console.webhooks.create")}</button></div></div>`,
  html`class="card"`,
)}
${table(tr, [tr("console.webhooks.url"), tr("console.webhooks.events"), tr("console.status"), tr("console.webhooks.deliveries")], rows)}`;
  return page(await chrome(c), "webhooks", content);
}

async function endpointPage<E extends Env>(c: Context<E>, id: string, shown?: Html) {
  const tr = t(c);
  const endpoint = await readEndpoint(deps(c), caller(c), id);
  const deliveries = await pageDeliveries(deps(c), caller(c), { endpoint_id: endpoint.id, limit: 25 });
  const at = `/webhooks/${endpoint.id}`;
  const content = html`${shown ?? null}
<p><a href="${base}/webhooks">← ${tr("console.nav.webhooks")}</a></p>
<dl class="card"><dt>${tr("console.webhooks.url")}</dt><dd><code>${endpoint.url}</code></dd>
<dt>${tr("console.status")}</dt><dd id="endpoint-status">${endpoint.status}</dd>
<dt>${tr("console.webhooks.secrets")}</dt><dd>${endpoint.secrets.map(
    (s) =>
      html`<code>${s.hint}</code>${s.expires_at ? html` (${tr("console.webhooks.secret_until", { when: when(c.var.locale, s.expires_at) })})` : null} `,
  )}</dd></dl>
${form(
  chromeOf(c),
  at,
  html`<div class="fields"><label>${tr("console.webhooks.url")}<input name="url" type="url" required maxlength="2048" value="${kept(c, "url") || endpoint.url}"></label>
<label>${tr("console.webhooks.events")}<input name="event_types" maxlength="4000" value="${kept(c, "event_types") || (endpoint.event_types?.join(", ") ?? "")}"></label>
<div><button type="submit">${tr("console.webhooks.save")}</button></div></div>`,
  html`class="card"`,
)}
<p>${form(chromeOf(c), `${at}/test`, html`<button type="submit" class="secondary">${tr("console.webhooks.test")}</button>`, html`class="inline"`)}
${form(chromeOf(c), `${at}/rotate`, html`<button type="submit" class="secondary">${tr("console.webhooks.rotate")}</button>`, html`class="inline"`)}
${
  endpoint.status === "active"
    ? form(
        chromeOf(c),
        `${at}/disable`,
        html`<button type="submit" class="danger">${tr("console.webhooks.disable")}</button>`,
        html`class="inline"`,
      )
    : form(chromeOf(c), `${at}/enable`, html`<button type="submit">${tr("console.webhooks.enable")}</button>`, html`class="inline"`)
}</p>
<h2>${tr("console.webhooks.deliveries")}</h2>
${table(
  tr,
  [tr("console.created"), tr("console.webhooks.event"), tr("console.status"), tr("console.webhooks.attempts")],
  deliveries.data.map((d) => [
    html`<a href="${base}/deliveries/${String(d.id)}">${when(c.var.locale, d.created_at)}</a>`,
    html`${String((d.event as { type?: string })?.type ?? "")}`,
    html`<span class="delivery-state">${String(d.state)}</span>`,
    html`${String((d.attempts as unknown[]).length)}`,
  ]),
)}`;
  return page(await chrome(c), "webhooks", content, endpoint.url);
}

app.get("/webhooks", pageDoc("The webhook endpoints"), ...pageGuards, async (c) => htmlAnswer(c, await webhooksPage(c)));

app.post(
  "/webhooks",
  shownDoc("Add an endpoint: its signing secret shown once", ["INVALID_INPUT"]),
  ...actionGuards,
  input("form", endpointForm),
  async (c) => {
    const body = parseInput(createEndpointSchema, { url: c.var.input.url, event_types: c.var.input.event_types });
    const created = await createEndpoint(deps(c), caller(c), webhookSettingsOf(c.var.config), body);
    return htmlAnswer(
      c,
      await endpointPage(c, created.id, shownOnce(t(c), "console.webhooks.secret_once", "new-secret", String(created.secret))),
    );
  },
);

app.get("/webhooks/:id", pageDoc("One endpoint and its deliveries", ["not_found"]), ...pageGuards, async (c) =>
  htmlAnswer(c, await endpointPage(c, c.req.param("id"))),
);

app.post(
  "/webhooks/:id",
  actionDoc("Update an endpoint's URL and event types", ["not_found", "INVALID_INPUT"]),
  ...actionGuards,
  input("form", endpointForm),
  async (c) => {
    const body = parseInput(updateEndpointSchema, { url: c.var.input.url, event_types: c.var.input.event_types });
    const updated = await updateEndpoint(deps(c), caller(c), webhookSettingsOf(c.var.config), c.req.param("id"), body);
    return seeOther(c, `/webhooks/${updated.id}?done=updated`);
  },
);

for (const [verb, status] of [
  ["disable", "disabled"],
  ["enable", "active"],
] as const) {
  app.post(
    `/webhooks/:id/${verb}`,
    actionDoc(`${verb} an endpoint`, ["not_found"]),
    ...actionGuards,
    input("form", v.strictObject({})),
    async (c) => {
      const changed = await setEndpointStatus(deps(c), caller(c), c.req.param("id"), status);
      return seeOther(c, `/webhooks/${changed.id}?done=${verb}`);
    },
  );
}

app.post(
  "/webhooks/:id/rotate",
  shownDoc("Rotate an endpoint's secret: the new one shown once, the old one valid 24 hours", ["not_found"]),
  ...actionGuards,
  input("form", v.strictObject({})),
  async (c) => {
    const rotated = await rotateSecret(
      deps(c),
      caller(c),
      webhookSettingsOf(c.var.config),
      c.req.param("id"),
      parseInput(rotateSecretSchema, {}),
    );
    return htmlAnswer(
      c,
      await endpointPage(c, rotated.id, shownOnce(t(c), "console.webhooks.secret_once", "new-secret", String(rotated.secret))),
    );
  },
);

app.post(
  "/webhooks/:id/test",
  actionDoc("Send a test event to an endpoint", ["not_found"]),
  ...actionGuards,
  input("form", v.strictObject({})),
  async (c) => {
    await sendTestEvent(deps(c), caller(c), c.req.param("id"));
    afterAnswer(c, "webhooks", deliverSoon(c.var.owner));
    return seeOther(c, `/webhooks/${c.req.param("id")}?done=test`);
  },
);

app.get("/deliveries/:id", pageDoc("One delivery: its payload and attempts", ["not_found"]), ...pageGuards, async (c) => {
  const tr = t(c);
  const d = await readDelivery(deps(c), caller(c), c.req.param("id"));
  const attempts = d.attempts as Record<string, unknown>[];
  const content = html`<p><a href="${base}/webhooks/${String(d.endpoint_id)}">← ${tr("console.webhooks.endpoint")}</a></p>
<p>${tr("console.status")}: <strong id="delivery-state">${String(d.state)}</strong> · ${String(d.origin)}</p>
${form(chromeOf(c), `/deliveries/${String(d.id)}/resend`, html`<button type="submit">${tr("console.webhooks.resend")}</button>`)}
<h2>${tr("console.webhooks.payload")}</h2>
<pre id="payload" tabindex="0">${JSON.stringify(d.event, null, 2)}</pre>
<h2>${tr("console.webhooks.attempts")}</h2>
${table(
  tr,
  ["#", tr("console.audit.when"), tr("console.status"), "HTTP", "ms", ""],
  attempts.map((a) => [
    html`${String(a.attempt)}`,
    html`${when(c.var.locale, a.attempted_at)}`,
    html`${String(a.outcome)}`,
    html`${String(a.response_status ?? "—")}`,
    html`${String(a.latency_ms ?? "—")}`,
    html`<code>${String(a.error ?? a.response_excerpt ?? "")}</code>`,
  ]),
)}`;
  return htmlAnswer(c, page(await chrome(c), "webhooks", content, `${String((d.event as { type?: string }).type)} · ${String(d.id)}`));
});

app.post(
  "/deliveries/:id/resend",
  actionDoc("Send a delivery's event again to its endpoint", ["not_found"]),
  ...actionGuards,
  input("form", v.strictObject({})),
  async (c) => {
    const delivery = await readDelivery(deps(c), caller(c), c.req.param("id"));
    await replayDelivery(deps(c), caller(c), String(delivery.id));
    afterAnswer(c, "webhooks", deliverSoon(c.var.owner));
    return seeOther(c, `/webhooks/${String(delivery.endpoint_id)}?done=resent`);
  },
);

// ---------------------------------------------------------------------------------------------
// Mandates, hosted sessions, receipts, consents (the resource API's own reads)
// ---------------------------------------------------------------------------------------------
app.get(
  "/mandates",
  pageDoc("The mandates, searched by granter and status"),
  ...pageGuards,
  input("query", mandatePageSchema),
  async (c) => {
    const tr = t(c);
    const query = c.var.input;
    const found = await pageMandates(deps(c), c.var.owner, query);
    const content = html`<form method="get" action="${base}/mandates" class="card"><div class="fields">
<label>${tr("console.mandates.granted_by")}<input name="granted_by" maxlength="128" value="${query.granted_by ?? ""}"></label>
<label>${tr("console.status")}<select name="status"><option value="">—</option>${[
      "active",
      "expired",
      "exhausted",
      "consumed",
      "revoked",
    ].map((s) => html`<option value="${s}"${query.status === s ? html` selected` : null}>${s}</option>`)}</select></label>
<div><button type="submit">${tr("console.filter")}</button></div></div></form>
${table(
  tr,
  ["Id", tr("console.mandates.agent"), tr("console.status"), tr("console.created")],
  (found.data as Record<string, unknown>[]).map((m) => [
    html`<a href="${base}/mandates/${String(m.id)}">${String(m.id)}</a>`,
    html`${String(m.agent_display_name ?? m.granted_to)}`,
    html`${String(m.status)}`,
    html`${when(c.var.locale, m.created_at)}`,
  ]),
)}
${nextLink(tr, `${base}/mandates`, found.next_cursor, query)}`;
    return htmlAnswer(c, page(await chrome(c), "mandates", content));
  },
);

app.get("/mandates/:id", pageDoc("One mandate and its consumptions", ["not_found"]), ...pageGuards, async (c) => {
  const tr = t(c);
  const mandate = (await getMandate(deps(c), c.var.owner, c.req.param("id"))) as unknown as Record<string, unknown>;
  const consumptions = (mandate.consumptions ?? []) as Record<string, unknown>[];
  const id = String(mandate.mandate_id ?? mandate.id);
  const content = html`<p><a href="${base}/mandates">← ${tr("console.nav.mandates")}</a></p>
<p>${tr("console.status")}: <strong id="mandate-status">${String(mandate.status)}</strong></p>
${
  mandate.status === "active"
    ? form(
        chromeOf(c),
        `/mandates/${id}/revoke`,
        html`<label>Reason<input name="reason" maxlength="500" value="${kept(c, "reason")}"></label> <button type="submit" class="danger">${tr("console.mandates.revoke")}</button>`,
        html`class="inline"`,
      )
    : null
}
<h2>${tr("console.mandates.consumptions")}</h2>
${table(
  tr,
  ["Id", tr("console.audit.when"), "Amount"],
  consumptions.map((k) => [
    html`${String(k.consumption_id)}`,
    html`${when(c.var.locale, k.consumed_at ?? k.created_at)}`,
    html`${String(k.amount ?? "—")} ${String(k.currency ?? "")}`,
  ]),
)}
<h2>JSON</h2><pre tabindex="0">${JSON.stringify(mandate, null, 2)}</pre>`;
  return htmlAnswer(c, page(await chrome(c), "mandates", content, id));
});

app.post(
  "/mandates/:id/revoke",
  actionDoc("Revoke a mandate at once, as its issuer", ["not_found"]),
  ...actionGuards,
  input("form", v.strictObject({ reason: optionalText(500) })),
  async (c) => {
    const revoked = await revokeMandateAsOwner(deps(c), caller(c), c.req.param("id"), c.var.input.reason || undefined);
    afterAnswer(c, "webhooks", deliverSoon(c.var.owner));
    return seeOther(c, `/mandates/${String(revoked.mandate_id)}?done=revoked`);
  },
);

app.get("/sessions", pageDoc("The hosted sessions"), ...pageGuards, input("query", sessionPageQuerySchema), async (c) => {
  const tr = t(c);
  const found = await pageSessions(deps(c), c.var.owner, c.var.input);
  const content = html`${table(
    tr,
    ["Id", "Mode", tr("console.status"), tr("console.created")],
    (found.data as Record<string, unknown>[]).map((s) => [
      html`<code>${String(s.id)}</code>`,
      html`${String(s.mode)}`,
      html`${String(s.status)}`,
      html`${when(c.var.locale, s.created_at)}`,
    ]),
  )}${nextLink(tr, `${base}/sessions`, found.next_cursor, c.var.input)}`;
  return htmlAnswer(c, page(await chrome(c), "sessions", content));
});

app.get(
  "/receipts",
  pageDoc("The receipts, and a receipt verified", ["not_found"]),
  ...pageGuards,
  input("query", v.strictObject({ ...receiptPageQuerySchema.entries, verify: v.optional(v.pipe(v.string(), v.maxLength(128))) })),
  async (c) => {
    const tr = t(c);
    const { verify, ...query } = c.var.input;
    const found = await pageReceipts(deps(c), c.var.owner, query);
    let verdict: Html | null = null;
    if (verify) {
      const { jwks } = await signingKeysOf(c.var.config);
      const uuid = canonicalUuid(verify);
      const checked = await verifyStoredReceipt(deps(c), jwks, uuid ? { id: uuid } : { code: verify });
      verdict = html`<div class="card ${checked.valid ? "notice" : "error"}" role="status" id="verdict"><p>${checked.valid ? tr("console.receipts.valid") : tr("console.receipts.invalid")}</p><pre tabindex="0">${JSON.stringify(checked, null, 2)}</pre></div>`;
    }
    const content = html`${verdict}${table(
      tr,
      ["Id", tr("console.audit.action"), tr("console.audit.when"), ""],
      (found.data as Record<string, unknown>[]).map((r) => [
        html`<code>${String(r.code ?? r.id)}</code>`,
        html`${String(r.action)}`,
        html`${when(c.var.locale, r.issued_at)}`,
        html`<a href="${base}/receipts?verify=${encodeURIComponent(String(r.id))}">${tr("console.receipts.verify")}</a>`,
      ]),
    )}${nextLink(tr, `${base}/receipts`, found.next_cursor, query)}`;
    return htmlAnswer(c, page(await chrome(c), "receipts", content));
  },
);

app.get("/consents", pageDoc("The consents"), ...pageGuards, input("query", consentPageQuerySchema), async (c) => {
  const tr = t(c);
  const found = await pageConsents(deps(c), c.var.owner, c.var.input);
  const content = html`${table(
    tr,
    ["Id", "Person", tr("console.status"), tr("console.created")],
    (found.data as Record<string, unknown>[]).map((k) => [
      html`<code>${String(k.id)}</code>`,
      html`<code>${String(k.facetoken ?? "")}</code>`,
      html`${String(k.status)}`,
      html`${when(c.var.locale, k.granted_at ?? k.created_at)}`,
    ]),
  )}${nextLink(tr, `${base}/consents`, found.next_cursor, c.var.input)}`;
  return htmlAnswer(c, page(await chrome(c), "consents", content));
});

// ---------------------------------------------------------------------------------------------
// Theme
// ---------------------------------------------------------------------------------------------
const assetBases = <E extends AppEnv>(c: Context<E>) =>
  themeAssetBases(c.var.config.THEME_ASSETS_BASE_URL, serviceBaseUrl(c.var.config, c.req.url));
const surfaceQuery = v.strictObject({
  surface: v.optional(v.picklist(surfaces), "capture"),
  done: v.optional(v.string()),
  uploaded: v.optional(v.string()),
});

async function themePage<E extends Env>(c: Context<E>, surface: (typeof surfaces)[number], extra?: Html, text?: string) {
  const tr = t(c);
  const [themes, assets] = await Promise.all([
    readThemes(deps(c), caller(c), surface),
    listAssets(deps(c), caller(c), assetBases(c).uploads),
  ]);
  const problems: string[] = themes.draft?.problems ?? [];
  const draftText = text ?? JSON.stringify(themes.draft?.theme ?? themes.published?.theme ?? {}, null, 2);
  // The hosted screen's introduction as the draft would dress it, once per scheme (D-670); a new draft reloads the page, so the frames.
  const frames = themes.draft
    ? html`<div class="preview">${schemes.map(
        (scheme) =>
          html`<figure><figcaption>${tr(`console.theme.scheme.${scheme}`)}</figcaption><iframe src="${base}/theme/preview?surface=${surface}&amp;scheme=${scheme}" title="${tr("console.theme.preview")}: ${tr(`console.theme.scheme.${scheme}`)}"></iframe></figure>`,
      )}</div>`
    : html`<p class="muted">${tr("console.theme.no_draft")}</p>`;
  const content = html`<nav aria-label="${tr("console.theme.surface")}"><ul>${surfaces.map(
    (s) => html`<li><a href="${base}/theme?surface=${s}"${s === surface ? html` aria-current="page"` : null}>${s}</a></li>`,
  )}</ul></nav>
${extra ?? null}
<p>${tr("console.theme.published")}: ${themes.published ? html`v${themes.published.version} (${themes.published.valid ? "✓" : "✗"})` : "—"}</p>
${form(
  chromeOf(c),
  "/theme/draft",
  html`<input type="hidden" name="surface" value="${surface}"><label>${tr("console.theme.draft")}<textarea name="theme" id="theme-draft" spellcheck="false">${draftText}</textarea></label>
<p><button type="submit" name="intent" value="validate" class="secondary">${tr("console.theme.validate")}</button>
<button type="submit" name="intent" value="save">${tr("console.theme.save")}</button>
<button type="submit" name="intent" value="publish">${tr("console.theme.publish")}</button></p>`,
  html`class="card"`,
)}
${problems.length ? html`<div class="card error"><p>${tr("console.theme.problems")}</p><ul>${problems.map((p: string) => html`<li>${p}</li>`)}</ul></div>` : null}
<h2>${tr("console.theme.upload")}</h2>
<p id="upload-needs-script" class="muted">${tr("console.theme.upload_needs_script")}</p>
<form id="upload" class="card inline" hidden><label>${tr("console.theme.upload")}<input type="file" name="file" accept="image/png,image/jpeg,image/webp,image/svg+xml" required></label><button type="submit">${tr("console.theme.upload_go")}</button><span id="upload-status" role="status"></span></form>
<h2>${tr("console.theme.assets")}</h2>
${table(
  tr,
  ["Id", "Type", ""],
  assets.data.map((a) => [
    html`<code>${a.id}</code>`,
    html`${a.kind} · ${a.content_type}`,
    a.kind === "logo" ? html`<img src="${a.url}" alt="${a.id}">` : html``,
  ]),
)}
<h2>${tr("console.theme.preview")}</h2>
${themes.draft ? html`<p class="muted" id="preview-intro">${tr(`console.theme.intro.${surface}`)}</p>` : null}
${frames}`;
  return page(await chrome(c), "theme", content);
}

app.get(
  "/theme",
  pageDoc("The theme: draft, validation, preview, publication, uploads"),
  ...pageGuards,
  input("query", surfaceQuery),
  async (c) => htmlAnswer(c, await themePage(c, c.var.input.surface)),
);

const previewQuery = v.strictObject({ surface: v.picklist(surfaces), scheme: v.picklist(schemes) });

/** A CSS value the generated style sheet may hold: a theme's colours, radii, weights and font families, nothing that ends a declaration. */
const CSS_VALUE = /^[^;{}<>\\]*$/;

/** The draft as the hosted screen would receive it, and the service's origin, whose logos and fonts alone it loads. */
async function draftPreview<E extends Env>(c: Context<E>, surface: (typeof surfaces)[number]) {
  const preview = await previewTheme(deps(c), caller(c), surface, assetBases(c));
  return {
    ...preview,
    theme: preview.theme as Record<string, string | number>,
    origin: new URL(serviceBaseUrl(c.var.config, c.req.url)).origin,
  };
}

/** An example mandate's terms for the preview: an agent named by the merchant, one scope, a monthly count, thirty days. */
const PREVIEW_MANDATE = { scope: "purchase", count: 5, days: 30 } as const;

/**
 * The introduction each surface's preview shows (D-701), as the hosted screen words it
 * (client/screen/modes.ts): the capture surface on a sign-in's, the mandate surface on a mandate
 * session's (its title naming the agent, its lead, and its terms: the agent, what it may do, the
 * limit, until when) for an example mandate.
 */
function introOf(surface: (typeof surfaces)[number], locale: Locale, merchant: string, now: Date) {
  const m = (key: MessageKey, params?: Record<string, string | number>) => translate(locale, key, params);
  if (surface === "capture")
    return { title: m("screen.mode.login.title", { merchant }), lead: m("screen.mode.login.lead", { merchant }), terms: [] };
  const agent = m("console.theme.example_agent");
  const { scope, count, days } = PREVIEW_MANDATE;
  const until = new Date(now.getTime() + days * 86_400_000);
  const plural = new Intl.PluralRules(locale).select(count) === "one" ? "one" : "other";
  return {
    title: m("screen.mode.mandate.title", { agent }),
    lead: m("screen.mode.mandate.lead", { merchant, agent }),
    terms: [
      { label: m("screen.detail.agent"), value: agent },
      { label: m("screen.detail.scopes"), value: m(`scope.${scope}.label`) },
      {
        label: m("screen.detail.ceiling"),
        value: m("screen.mandate.period.month", { limit: m(`screen.mandate.count.${plural}`, { count }) }),
      },
      {
        label: m("screen.detail.until"),
        value: new Intl.DateTimeFormat(locale, { dateStyle: "long", timeStyle: "short", timeZone: "UTC" }).format(until),
      },
    ],
  };
}

app.get(
  "/theme/preview",
  pageDoc("The hosted screen's introduction in the draft theme, for one colour scheme (the theme page frames it)", ["not_found"]),
  ...pageGuards,
  input("query", previewQuery),
  async (c) => {
    const { surface, scheme } = c.var.input;
    const { theme, customized, origin } = await draftPreview(c, surface);
    const locale = c.var.locale;
    // The screen's own display name rule (shared/sessions/screen.ts): the theme's brand name once it is served.
    const merchant = customized && typeof theme.brand_name === "string" ? theme.brand_name : c.var.owner.merchantName;
    const fonts = fontTokens.map((token) => ownAsset(theme[token], origin)).filter((href): href is string => href !== null);
    const body = sessionPage(locale, `${mountOf("hosted-capture")}/assets/`, {
      brand: merchant,
      logo: ownAsset(theme.logo_square_url, origin),
      ...introOf(surface, locale, merchant, c.var.now),
      why: translate(locale, "screen.why.body", { seconds: FREE_SECONDS }),
      paced: translate(locale, "screen.paced.label", { seconds: PACED_SECONDS }),
      stylesheets: [...fonts, `${base}/theme/preview.css?surface=${surface}&scheme=${scheme}`],
    });
    const response = htmlAnswer(c, body);
    secure(response.headers, PREVIEW_CONTENT_SECURITY_POLICY);
    return response;
  },
);

app.get(
  "/theme/preview.css",
  documented({
    summary: "The draft theme's custom properties for one colour scheme, as the hosted screen sets them (the preview's style sheet)",
    success: { status: 200, description: "The style sheet", contentType: "text/css" },
    answers: ["not_found"],
  }),
  // A style sheet, not a page: without a session it is refused as an action is, never answered with the sign-in page.
  sameOrigin,
  actionSession,
  perSession,
  input("query", previewQuery),
  async (c) => {
    const { surface, scheme } = c.var.input;
    const { theme } = await draftPreview(c, surface);
    const properties = Object.entries({ ...shape(theme), ...colours(theme, scheme) }).filter(([, value]) => CSS_VALUE.test(value));
    const css = `:root { color-scheme: ${scheme}; ${properties.map(([name, value]) => `${name}: ${value};`).join(" ")} }\n`;
    const response = c.body(css, 200, { "content-type": "text/css; charset=utf-8" });
    secure(response.headers, PREVIEW_CONTENT_SECURITY_POLICY);
    return response;
  },
);

const themeDraftForm = v.strictObject({
  surface: v.picklist(surfaces),
  theme: v.pipe(v.string(), v.maxLength(64 * 1024)),
  intent: v.picklist(["validate", "save", "publish"]),
});

app.post(
  "/theme/draft",
  pageDocumented({
    summary: "Validate, save or publish the draft of a surface",
    success: { status: 200, description: "The theme page, saying what happened", contentType: "text/html" },
    answers: ["INVALID_INPUT", "THEME_INVALID", "not_found", "THEME_DRAFT_CHANGED"],
  }),
  ...actionGuards,
  input("form", themeDraftForm),
  async (c) => {
    try {
      return await themeDraft(c, c.var.input);
    } catch (error) {
      // A refused draft comes back on the theme page itself, with what was written kept in the editor (D-700).
      if (!(error instanceof ApiError) || !wantsPage(c.req.header("accept")) || error.status >= 500) throw error;
      const { surface, theme: text } = c.var.input;
      const tr = t(c);
      const problems = Array.isArray(error.extra.problems) ? error.extra.problems.map(String) : [];
      const extra = html`<div class="card error" id="problem" role="alert" tabindex="-1" autofocus><p>${tr(`console.problem.${problemKind(error)}` as MessageKey)}</p>${problems.length ? html`<ul>${problems.map((p) => html`<li>${p}</li>`)}</ul>` : null}<p>${tr("console.problem.code")}: <code>${error.code}</code> · <code>${c.var.requestId}</code></p><p class="muted" lang="en">${error.message}</p></div>`;
      const response = htmlAnswer(c, await themePage(c, surface, extra, text));
      return new Response(response.body, { status: error.status, headers: response.headers });
    }
  },
);

/** Validates, saves or publishes the draft written in the theme page's form. */
async function themeDraft<E extends Env>(c: Context<E>, form: v.InferOutput<typeof themeDraftForm>) {
  const { surface, theme: text, intent } = form;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError("INVALID_INPUT", { fields: ["theme"] }, "theme: not JSON");
  }
  const body = parseInput(draftThemeSchema, { theme: parsed });
  const tr = t(c);
  if (intent === "validate") {
    const verdict = checkTheme(surface, body.theme);
    const extra = verdict.valid
      ? html`<p class="card notice" role="status">${tr("console.theme.valid")}</p>`
      : html`<div class="card error" role="status"><p>${tr("console.theme.problems")}</p><ul>${verdict.problems.map((p) => html`<li>${p}</li>`)}</ul></div>`;
    return htmlAnswer(c, await themePage(c, surface, extra, text));
  }
  await draftTheme(deps(c), caller(c), surface, body);
  if (intent === "publish") await publishTheme(deps(c), caller(c), surface);
  return htmlAnswer(c, await themePage(c, surface, html`<p class="card notice" role="status">${tr("console.done")}</p>`));
}

app.post(
  "/theme/assets",
  documented({
    summary: "Upload a logo or a font (the page's script sends the file as /v1/theme_assets takes it)",
    success: { status: 201, description: "The stored file", schema: themeAssetSchema },
    answers: ["ASSET_INVALID"],
  }),
  ...actionGuards,
  input("json", uploadAssetSchema),
  async (c) => c.json(await uploadAsset(deps(c), caller(c), c.var.input, assetBases(c).uploads), 201),
);

// ---------------------------------------------------------------------------------------------
// Owners
// ---------------------------------------------------------------------------------------------
async function ownersPage<E extends Env>(c: Context<E>, shown?: Html) {
  const tr = t(c);
  const owners = await listOwners(deps(c), c.var.owner);
  const me = c.var.owner.subjectRef;
  const returnUrl = serviceBaseUrl(c.var.config, c.req.url).startsWith("https://")
    ? `${serviceBaseUrl(c.var.config, c.req.url)}${base}/owners`
    : "";
  const content = html`${shown ?? null}
<h2>${tr("console.owners.invite")}</h2>
${form(
  chromeOf(c),
  "/owners/invite",
  html`<div class="fields"><label>${tr("console.owners.subject")}<input name="subject_ref" required pattern="sub_[0-9a-f]{48}" maxlength="52" value="${kept(c, "subject_ref")}"></label>
<label>Return URL (https)<input name="return_url" type="url" required value="${kept(c, "return_url") || returnUrl}"></label>
<div><button type="submit">${tr("console.owners.invite")}</button></div></div>`,
  html`class="card"`,
)}
${table(
  tr,
  ["subject_ref", tr("console.owners.added"), tr("console.actions")],
  owners.data.map((o) => [
    html`<code>${o.subject_ref}</code> ${o.subject_ref === me ? tr("console.owners.you") : ""}`,
    html`${when(c.var.locale, o.added_at)}`,
    owners.data.length > 1
      ? form(
          chromeOf(c),
          `/owners/${o.subject_ref}/remove`,
          html`<button type="submit" class="danger">${tr("console.owners.remove")}</button>`,
          html`class="inline"`,
        )
      : html``,
  ]),
)}
<h2>${tr("console.owners.invitations")}</h2>
${table(
  tr,
  ["subject_ref", tr("console.status"), tr("console.created")],
  (owners.invitations as Record<string, unknown>[]).map((i) => [
    html`<code>${String(i.subject_ref)}</code>`,
    html`${String(i.status)}`,
    html`${when(c.var.locale, i.created_at)}`,
  ]),
)}`;
  return page(await chrome(c), "owners", content);
}

app.get("/owners", pageDoc("The owners and invitations"), ...pageGuards, async (c) => htmlAnswer(c, await ownersPage(c)));

app.post(
  "/owners/invite",
  shownDoc("Invite a person to own the account: the link they accept by proving presence, shown once", [
    "INVALID_INPUT",
    "INVALID_RETURN_URL",
  ]),
  ...actionGuards,
  input(
    "form",
    v.strictObject({
      subject_ref: v.pipe(v.string(), v.trim(), v.maxLength(64)),
      return_url: v.pipe(v.string(), v.trim(), v.maxLength(2048)),
    }),
  ),
  async (c) => {
    const body = parseInput(inviteOwnerSchema, {
      subject_ref: c.var.input.subject_ref,
      return_url: c.var.input.return_url,
      locale: c.var.locale,
    });
    const invited = await inviteOwner(deps(c), caller(c), body, serviceBaseUrl(c.var.config, c.req.url));
    const tr = t(c);
    return htmlAnswer(
      c,
      await ownersPage(
        c,
        html`<div class="card notice" role="status"><p>${tr("console.owners.accept")}</p><p class="secret" id="invitation-url">${invited.url}</p></div>`,
      ),
    );
  },
);

app.post(
  "/owners/:subject_ref/remove",
  actionDoc("Remove an owner (never the last one)", ["not_found", "LAST_OWNER"]),
  ...actionGuards,
  input("form", v.strictObject({})),
  async (c) => {
    await removeOwner(deps(c), caller(c), c.req.param("subject_ref"));
    return seeOther(c, "/owners?done=removed");
  },
);

// ---------------------------------------------------------------------------------------------
// Audit log
// ---------------------------------------------------------------------------------------------
app.get("/audit", pageDoc("The audit log"), ...pageGuards, input("query", auditPageSchema), async (c) => {
  const tr = t(c);
  const found = await pageAudit(deps(c), c.var.owner, c.var.input);
  const content = html`<p><a class="button" href="${base}/audit/export">${tr("console.audit.export")}</a></p>
${table(
  tr,
  [tr("console.audit.when"), tr("console.audit.actor"), tr("console.audit.action"), tr("console.audit.object")],
  (found.data as v.InferOutput<typeof auditEventSchema>[]).map((a) => [
    html`${when(c.var.locale, a.occurred_at)}`,
    html`${a.actor.kind}: <code>${a.actor.id}</code>`,
    html`<code class="audit-action">${a.action}</code>`,
    html`${a.object_type} <code>${a.object_id ?? ""}</code>`,
  ]),
)}${nextLink(tr, `${base}/audit`, found.next_cursor, c.var.input)}`;
  return htmlAnswer(c, page(await chrome(c), "audit", content));
});

app.get(
  "/audit/export",
  pageDocumented({
    summary: "The audit log as a JSON file",
    success: { status: 200, description: "The file (as GET /v1/audit_events/export)", schema: auditExportAnswerSchema },
  }),
  sameOrigin,
  actionSession,
  perSession,
  input("query", auditExportSchema),
  async (c) => {
    const exported = await exportAudit(deps(c), c.var.owner, c.var.input);
    c.header("content-disposition", `attachment; filename="audit-${c.var.owner.environment}.json"`);
    return c.json(exported);
  },
);

export default app;
