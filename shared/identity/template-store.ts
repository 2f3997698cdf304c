import type { Environment } from "../platform/api-keys";
import type { AppContext } from "../platform/app";
import { requireSecret } from "../platform/config";
import { rpc } from "../platform/db/client";
import { type TemplateProtector, templateProtector } from "./template-protection";

export interface TemplateMatch {
  identity_id: string;
  similarity: number;
  /** False when the identity was erased: found, but never to be attached to anything. */
  reachable: boolean;
}

/** The protector for this deployment's TEMPLATE_PROTECTION_KEY. */
export function protectorFor(c: AppContext): Promise<TemplateProtector> {
  return templateProtector(requireSecret(c.var.config, "TEMPLATE_PROTECTION_KEY"));
}

/** The template store's connection: TEMPLATE_STORE_URL, by default the main database. */
export function templateStoreDb(c: AppContext) {
  return c.var.db(c.var.config.TEMPLATE_STORE_URL ?? c.var.config.DATABASE_URL);
}

/** The best stored match for a protected embedding in one environment (HNSW where available). */
export async function bestMatch(
  c: AppContext,
  environment: Environment,
  protector: TemplateProtector,
  protectedEmbedding: number[],
): Promise<TemplateMatch | null> {
  const matches = await rpc<TemplateMatch[]>(templateStoreDb(c), "face_template_search", {
    environment,
    key_id: protector.keyId,
    embedding: protectedEmbedding,
    limit: 1,
  });
  return matches[0] ?? null;
}
