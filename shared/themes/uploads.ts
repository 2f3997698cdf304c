/**
 * Serving the merchants' uploaded theme assets (D-526): `<32 hex>` is the file itself, `<32 hex>.css`
 * a font's stylesheet. Anyone may fetch them (the hosted screen loads them with no key); the id is
 * random and the bytes behind it never change, so the answer is cacheable for a year.
 */
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { canonicalUuid } from "../lib/uuid";
import { fontStylesheet } from "./assets";
import type {} from "./rpc";

/** The served form of an uploaded asset's file name, or null when there is none. */
export async function uploadedAsset(
  deps: Deps,
  file: string,
): Promise<{ contentType: string; body: Uint8Array<ArrayBuffer> | string } | null> {
  const match = /^([0-9a-f]{32})(\.css)?$/.exec(file);
  const id = match ? canonicalUuid(match[1]!) : null;
  if (!match || !id) return null;
  const asset = await rpc(deps.sql, "theme_asset_get", { id });
  if (!asset) return null;
  if (match[2]) {
    return asset.family
      ? { contentType: "text/css; charset=utf-8", body: fontStylesheet(asset.family, asset.content_type, match[1]!) }
      : null;
  }
  return { contentType: asset.content_type, body: Uint8Array.from(atob(asset.content_base64), (ch) => ch.charCodeAt(0)) };
}
