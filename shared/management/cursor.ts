/**
 * Opaque keyset cursors of the management pages: the last row's (instant, id), base64url-encoded, as
 * the mandate pages do (shared/mandates/page.ts). A page read after rows were added stays stable,
 * since the new rows are newer than every page read.
 */
import { ApiError } from "../kernel/errors";
import { canonicalUuid } from "../lib/uuid";

export function encodeCursor(at: string, id: string): string {
  return btoa(`${at}|${id}`).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The (instant, uuid) of a cursor this API gave; `400 invalid_input` naming `cursor` otherwise. */
export function decodeCursor(cursor: string): { at: string; id: string } {
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
