/**
 * POST /functions/v1/process-biovital-transaction (spec 4.4): the authorisation sink. A live
 * capture of the person named by `user_id` is matched against their template, judged by the
 * presence engine and recorded with its assurance level frozen at this instant; an approval gets a
 * signed receipt. The capture row is what mandate-issue accepts as proof for five minutes. With
 * `mandate_id` the mandate stands in for the live capture (shared/mandates/stand-in.ts).
 * Server key or first-party user JWT; replay guard; optional Idempotency-Key.
 */

import { descriptorFrom } from "../../shared/identity/presence";
import { forcedScenario } from "../../shared/identity/scenario";
import { createFunctionApp } from "../../shared/platform/app";
import { secretKeyOrUserAuth } from "../../shared/platform/auth";
import { circuitBreaker } from "../../shared/platform/circuit-breaker";
import { idempotency } from "../../shared/platform/idempotency";
import { replayGuard } from "../../shared/platform/replay-guard";
import { readJson } from "../../shared/platform/validation";
import { transactWithMandate } from "../../shared/transactions/stand-in";
import { judgeAndRecord, resolveIdentity, transactionInput } from "../../shared/transactions/transaction";

const NAME = "process-biovital-transaction";
const app = createFunctionApp(NAME);

app.post("/", secretKeyOrUserAuth(), circuitBreaker(NAME), replayGuard(), idempotency(NAME), async (c) => {
  const input = transactionInput(await readJson(c));
  const scenario = forcedScenario(c);
  const identity = await resolveIdentity(c, input.user_id);
  if (input.mandate_id !== undefined) {
    return c.json(
      await transactWithMandate(c, { ...input, mandate_id: input.mandate_id }, identity.identity_id, identity.document !== null),
    );
  }
  const descriptor = descriptorFrom(input.face_template, input.capture_nonce);
  const approval = await judgeAndRecord(c, input, descriptor, identity, scenario);
  return c.json({ success: true, status: "approved", ...approval });
});

export default app;
