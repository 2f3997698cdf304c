import { inject } from "vitest";
import { randomHex } from "../../shared/lib/crypto";
import { type CreatedMerchant, createMerchant } from "../../shared/merchants/merchants";
import { connect, type Sql } from "../../shared/platform/db/client";

let sql: Sql | undefined;

/** A pooled client on the database the service under test uses. */
export function testDb(): Sql {
  return (sql ??= connect(inject("databaseUrl"), { pooled: true }));
}

/** A fresh merchant with its four keys; every test makes its own. */
export function merchantFactory(name = `Test merchant ${randomHex(4)}`): Promise<CreatedMerchant> {
  return createMerchant(testDb(), name);
}
