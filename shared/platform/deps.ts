import type { Sql } from "./db/client";
import type { Locale } from "./i18n";

/**
 * What every domain operation runs with besides its input: the database client, the request's
 * instant (the controlled clock in tests) and the caller's locale. Plain values: an operation
 * never sees a request, a header or the configuration.
 */
export interface Deps {
  sql: Sql;
  now: Date;
  locale: Locale;
}
