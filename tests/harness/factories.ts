import type postgres from "postgres";
import { connect, type Sql } from "../../shared/kernel/db/client";
import { randomHex } from "../../shared/lib/crypto";
import { type CreatedMerchant, createMerchant } from "../../shared/merchants/accounts";
import { serviceUnderTest } from "./service";

let sql: Sql | undefined;

/** A pooled client on the database the service under test uses (./service.ts). */
export function testDb(): Sql {
  const service = serviceUnderTest();
  return service.sql ?? (sql ??= connect(service.databaseUrl, { pooled: true }));
}

/** A fresh merchant with its four keys; every test makes its own. */
export function merchantFactory(name = `Test merchant ${randomHex(4)}`): Promise<CreatedMerchant> {
  return createMerchant(testDb(), name);
}

/** What rolledBack throws to end its transaction. */
export const ROLLBACK = new Error("rollback");

/** Runs `body` in a transaction on testDb() that is always rolled back: nothing a SQL-level test writes outlives it. */
export async function rolledBack(body: (tx: postgres.TransactionSql) => Promise<void>): Promise<void> {
  try {
    await testDb().begin(async (tx) => {
      await body(tx);
      throw ROLLBACK;
    });
  } catch (error) {
    if (error !== ROLLBACK) throw error;
  }
}
