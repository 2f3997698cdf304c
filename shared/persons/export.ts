/**
 * The person's export (GDPR Art. 15 and 20; docs/decisions.md, D-471): everything held about them as
 * one JSON file (docs/functions.md#me, "The export file"), generated on request, downloadable once by
 * the person, for fifteen minutes.
 */
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import { canonicalUuid } from "../lib/uuid";
import type { PersonSession } from "./session";

/** How long an export can be downloaded. */
export const EXPORT_TTL_SECONDS = 900;

/** Generates the file now; the id that downloads it, once, until `expires_at`. */
export async function createExport(deps: Deps, session: PersonSession) {
  const created = await rpc(deps.sql, "person_export_create", {
    id: crypto.randomUUID(),
    identity_id: session.identityId,
    environment: session.environment,
    now: deps.now.toISOString(),
    ttl_seconds: EXPORT_TTL_SECONDS,
  });
  if (!created) throw new ApiError("not_found");
  return created;
}

/** The file, once; `404 not_found` when it is not the person's, was downloaded, or expired. */
export async function takeExport(deps: Deps, session: PersonSession, exportId: string) {
  const id = canonicalUuid(exportId.startsWith("exp_") ? exportId.slice(4) : exportId);
  const taken = id ? await rpc(deps.sql, "person_export_take", { id, identity_id: session.identityId, now: deps.now.toISOString() }) : null;
  if (!taken) throw new ApiError("not_found");
  return taken.content;
}
