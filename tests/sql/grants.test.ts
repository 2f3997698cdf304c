import { describe, expect, it } from "vitest";
import { testDb } from "../harness/factories";

class Rollback extends Error {}

describe("RPC grants", () => {
  it("no role but the owner can execute the security-definer RPCs or read the private tables", async () => {
    const outcomes: string[] = [];
    await testDb()
      .begin(async (tx) => {
        await tx`create role rpc_probe_role nologin`;
        await tx`set local role rpc_probe_role`;
        for (const statement of [
          `select public.mandate_consume('{}'::jsonb)`,
          `select public.api_key_authenticate('{}'::jsonb)`,
          `select public.merchant_create('{}'::jsonb)`,
          `select count(*) from private.mandates`,
        ]) {
          await tx
            .savepoint(async (sp) => sp.unsafe(statement))
            .then(
              () => outcomes.push("allowed"),
              (error: { code?: string }) => outcomes.push(error.code ?? "error"),
            );
        }
        throw new Rollback();
      })
      .catch((error) => {
        if (!(error instanceof Rollback)) throw error;
      });
    expect(outcomes).toEqual(["42501", "42501", "42501", "42501"]);
  });
});
