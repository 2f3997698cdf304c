import * as v from "valibot";
import { jsonObject } from "../../shared/kernel/validation";

const DEFAULT_TTL_SECONDS = 300;
const MAX_TTL_SECONDS = 900;
/** Raw input longer than this is a malformed request, not an alias that is merely too long. */
const MAX_RAW_ALIAS_LENGTH = 128;

const alias = v.pipe(v.string(), v.maxLength(MAX_RAW_ALIAS_LENGTH));
const claimToken = v.pipe(v.string(), v.minLength(1), v.maxLength(256));
/** `user_id` is never accepted: its presence alone is `400 INVALID_INPUT` with `fields: ["user_id"]`. */
const noUserId = { user_id: v.optional(v.never()) };

/**
 * The request body (spec 4.17). `action` defaults to `check`; `ttl_seconds` belongs to `reserve`
 * (integer 1 to 900, default 300), `claim_token` to `release` and `claim`, `subject_ref` (the person the
 * alias is attached to, as enrolment answered it) to `claim`. Unknown fields are ignored.
 */
export const aliasRequestSchema = v.pipe(
  jsonObject,
  v.looseObject(noUserId),
  v.transform((body) => ({ action: "check", ...body })),
  v.variant("action", [
    v.object({ action: v.literal("check"), alias, ...noUserId }),
    v.object({
      action: v.literal("reserve"),
      alias,
      ttl_seconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_TTL_SECONDS)), DEFAULT_TTL_SECONDS),
      ...noUserId,
    }),
    v.object({ action: v.literal("release"), alias, claim_token: claimToken, ...noUserId }),
    v.object({
      action: v.literal("claim"),
      alias,
      claim_token: claimToken,
      subject_ref: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
      ...noUserId,
    }),
  ]),
);

export type AliasRequest = v.InferOutput<typeof aliasRequestSchema>;

/** Per-minute limits (spec section 8): per merchant and environment, and per IP for anonymous checks. */
export const aliasLimits = {
  checkKey: { name: "alias-check-key", limit: 120, windowSeconds: 60 },
  checkAnonymous: { name: "alias-check-ip", limit: 30, windowSeconds: 60 },
  reserve: { name: "alias-reserve", limit: 10, windowSeconds: 60 },
  release: { name: "alias-release", limit: 10, windowSeconds: 60 },
  claim: { name: "alias-claim", limit: 10, windowSeconds: 60 },
} as const;
