/**
 * POST /functions/v1/hosted-session-create (spec 2.7, 4.12): opens a hosted session and answers
 * its single-use token, once (shared/sessions/create.ts). Secret key only: a publishable key is
 * `401 AUTH_REQUIRED`.
 */
import { createFunctionApp, depsOf } from "../../shared/edge/app";
import { apiKeyAuth } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { serviceBaseUrl } from "../../shared/kernel/config";
import { createdSessionSchema } from "../../shared/sessions/answers";
import { createSession, createSessionSchema } from "../../shared/sessions/create";

const app = createFunctionApp("hosted-session-create");

app.post(
  "/",
  documented({
    summary: "Open a hosted session",
    success: { status: 201, description: "The session, with its single-use url", schema: createdSessionSchema },
    answers: ["MERCHANT_MISMATCH", "SESSION_WRITE_FAILED"],
  }),
  noStore,
  apiKeyAuth("secret"),
  input("json", createSessionSchema),
  async (c) => {
    const baseUrl = serviceBaseUrl(c.var.config, c.req.url);
    return c.json(await createSession(depsOf(c.var), c.var.principal, c.var.input, baseUrl), 201);
  },
);

export default app;
