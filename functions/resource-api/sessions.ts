/**
 * /v1/sessions (resource API 2.2, 4.4, 4.5): open a hosted session for one person and read what
 * came of it, adapters over shared/sessions/resource.ts. The screen the `url` opens is the hosted
 * capture screen; its boot, complete and cancel are the function API's.
 */
import { Hono } from "hono";
import { type AppEnv, depsOf } from "../../shared/edge/app";
import { idempotency } from "../../shared/edge/idempotency";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { serviceBaseUrl } from "../../shared/kernel/config";
import { pageSessions, sessionPageQuerySchema, sessionPageSchema } from "../../shared/management/sessions";
import { issueRuleCodes } from "../../shared/mandates/issue";
import { createModeSession, createModeSessionSchema, modeSessionSchema, readModeSession } from "../../shared/sessions/mode-session";
import { keyPolicy, secretKey, supportReads } from "./auth";
import { idempotencyScope } from "./idempotency";

export const sessions = new Hono<AppEnv>();

sessions.post(
  "/",
  documented({
    summary: "Open a hosted session",
    description:
      "A screen hosted by the service for one person: mode claim, recognise, attribute or mandate. Send the person to url (single use, 30 minutes); they come back to return_url with session_id and status appended; then read GET /v1/sessions/{id} or wait for session.completed.",
    success: { status: 201, description: "The session, with its single-use url", schema: modeSessionSchema },
    answers: [...issueRuleCodes, "ALLOWANCE_EXHAUSTED"],
  }),
  noStore,
  secretKey("sessions"),
  idempotency(idempotencyScope),
  input("json", createModeSessionSchema),
  async (c) => {
    const base = serviceBaseUrl(c.var.config, c.req.url);
    return c.json(await createModeSession(depsOf(c.var), c.var.principal, c.var.input, base, c.var.storedResponse), 201);
  },
);

sessions.get(
  "/",
  documented({
    summary: "List hosted sessions, newest first",
    description: "Filter by status, mode and facetoken; limit 1 to 100 (25). A key with api or management.read (support).",
    success: { status: 200, description: "A page of sessions (no url)", schema: sessionPageSchema },
  }),
  noStore,
  keyPolicy("reads", supportReads),
  input("query", sessionPageQuerySchema),
  async (c) => c.json(await pageSessions(depsOf(c.var), c.var.principal, c.var.input)),
);

sessions.get(
  "/:id",
  documented({
    summary: "Read a hosted session and its result",
    success: { status: 200, description: "The session at the request's clock (no url)", schema: modeSessionSchema },
    answers: ["not_found"],
  }),
  noStore,
  keyPolicy("reads", supportReads),
  async (c) => {
    return c.json(await readModeSession(depsOf(c.var), c.var.principal, c.req.param("id")));
  },
);
