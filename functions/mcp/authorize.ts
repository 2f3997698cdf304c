/**
 * The authorization endpoint (`/functions/v1/mcp/oauth/authorize`): an owner of a merchant signs in
 * (a first-party session token, or by proving presence on a hosted login session) and approves or
 * denies the agent on a consent screen (pages.ts). Everything else of OAuth is the provider's (oauth.ts).
 */
import { AuthorizationError, CimdFetchError } from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { finishPresenceSignIn, type SignInBinding, startPresenceSignIn } from "../../shared/agents/sign-in";
import { type AppEnv, depsOf } from "../../shared/edge/app";
import { newBrowserSecret } from "../../shared/edge/cookie-session";
import { bearerOf, mintUserJwt, userPrincipal } from "../../shared/kernel/authenticate";
import { rpc } from "../../shared/kernel/db/rpc";
import { ApiError } from "../../shared/kernel/errors";
import { signingKeysOf } from "../../shared/kernel/keys";
import type { UserPrincipal } from "../../shared/kernel/principal";
import { canonicalUuid } from "../../shared/lib/uuid";
import { merchantTheme } from "../../shared/themes/merchant-theme";
import { themeAssetBases } from "../../shared/themes/theme";
import { type AgentGrant, authorizationServer, baseOf, type OAuthApi, oauthEnv } from "./oauth";
import { consentPage, errorPage, presencePage, signInPage } from "./pages";
import { agentScopes } from "./tools";

const NOT_A_FORM = "The request is not a form (application/x-www-form-urlencoded or multipart/form-data).";

/** GET and POST: the sign-in page, the consent screen, or the decision's redirect to the client. */
export async function authorize(c: Context<AppEnv>): Promise<Response> {
  const oauth = authorizationServer(baseOf(c)).getOAuthApi(oauthEnv(c));
  const html = (p: { html: string; headers: Headers }, status = 200) => new Response(p.html, { status, headers: p.headers });
  try {
    // The sign-in and consent forms post back here; a body that is no form is a broken request, not a fault.
    const form = c.req.method === "POST" ? await c.req.formData().catch(() => null) : null;
    if (c.req.method === "POST" && !form) return html(errorPage(c.var.locale, NOT_A_FORM), 400);
    // The authorization request travels in the URL's query, also when the forms post back to it:
    // judged (client, redirect URI, resource, PKCE) before anyone is asked to sign in.
    const request = await oauth.parseAuthRequest(new Request(c.req.url));
    if (form?.get("sign_in") === "presence") return await startPresence(c, form);
    const presence = form?.get("presence_session");
    const signedIn = typeof presence === "string" ? await presenceSignIn(c, presence) : null;
    if (signedIn instanceof Response) return signedIn;
    const token = signedIn ?? (form ? String(form.get("session_token") ?? "") : bearerOf(c.req.header("authorization")));
    if (!token) return html(signInPage(c.var.locale));
    const owner = await userPrincipal(await signingKeysOf(c.var.config), token, c.var.now).catch(() => null);
    if (!owner) return html(signInPage(c.var.locale, "agent.signin.invalid"), 401);
    const { merchants } = await rpc(c.var.db(), "merchant_owned", { identity_id: owner.identityId, environment: owner.environment });
    if (merchants.length === 0) return html(signInPage(c.var.locale, "agent.signin.not_owner"), 403);

    const handle = form?.get("handle");
    if (typeof handle === "string") return await decide(c, oauth, form!, handle, owner, merchants);

    const details = await oauth.describeConsent(request);
    const consent = await oauth.beginConsent(request);
    const bases = themeAssetBases(c.var.config.THEME_ASSETS_BASE_URL, baseOf(c));
    const first = { merchantId: merchants[0].merchant_id, environment: owner.environment };
    const { theme, customized } = await merchantTheme(depsOf(c.var), first, { merchant_id: first.merchantId, surface: "mandate" }, bases);
    const page = consentPage(c.var.locale, {
      agentName: details.clientName,
      agentDomain: details.clientDomain ?? null,
      redirectHost: details.redirectHost,
      redirectOrigin: new URL(details.redirectUri).origin,
      redirectIsLoopback: details.redirectIsLoopback,
      merchants,
      scopes: offeredScopes(request.scope),
      handle: consent.handle,
      sessionToken: token,
      theme: theme as Record<string, string | number | null>,
      // The business by the brand it published, else by its name (the default theme's brand is the service's).
      brand: customized ? String(theme.brand_name) : merchants[0].name,
    });
    consent.headers.forEach((value, name) => {
      if (name.toLowerCase() === "set-cookie") page.headers.append(name, value);
    });
    return html(page);
  } catch (error) {
    if (error instanceof AuthorizationError && error.redirectTo) return c.redirect(error.redirectTo, 302);
    if (error instanceof AuthorizationError) return html(errorPage(c.var.locale, error.description ?? error.code), 400);
    if (error instanceof CimdFetchError) return html(errorPage(c.var.locale, error.message), 400);
    throw error;
  }
}

