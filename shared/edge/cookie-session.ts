/**
 * Sessions held in a cookie on the service's own origin (docs/decisions.md, D-466 and D-590): the
 * person's page and the merchant's console sign in the same way and guard every request the same
 * way. The cookies are `__Host-` (this host only, path /, Secure), HttpOnly and SameSite=Strict;
 * every route refuses a request another site made (`403 CROSS_SITE_REQUEST`), and every
 * state-changing one needs the session's CSRF token in `x-csrf-token` (`403 CSRF_TOKEN_INVALID`):
 * a header a cross-site form cannot set, a cookie a cross-site request does not carry, and an
 * origin check, three independent refusals.
 */
import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { serviceBaseUrl } from "../kernel/config";
import { ApiError } from "../kernel/errors";
import { randomBase64Url, sha256Hex, timingSafeEqual } from "../lib/crypto";
import type { AppEnv } from "./app";
import { formOf } from "./input";
import { withDoc } from "./openapi";

/** The two cookies of a surface: the browser's sign-in secret, then the session's token. */
export interface SessionCookies {
  signIn: string;
  session: string;
}

/** A surface's cookie names, `__Host-<surface>-sign-in` and `__Host-<surface>-session`. */
/** A browser's sign-in secret, kept in its sign-in cookie; only its SHA-256 is stored (the person's page, the console, the MCP owner sign-in). */
export const newBrowserSecret = () => randomBase64Url(32);

export function sessionCookies(surface: string): SessionCookies {
  return { signIn: `__Host-${surface}-sign-in`, session: `__Host-${surface}-session` };
}

/** A Set-Cookie value for this host only, never sent cross-site, never read by a script; Max-Age 0 clears it. */
export function hostCookie(name: string, value: string, maxAgeSeconds: number): string {
  return `${name}=${value}; Max-Age=${maxAgeSeconds}; Path=/; Secure; HttpOnly; SameSite=Strict`;
}

/** Sets the cookie (appending, so a response may set several). */
export function setHostCookie(c: Context, name: string, value: string, maxAgeSeconds: number): void {
  c.header("set-cookie", hostCookie(name, value, maxAgeSeconds), { append: true });
}

/** The cookie's value, if the browser sent it. */
export const cookieOf = (c: Context, name: string): string | undefined => getCookie(c, name);

/**
 * `403 CROSS_SITE_REQUEST` for a request another site made: the browser says so in Sec-Fetch-Site
 * (anything but same-origin, or none for a typed address), or its Origin is not the service's. The
 * cookies are SameSite=Strict too; this refuses a request that carries none as well (a login CSRF).
 */
export const sameOrigin: MiddlewareHandler<AppEnv> = withDoc(
  async function sameOrigin(c, next) {
    const site = c.req.header("sec-fetch-site");
    if (site !== undefined && site !== "same-origin" && site !== "none") throw new ApiError("CROSS_SITE_REQUEST");
    const origin = c.req.header("origin");
    if (origin !== undefined && origin !== new URL(serviceBaseUrl(c.var.config, c.req.url)).origin)
      throw new ApiError("CROSS_SITE_REQUEST");
    await next();
  },
  { answers: ["CROSS_SITE_REQUEST"] },
);

const isForm = (c: Context) => /^application\/x-www-form-urlencoded\b/i.test(c.req.header("content-type") ?? "");

/** `403 CSRF_TOKEN_INVALID` unless `presented` is the token whose SHA-256 the session keeps. */
export async function requireCsrfToken(session: { csrfHash: string }, presented: string | undefined): Promise<void> {
  if (!presented || presented.length > 128 || !timingSafeEqual(await sha256Hex(presented), session.csrfHash)) {
    throw new ApiError("CSRF_TOKEN_INVALID");
  }
}

/**
 * The guard of every state-changing route: the CSRF token of the session `sessionOf` reads (set by
 * the route's session middleware before it), in `x-csrf-token`, or, for a server-rendered page's
 * HTML form (which cannot set a header), in its `csrf_token` field (D-623).
 */
export function csrfGuard<E extends AppEnv>(sessionOf: (c: Context<E>) => { csrfHash: string }): MiddlewareHandler<E> {
  return withDoc(
    async function csrf(c, next) {
      const header = c.req.header("x-csrf-token");
      const field = header === undefined && isForm(c) ? (await formOf(c)).csrf_token : undefined;
      await requireCsrfToken(sessionOf(c), header ?? (typeof field === "string" ? field : undefined));
      await next();
    } as MiddlewareHandler<E>,
    { answers: ["CSRF_TOKEN_INVALID"] },
  );
}
