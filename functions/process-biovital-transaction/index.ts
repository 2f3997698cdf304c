/**
 * POST /functions/v1/process-biovital-transaction (spec 4.4): the authorisation sink
 * (shared/transactions/transact.ts). Server key or first-party user JWT; replay guard; optional
 * Idempotency-Key; circuit breaker.
 */
import { forcedScenario, SCENARIO_HEADER } from "../../shared/identity/scenario";
import { createFunctionApp, depsOf } from "../../shared/platform/app";
import { secretKeyOrUserAuth } from "../../shared/platform/auth";
import { circuitBreaker } from "../../shared/platform/circuit-breaker";
import { idempotency, idempotencyKeyOf } from "../../shared/platform/idempotency";
import { input } from "../../shared/platform/input";
import { signingKeysOf, templatesOf } from "../../shared/platform/keys";
import { transactionSchema } from "../../shared/transactions/input";
import { transact } from "../../shared/transactions/transact";

const NAME = "process-biovital-transaction";
const app = createFunctionApp(NAME);

app.post(
  "/",
  secretKeyOrUserAuth({ replay: true }),
  circuitBreaker(NAME),
  idempotency(NAME),
  input("json", transactionSchema),
  async (c) => {
    const { principal, config } = c.var;
    const scenario = forcedScenario(c.req.header(SCENARIO_HEADER), principal.environment);
    const keys = { signing: await signingKeysOf(config), templates: () => templatesOf(c.var) };
    const idempotencyKey = idempotencyKeyOf(c.req.raw.headers) ?? undefined;
    return c.json(await transact(depsOf(c.var), keys, principal, c.var.input, { scenario, idempotencyKey }));
  },
);

export default app;
