/**
 * Dated versions of the resource API (resource API 9): `Service-Version` selects one; without it
 * the merchant's pinned version answers (private.merchants.api_version, set when the merchant is
 * created). An unknown version is `400 unsupported_version` with the supported list. Every
 * response names the version that answered in its own `Service-Version` header.
 */
import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../../shared/kernel/errors";

/** Every version this deployment answers, oldest first; the last is the current one. */
export const supportedVersions = ["2026-09-14"] as const;
export const currentVersion = supportedVersions[supportedVersions.length - 1];

const VERSION_HEADER = "service-version";

/**
 * Every response is stamped with the current version first, so those answered before the version
 * is known (a missing key, a 429 of the key's bucket, an unknown route) still say which answered.
 */
export const stampCurrentVersion: MiddlewareHandler = async function stampCurrentVersion(c, next) {
  c.header(VERSION_HEADER, currentVersion);
  return next();
};

/**
 * The version the request asked for, or undefined when it asked for none. The response is stamped
 * with it at once (with the current version when it is refused or absent: a keyless request and a
 * refusal are answered by the current version; an authenticated request without the header is
 * stamped again with the merchant's pinned version by `answerWithPinned`).
 */
export function requestedVersion(c: Context): string | undefined {
  const requested = c.req.header(VERSION_HEADER);
  const known = requested !== undefined && (supportedVersions as readonly string[]).includes(requested);
  c.header(VERSION_HEADER, known ? requested : currentVersion);
  if (requested !== undefined && !known) {
    throw new ApiError("UNSUPPORTED_VERSION", { supported_versions: supportedVersions });
  }
  return requested;
}

/** Stamps the response with the merchant's pinned version when the request named none. */
export function answerWithPinned(c: Context, requested: string | undefined, pinned: string): void {
  if (requested === undefined)
    c.header(VERSION_HEADER, (supportedVersions as readonly string[]).includes(pinned) ? pinned : currentVersion);
}
