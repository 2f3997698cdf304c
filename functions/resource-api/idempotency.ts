import type { Context } from "hono";

/**
 * Idempotency-Key scope on the resource API: the method and path, so one key on two resources
 * (`/v1/mandates/mdt_a/check` and `…/mdt_b/check`) is two records (resource API 4, "Idempotency").
 */
export function idempotencyScope(c: Context): string {
  return `${c.req.method} ${c.req.path.replace(/\/+$/, "")}`;
}
