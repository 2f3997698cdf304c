/**
 * The account's owners (docs/management.md, "Owners"): the people who may sign in to the console
 * and authorise agents for the merchant. Listed; invited by the merchant's pseudonym for a person it
 * holds, who accepts by proving presence in a recognise session made for the invitation (its
 * approved outcome makes them an owner, in the outcome's transaction); removed, never the last one.
 */
import * as v from "valibot";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { canonicalUuid } from "../lib/uuid";
import { createModeSession, createModeSessionSchema } from "../sessions/mode-session";
import { type ManagementCaller, scopeOf, writeOf } from "./caller";
import type {} from "./rpc";

const subjectRef = v.pipe(v.string(), v.regex(/^sub_[0-9a-f]{48}$/, "a subject_ref: sub_ and 48 hex"));
const sessionEntries = createModeSessionSchema.pipe[0].entries;

export const inviteOwnerSchema = v.pipe(
  v.strictObject({
    subject_ref: subjectRef,
    return_url: sessionEntries.return_url,
    cancel_url: sessionEntries.cancel_url,
    locale: sessionEntries.locale,
  }),
  v.examples([{ subject_ref: `sub_${"3f9a".repeat(12)}`, return_url: "https://example.com/console/owners" }]),
);

export async function listOwners(deps: Deps, tenant: Tenant) {
  const { owners, invitations } = await rpc(deps.sql, "management_owners_list", scopeOf(tenant, deps.now));
  return { object: "list" as const, data: owners, invitations, next_cursor: null };
}

/**
 * Invites the person: a recognise session for them (its url is where they accept, shown in this
 * answer only) and the invitation bound to it. A person the merchant does not hold in this
 * environment is `404 not_found`, an owner already `409 already_owner`.
 */
export async function inviteOwner(
  deps: Deps,
  caller: ManagementCaller,
  input: v.InferOutput<typeof inviteOwnerSchema>,
  serviceBase: string,
) {
  const session = await createModeSession(
    deps,
    caller,
    {
      mode: "recognise",
      facetoken: input.subject_ref,
      return_url: input.return_url,
      cancel_url: input.cancel_url,
      locale: input.locale,
      metadata: {},
    },
    serviceBase,
    undefined,
  );
  const sessionId = canonicalUuid(String(session.id).slice(3));
  if (!sessionId) throw new ApiError("INTERNAL_ERROR");
  const invitation = await rpc(deps.sql, "management_owner_invite", {
    ...writeOf(caller, deps.now),
    subject_ref: input.subject_ref,
    session_id: sessionId,
    expires_at: String(session.expires_at),
  });
  return { ...invitation, url: session.url as string };
}

/** Removes an owner of this environment; the last one stays (`409 last_owner`). */
export function removeOwner(deps: Deps, caller: ManagementCaller, subject: string) {
  if (!/^sub_[0-9a-f]{48}$/.test(subject)) throw new ApiError("not_found");
  return rpc(deps.sql, "management_owner_remove", { ...writeOf(caller, deps.now), subject_ref: subject });
}
