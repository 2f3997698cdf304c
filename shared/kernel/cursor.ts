/**
 * Keyset pages, one way for every list (the mandates of /v1, and the management reads): the SQL side
 * reads `limit + 1` rows newest first and `private.keyset_page` cuts them into a page; here its last
 * row's (instant, id) becomes an opaque base64url cursor. A page read after rows were added stays
 * stable, since the new rows are newer than every page read.
 */
import { canonicalUuid } from "../lib/uuid";
import { ApiError } from "./errors";
import type { Iso, Uuid } from "./rpc";

/** Where a page starts: after this row, in (instant, id) order, newest first. */
export interface KeysetAfter {
  at: Iso;
  id: Uuid;
}

/** What `private.keyset_page` answers: the rows, whether another page follows, and the row it would follow. */
export interface KeysetPage<T> {
  data: T[];
  more: boolean;
  last: KeysetAfter | null;
}

export function encodeCursor(last: KeysetAfter): string {
  return btoa(`${last.at}|${last.id}`).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The (instant, uuid) of a cursor this API gave; `400 invalid_input` naming `cursor` otherwise. */
export function decodeCursor(cursor: string): KeysetAfter {
  let text = "";
  try {
    text = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    // refused below
  }
  const [at, id, ...rest] = text.split("|");
  const uuid = id ? canonicalUuid(id) : null;
  if (rest.length > 0 || !uuid || !at || Number.isNaN(Date.parse(at))) {
    throw new ApiError("INVALID_INPUT", { fields: ["cursor"] }, "cursor is not a next_cursor this API gave.");
  }
  return { at, id: uuid };
}

/** The next page's cursor, or null on the last page. */
export function nextCursor(page: KeysetPage<unknown>): string | null {
  return page.more && page.last ? encodeCursor(page.last) : null;
}
