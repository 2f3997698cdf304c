import { inject } from "vitest";
import type { Sql } from "../../shared/kernel/db/client";
import { DEFAULT_ASSETS_PATH } from "../../shared/themes/default-assets";

/** The instance of the service a test file talks to. */
export interface ServiceUnderTest {
  baseUrl: string;
  /** The database it uses (direct, not through its pooler). */
  databaseUrl: string;
  /** Every binding its workers received. */
  bindings: Record<string, string>;
  /** A client on that database, when the instance's owner keeps one (testDb() opens one otherwise). */
  sql?: Sql;
}

let own: ServiceUnderTest | undefined;

/**
 * The service the harness (call, testDb, merchantFactory, startVariantServer) talks to: the one the
 * global setup started for the whole run, unless this test file started its own (own-service.ts).
 * Vitest gives every test file its own copy of this module, so the choice never leaks to another file.
 */
export function serviceUnderTest(): ServiceUnderTest {
  return own ?? { baseUrl: inject("baseUrl"), databaseUrl: inject("databaseUrl"), bindings: inject("serverBindings") };
}

/** Points the harness at `service` for the rest of this test file (undefined: back to the run's service). */
export function useService(service: ServiceUnderTest | undefined): void {
  own = service;
}

/** Where the service under test serves the default theme's assets (tests set no THEME_ASSETS_BASE_URL). */
export function ownThemeAssets(): string {
  return `${serviceUnderTest().baseUrl}${DEFAULT_ASSETS_PATH}`;
}
