/**
 * GET /functions/v1/hosted-session-get?session_id=hs_… : the merchant's read of one hosted
 * session, its effective state and outcome (shared/sessions/read.ts). Secret key; unknown and
 * another tenant's sessions answer the same 404.
 */
import { createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuth } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { hostedSessionSchema } from "../../shared/sessions/answers";
import { getSession, getSessionSchema } from "../../shared/sessions/read";

const app = createFunctionApp("hosted-session-get");

app.get(
  "/",
  documented({
    summary: "Read a hosted session",
    success: { status: 200, description: "The session", schema: hostedSessionSchema },
    answers: ["not_found"],
  }),
  noStore,
  apiKeyAuth("secret"),
  input("query", getSessionSchema),
  async (c) => {
    return c.json(await getSession(depsOf(c.var), c.var.principal, c.var.input.session_id));
  },
);

export default app;
