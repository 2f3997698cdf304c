import type { Statements } from "./db/client";
import type { Locale } from "./i18n";

/**
 * What every domain operation runs with besides its input: the database client (or a transaction
 * of it, when an operation runs inside another's), the request's
 * instant (the controlled clock in tests) and the caller's locale. Plain values: an operation
 * never sees a request, a header or the configuration.
 */
export interface Deps {
  sql: Statements;
  now: Date;
  locale: Locale;
}
