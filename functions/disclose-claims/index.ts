/**
 * POST /functions/v1/disclose-claims (spec 4.5): discloses the requested fields of a person who
 * just proved presence, as an SD-JWT, with the consent token that opens what was put behind it
 * (shared/consent/disclose.ts). POST /functions/v1/disclose-claims/fetch `{consent_token}`: what
 * the token unlocks, `403` once revoked. POST /functions/v1/disclose-claims/verify `{presentation,
 * nonce}`: whether a holder's presentation verifies, its key binding a JWS or a passkey's WebAuthn
 * assertion (D-642). Secret key only.
 */
import {
  discloseClaims,
  discloseCodes,
  discloseSchema,
  disclosureAnswerSchema,
  disclosureFetchSchema,
  fetchDisclosure,
  fetchSchema,
} from "../../shared/consent/disclose";
import { presentationAnswerSchema, presentationSchema, verifyPresentation } from "../../shared/consent/presentation";
import { relyingPartyOf } from "../../shared/devices/ceremony";
import { type AppEnv, createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuth, type KeyAuthenticated } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { type RateLimitRule, rateLimit, tenantBudget } from "../../shared/edge/rate-limit";
import { serviceBaseUrl } from "../../shared/kernel/config";
import { signingKeysOf } from "../../shared/kernel/keys";

/** Per merchant and environment: issuing signs an SD-JWT; a fetch reads the ledger (docs/decisions.md, D-267). */
const limits = {
  disclose: { name: "disclose-claims", limit: 300, windowSeconds: 60 },
  fetch: { name: "disclose-claims-fetch", limit: 600, windowSeconds: 60 },
  verify: { name: "disclose-claims-verify", limit: 600, windowSeconds: 60 },
} satisfies Record<string, RateLimitRule>;
const perMerchant = (rule: RateLimitRule) =>
  rateLimit<AppEnv & KeyAuthenticated>((c) => ({ rule, identifier: tenantBudget(c.var.principal) }));

const app = createFunctionApp("disclose-claims");

app.post(
  "/",
  documented({
    summary: "Disclose claims of a person who just proved presence, as an SD-JWT",
    success: { status: 200, description: "The disclosure", schema: disclosureAnswerSchema },
    answers: discloseCodes,
  }),
  noStore,
  apiKeyAuth("secret"),
  perMerchant(limits.disclose),
  input("json", discloseSchema),
  async (c) => {
    const issuer = { keys: await signingKeysOf(c.var.config), baseUrl: serviceBaseUrl(c.var.config, c.req.url) };
    return c.json(await discloseClaims(depsOf(c.var), issuer, c.var.principal, c.var.input));
  },
);

app.post(
  "/fetch",
  documented({
    summary: "What a consent token unlocks",
    success: { status: 200, description: "What the token unlocks", schema: disclosureFetchSchema },
    answers: ["CONSENT_MISSING", "CONSENT_REVOKED", "CONSENT_EXPIRED"],
  }),
  noStore,
  apiKeyAuth("secret"),
  perMerchant(limits.fetch),
  input("json", fetchSchema),
  async (c) => {
    return c.json(await fetchDisclosure(depsOf(c.var), c.var.principal, c.var.input));
  },
);

app.post(
  "/verify",
  documented({
    summary: "Verify a disclosure as its holder presents it, with a key binding by the device (a JWS, or a passkey's WebAuthn assertion)",
    success: { status: 200, description: "Whether it verifies, and the claims disclosed", schema: presentationAnswerSchema },
    answers: [],
  }),
  noStore,
  apiKeyAuth("secret"),
  perMerchant(limits.verify),
  input("json", presentationSchema),
  async (c) => {
    const keys = await signingKeysOf(c.var.config);
    const rp = relyingPartyOf(c.var.config, c.req.url);
    return c.json(await verifyPresentation(depsOf(c.var), keys, c.var.principal, rp, c.var.input));
  },
);

export default app;
