/**
 * POST /functions/v1/alias-availability (spec 3.4, 4.17): check, reserve and release a public alias, and
 * claim it for a person (secret key only) (shared/aliases/availability.ts). Publishable or secret key; without a key only `check`, against
 * the live namespace. Rate limited per action, per merchant and environment (per IP without a key). Every
 * response is `cache-control: no-store`.
 */
import { aliasAnswerSchema, checkAlias, claimAlias, releaseAlias, reserveAlias } from "../../shared/aliases/availability";
import { type AppEnv, createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuth } from "../../shared/edge/auth";
import { input, type WithInput } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { clientIp, rateLimit, tenantBudget } from "../../shared/edge/rate-limit";
import { ApiError } from "../../shared/kernel/errors";
import { type AliasRequest, aliasLimits, aliasRequestSchema } from "./schema";

const app = createFunctionApp("alias-availability");

app.use(noStore);

// The limit depends on the action, so the body is validated first; a malformed body costs no query.
app.post(
  "/",
  documented({
    summary: "Check, reserve or claim an alias",
    success: { status: 200, description: "The alias's availability, hold or release", schema: aliasAnswerSchema },
    answers: ["API_KEY_REQUIRED", "AUTH_REQUIRED", "ALIAS_TAKEN", "CLAIM_TOKEN_INVALID", "not_found"],
  }),
  apiKeyAuth("anonymous"),
  input("json", aliasRequestSchema),
  rateLimit<AppEnv & WithInput<AliasRequest>>((c) => {
    const principal = c.var.principal?.kind === "merchant_key" ? c.var.principal : null;
    const { action } = c.var.input;
    if (!principal) return action === "check" ? { rule: aliasLimits.checkAnonymous, identifier: clientIp(c) } : null;
    return { rule: action === "check" ? aliasLimits.checkKey : aliasLimits[action], identifier: tenantBudget(principal) };
  }),
  async (c) => {
    const body = c.var.input;
    const principal = c.var.principal;
    const deps = depsOf(c.var);
    if (body.action === "check") return c.json(await checkAlias(deps, principal?.environment ?? "live", body.alias));
    if (!principal) throw new ApiError("API_KEY_REQUIRED");
    if (body.action === "reserve") return c.json(await reserveAlias(deps, principal, body.alias, body.ttl_seconds));
    if (body.action === "release") return c.json(await releaseAlias(deps, principal, body.alias, body.claim_token));
    // Attaching a handle to a person is the merchant's server's act (it knows who enrolled), never a browser's.
    if (principal.kind !== "merchant_key" || principal.keyKind !== "secret") throw new ApiError("AUTH_REQUIRED");
    return c.json(await claimAlias(deps, principal, body.alias, body.claim_token, body.subject_ref));
  },
);

export default app;
