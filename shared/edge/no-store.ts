/**
 * The one way a surface says its answers must not be cached: `cache-control: no-store` on every
 * answer of the route or app it is mounted on, errors included. What these answers carry (a
 * session's token or credential, a person's pseudonym, a receipt's verdict at this instant, a
 * single-use URL) must not be kept or served again by any cache between the service and its caller.
 */
import type { MiddlewareHandler } from "hono";

export const noStore: MiddlewareHandler = async function noStore(c, next) {
  await next();
  c.header("cache-control", "no-store");
};
