/**
 * A read view for support (docs/management.md, "Read views"): the environment's /v1 hosted
 * sessions, newest first, filtered by status, mode and facetoken, in cursor pages. Read with a key
 * that acts (`api`) or a dashboard key (`management.read`).
 */
import * as v from "valibot";
import { sessionModes } from "../contracts/hosted-screen";
import { described, orNull } from "../kernel/answers";
import type { Deps } from "../kernel/deps";
import type { Tenant } from "../kernel/principal";
import { modeSessionSchema } from "../sessions/mode-session";
import { readViewPage } from "./read-views";
import { pageLimit } from "./webhooks";

export const sessionPageQuerySchema = v.strictObject({
  status: v.optional(v.picklist(["open", "completed", "cancelled", "expired"])),
  mode: v.optional(v.picklist(sessionModes)),
  facetoken: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
  cursor: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  limit: pageLimit,
});

export const sessionPageSchema = v.object({
  object: v.literal("list"),
  data: described(v.array(modeSessionSchema), "The page's sessions, newest first (never their url)."),
  next_cursor: orNull(v.string(), "The cursor of the next page (opaque); null on the last page."),
});

export const pageSessions = (deps: Deps, tenant: Tenant, query: v.InferOutput<typeof sessionPageQuerySchema>) =>
  readViewPage<v.InferOutput<typeof modeSessionSchema>>(deps, tenant, "management_sessions_page", query);