/**
 * The scopes the consent screen offers: those requested that the server knows, or, for a request
 * that names none of them (OAuth lets a client leave `scope` out), every scope the server
 * advertises, each for the owner to untick.
 */
function offeredScopes(requested: readonly string[]): readonly string[] {
  const known = requested.filter((scope) => (agentScopes as readonly string[]).includes(scope));
  return known.length > 0 ? known : agentScopes;
}

/** The browser's sign-in cookie: host-only, never sent cross-site, as long as a hosted session may last. */
const SIGN_IN_COOKIE = "__Host-agent-sign-in";
const SIGN_IN_COOKIE_MAX_AGE_SECONDS = 900;
/** A presence sign-in hands the consent step a first-party session of the owner, as long as the consent handle lasts. */
const PRESENCE_SESSION_TTL_SECONDS = 600;

/** What a sign-in by presence is bound to: this request (the URL's query, which every form posts back to) and this browser. */
function signInBinding(c: Context<AppEnv>, browserSecret: string): SignInBinding {
  return { request: new URL(c.req.url).search, browserSecret };
}

const pageResponse = (p: { html: string; headers: Headers }, status = 200) => new Response(p.html, { status, headers: p.headers });

/**
 * Sign-in by proving presence, first step: opens a hosted login session of the business named (its
 * owners only), bound to this request and to a fresh secret in this browser's cookie.
 */
async function startPresence(c: Context<AppEnv>, form: FormData): Promise<Response> {
  const merchantId = canonicalUuid(String(form.get("merchant_id") ?? "").trim());
  const environment = form.get("environment") === "test" ? "test" : "live";
  if (!merchantId) return pageResponse(signInPage(c.var.locale, "agent.signin.presence.no_owner"), 404);
  const browserSecret = newBrowserSecret();
  const deps = depsOf(c.var);
  const started = await startPresenceSignIn(deps, { merchantId, environment }, signInBinding(c, browserSecret), baseOf(c));
  if (!started) return pageResponse(signInPage(c.var.locale, "agent.signin.presence.no_owner"), 404);
  const page = presencePage(c.var.locale, { screenUrl: started.url, sessionId: started.sessionId });
  page.headers.append(
    "set-cookie",
    `${SIGN_IN_COOKIE}=${browserSecret}; Max-Age=${SIGN_IN_COOKIE_MAX_AGE_SECONDS}; Path=/; Secure; HttpOnly; SameSite=Strict`,
  );
  return pageResponse(page);
}

/**
 * Sign-in by proving presence, second step: the owner the hosted session identified, as a short
 * first-party session token (the consent form carries it, as it carries an app's), or the page to
 * show instead (not done yet, refused, used, another request or browser).
 */
async function presenceSignIn(c: Context<AppEnv>, sessionId: string): Promise<string | Response> {
  const browserSecret = getCookie(c, SIGN_IN_COOKIE) ?? "";
  const result = await finishPresenceSignIn(depsOf(c.var), sessionId, signInBinding(c, browserSecret));
  if (result.signed_in) {
    const tenant = { merchantId: result.merchant_id, environment: result.environment };
    return mintUserJwt(await signingKeysOf(c.var.config), result.identity_id, tenant, c.var.now, PRESENCE_SESSION_TTL_SECONDS);
  }
  if (result.reason === "pending") {
    return pageResponse(presencePage(c.var.locale, { screenUrl: null, sessionId }, "agent.signin.presence.pending"), 409);
  }
  if (result.reason === "not_owner") return pageResponse(signInPage(c.var.locale, "agent.signin.not_owner"), 403);
  return pageResponse(signInPage(c.var.locale, "agent.signin.presence.failed"), 401);
}

/**
 * Approve or deny: the grant names the owner and the business chosen, and only scopes the owner
 * ticked. Every access needs `mandates:read`: an approval without it (nothing ticked, or writing
 * alone) would be a token that can do nothing, so it is a deny.
 */
async function decide(
  c: Context<AppEnv>,
  oauth: OAuthApi,
  form: FormData,
  handle: string,
  owner: UserPrincipal,
  merchants: { merchant_id: string }[],
): Promise<Response> {
  const ticked = form.getAll("scope").map(String);
  if (form.get("decision") !== "approve" || !ticked.includes("mandates:read")) {
    const denied = await oauth.denyConsent(c.req.raw, handle);
    return new Response(null, { status: 302, headers: denied.headers });
  }
  const merchantId = String(form.get("merchant_id") ?? "");
  if (!merchants.some((m) => m.merchant_id === merchantId)) throw new ApiError("INVALID_INPUT", { fields: ["merchant_id"] });
  const approved = await oauth.approveConsent(c.req.raw, handle, { scope: ticked });
  const grant: AgentGrant = { identityId: owner.identityId, merchantId, environment: owner.environment };
  const { redirectTo } = await oauth.completeAuthorization({
    request: approved.request,
    userId: owner.identityId,
    metadata: { merchant_id: merchantId, environment: owner.environment },
    scope: approved.request.scope,
    props: grant,
  });
  approved.headers.set("location", redirectTo);
  return new Response(null, { status: 302, headers: approved.headers });
}
