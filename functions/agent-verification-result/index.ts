/**
 * GET /functions/v1/agent-verification-result?verification_id=av_… (spec 4.15): polling a card's
 * state, always `200` with `reason`, `developer_message` and a localised `user_message`
 * (shared/agents/verifications.ts). An owner of the card's merchant, with their first-party
 * session; agents poll through the MCP tool of the same name. No webhook exists for cards.
 */
import { cardResultSchema, resultSchema, verificationResult } from "../../shared/agents/verifications";
import { createFunctionApp, depsOf } from "../../shared/edge/app";
import { userTokenAuth } from "../../shared/edge/auth";
import { input } from "../../shared/edge/input";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";

const app = createFunctionApp("agent-verification-result");

app.get(
  "/",
  documented({
    summary: "A verification card's state",
    success: { status: 200, description: "The card's state", schema: cardResultSchema },
    answers: ["ACCESS_REVOKED", "not_found"],
  }),
  noStore,
  userTokenAuth(),
  input("query", resultSchema),
  async (c) => {
    return c.json(await verificationResult(depsOf(c.var), c.var.principal, c.var.input.verification_id));
  },
);

export default app;
