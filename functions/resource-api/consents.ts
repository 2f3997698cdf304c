/**
 * /v1/consents and /v1/disclosures: read views for support (docs/management.md, "Read views"), a
 * key with api or management.read. The consents the environment's persons gave the merchant, and
 * what it received about them (claims by key, never a value); both adapters over
 * shared/management/read-views.ts. Withdrawing or revoking stays revoke-consent's.
 */
import { Hono } from "hono";
import { type AppEnv, depsOf } from "../../shared/edge/app";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import {
  consentPageQuerySchema,
  consentPageSchema,
  disclosurePageQuerySchema,
  disclosurePageSchema,
  pageConsents,
  pageDisclosures,
} from "../../shared/management/read-views";
import { keyPolicy, supportReads } from "./auth";

export const consents = new Hono<AppEnv>();

consents.get(
  "/",
  documented({
    summary: "List consents, newest first",
    description:
      "The consents the environment's persons gave the merchant, each active, withdrawn or expired. Filter by facetoken and status; limit 1 to 100 (25). A key with api or management.read (support).",
    success: { status: 200, description: "A page of consents", schema: consentPageSchema },
  }),
  noStore,
  keyPolicy("reads", supportReads),
  input("query", consentPageQuerySchema),
  async (c) => c.json(await pageConsents(depsOf(c.var), c.var.principal, c.var.input)),
);

export const disclosures = new Hono<AppEnv>();

disclosures.get(
  "/",
  documented({
    summary: "List disclosures, newest first",
    description:
      "What the merchant received about the environment's persons: the claims by key, how and whether each was disclosed, the purpose, until when; never a value. Filter by facetoken and status (active, expired at the request clock, revoked); limit 1 to 100 (25). A key with api or management.read (support).",
    success: { status: 200, description: "A page of disclosures", schema: disclosurePageSchema },
  }),
  noStore,
  keyPolicy("reads", supportReads),
  input("query", disclosurePageQuerySchema),
  async (c) => c.json(await pageDisclosures(depsOf(c.var), c.var.principal, c.var.input)),
);
