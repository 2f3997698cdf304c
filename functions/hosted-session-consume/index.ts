/**
 * POST /functions/v1/hosted-session-consume (spec 4.13): exchanges a session's single-use token
 * for the session, its capture nonce and the screen credential (shared/sessions/consume.ts). The
 * service role (`Authorization: Bearer <SERVICE_ROLE_KEY>`) or the merchant's own secret key;
 * a publishable key is `401 AUTH_REQUIRED`. The hosted screen's boot runs the same operation.
 */
import { createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuth, serviceRoleOr } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { consumedSessionSchema } from "../../shared/sessions/answers";
import { consumeSchema, consumeSession } from "../../shared/sessions/consume";

const app = createFunctionApp("hosted-session-consume");

app.post(
  "/",
  documented({
    summary: "Exchange a session token",
    success: { status: 200, description: "The session, opened", schema: consumedSessionSchema },
    answers: ["not_found", "SESSION_ALREADY_CONSUMED", "SESSION_EXPIRED"],
  }),
  noStore,
  serviceRoleOr(apiKeyAuth("secret")),
  input("json", consumeSchema),
  async (c) => {
    const exchanger = c.var.servicePrincipal ?? c.var.principal!;
    const { session, capture_nonce, screen_token } = await consumeSession(depsOf(c.var), exchanger, c.var.input.session_token);
    return c.json({ ...session, capture_nonce, screen_token });
  },
);

export default app;
