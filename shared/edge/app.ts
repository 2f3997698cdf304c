import { type Context, Hono, type MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { HTTPException } from "hono/http-exception";
import { type Bindings, type Config, readConfig } from "../kernel/config";
import { type Database, databaseOfRequest } from "../kernel/db/client";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import { type Locale, negotiateLocale } from "../kernel/i18n";
import type { Principal, ServicePrincipal } from "../kernel/principal";
import { mountOf } from "../kernel/registry";
import type { ReplayClaim } from "../kernel/replay-guard";
import type { BreakerState } from "../kernel/rpc";
import { requestClock } from "./clock";

export type AppEnv = {
  Bindings: Bindings;
  Variables: {
    requestId: string;
    config: Config;
    now: Date;
    locale: Locale;
    /** The request's database client: DATABASE_URL, or another Postgres URL (one client per URL). */
    db: (url?: string) => Database;
    principal: Principal | null;
    servicePrincipal: ServicePrincipal | null;
    /** A replay nonce that authentication left for the response store to claim (shared/platform/idempotency.ts). */
    unclaimedNonce: ReplayClaim | null;
    /** A circuit breaker's state that came back with authentication (AuthOptions.breaker), for circuitBreaker. */
    breakerState: (BreakerState & { function_name: string }) | null;
  };
};

/** The plain values a domain operation runs with, taken from the request once (shared/platform/deps.ts). */
export function depsOf(vars: Pick<AppEnv["Variables"], "db" | "now" | "locale">): Deps & { sql: Database } {
  return { sql: vars.db(), now: vars.now, locale: vars.locale };
}

const REQUEST_ID = /^[A-Za-z0-9._-]{8,128}$/;

const corsByLegacyHeader = new Map<string, MiddlewareHandler>();

/**
 * CORS for browser callers (publishable keys): every request header the service reads, the legacy
 * key header under its configured name (`LEGACY_API_KEY_HEADER`) included.
 */
function corsFor(legacyHeader: string): MiddlewareHandler {
  let middleware = corsByLegacyHeader.get(legacyHeader);
  if (!middleware) {
    middleware = cors({
      origin: "*",
      allowMethods: ["GET", "POST", "OPTIONS"],
      allowHeaders: [
        "content-type",
        "accept-language",
        "authorization",
        "x-service-api-key",
        legacyHeader,
        "x-service-timestamp",
        "x-service-nonce",
        "x-service-scenario",
        "idempotency-key",
        "x-request-id",
      ],
      exposeHeaders: ["x-request-id", "idempotency-status", "retry-after", "x-session-token"],
      maxAge: 600,
    });
    corsByLegacyHeader.set(legacyHeader, middleware);
  }
  return middleware;
}

/**
 * A function's own answer to a refusal, for a request it writes pages for (the console's, D-700):
 * a Response, or undefined to answer the service's coded JSON. Its status is the refusal's.
 */
export type ErrorPage = (c: Context<AppEnv>, error: ApiError) => Response | undefined | Promise<Response | undefined>;

/**
 * The one place every function app is built: CORS for browser callers (publishable keys, the
 * configured legacy key header included), request id, configuration, clock, locale, a lazily
 * opened per-request database client, the error handler, not-found and method-not-allowed.
 * Routes are declared on "/" of the returned app, which is mounted where the registry says
 * (`/functions/v1/<name>`, or the function's own mount: the resource API at `/v1`). With
 * `lowercaseCodes` every error body spells its catalogue code in lowercase, as the resource API's
 * codes are written (`rate_limited`); status and text stay the catalogue's.
 *
 * @example
 * const app = createFunctionApp("mandate-scopes");
 * app.get("/", (c) => c.json(catalogue(c.var.locale)));
 * export default app;
 */
export function createFunctionApp(
  name: string,
  { lowercaseCodes = false, errorPage }: { lowercaseCodes?: boolean; errorPage?: ErrorPage } = {},
) {
  const basePath = mountOf(name);
  const app = new Hono<AppEnv>({ strict: false }).basePath(basePath);
  const bodyOf = (error: ApiError) => (lowercaseCodes ? { ...error.body(), code: error.code.toLowerCase() } : error.body());

  app.use(async function corsForConfiguredHeaders(c, next) {
    return corsFor(readConfig(c.env).LEGACY_API_KEY_HEADER)(c, next);
  });

  app.use(async function requestContext(c, next) {
    const incoming = c.req.header("x-request-id");
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    c.set("requestId", requestId);
    c.header("x-request-id", requestId);
    const config = readConfig(c.env);
    c.set("config", config);
    c.set("now", requestClock(config, c.req.raw.headers));
    c.set("locale", negotiateLocale(c.req.header("accept-language")));
    c.set("principal", null);
    c.set("servicePrincipal", null);
    c.set("unclaimedNonce", null);
    c.set("breakerState", null);
    const clients = new Map<string, Database>();
    c.set("db", (url = config.DATABASE_URL) => {
      let sql = clients.get(url);
      if (!sql) clients.set(url, (sql = databaseOfRequest(url)));
      return sql;
    });
    try {
      await next();
    } finally {
      await drainUnreadBody(c.req.raw);
      if (clients.size) {
        const closing = Promise.all([...clients.values()].map((sql) => sql.end({ timeout: 1 })));
        try {
          c.executionCtx.waitUntil(closing);
        } catch {
          await closing;
        }
      }
    }
  });

  /** A refusal's answer: the function's page for it when it writes one for this request, else the coded JSON. */
  const refuse = async (c: Context<AppEnv>, error: ApiError) => {
    // A refusal that says when to come back says it in the header too (429, 503, 409 IDEMPOTENCY_IN_FLIGHT).
    const retryAfter = error.extra.retry_after_seconds;
    if (typeof retryAfter === "number") c.header("retry-after", String(retryAfter));
    return (await errorPage?.(c, error)) ?? c.json(bodyOf(error), error.status as 400);
  };

  app.notFound((c) => {
    const path = c.req.path.replace(/\/+$/, "");
    // A longer function name that shares this one's prefix (`mandate-get-x`) is another function, unknown.
    if (path !== basePath && !path.startsWith(`${basePath}/`)) return c.json(bodyOf(new ApiError("FUNCTION_NOT_FOUND")), 404);
    const allowed = app.routes
      .filter((route) => route.method !== "ALL" && route.path.replace(/\/+$/, "") === path)
      .map((route) => route.method);
    if (allowed.length > 0) {
      c.header("allow", [...new Set([...allowed, ...(allowed.includes("GET") ? ["HEAD"] : [])])].join(", "));
      return refuse(c, new ApiError("METHOD_NOT_ALLOWED"));
    }
    return refuse(c, new ApiError("ROUTE_NOT_FOUND"));
  });

  app.onError((error, c) => {
    if (error instanceof ApiError) return refuse(c, error);
    if (error instanceof HTTPException && error.status < 500)
      return refuse(c, new ApiError(error.status === 413 ? "PAYLOAD_TOO_LARGE" : "INVALID_INPUT"));
    console.error(JSON.stringify({ function: name, request_id: c.var.requestId, error: String(error?.stack ?? error) }));
    return refuse(c, new ApiError("INTERNAL_ERROR"));
  });

  return app;
}

/**
 * workerd drops the client connection when a response goes out before the request body was read
 * (an early 401 or 405, for instance), which breaks the caller's next keep-alive request. The body
 * is therefore always consumed before the response is returned.
 */
async function drainUnreadBody(request: Request): Promise<void> {
  if (request.body && !request.bodyUsed) await request.arrayBuffer().catch(() => undefined);
}
