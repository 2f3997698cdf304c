import type { TemplateProtector } from "../lib/template-protection";
import type { Sql } from "../platform/db/client";
import { rpc, type TemplateMatch } from "../platform/db/rpc";
import type { Environment } from "../platform/principal";

/**
 * Where protected templates live and the key that protects them: the template store's connection
 * (TEMPLATE_STORE_URL, by default the main database) and this deployment's protector.
 */
export interface Templates {
  store: Sql;
  protector: TemplateProtector;
}

/** The best stored match for a protected embedding in one environment (HNSW where available). */
export async function bestMatch(
  templates: Templates,
  environment: Environment,
  protectedEmbedding: number[],
): Promise<TemplateMatch | null> {
  const matches = await rpc(templates.store, "face_template_search", {
    environment,
    key_id: templates.protector.keyId,
    embedding: protectedEmbedding,
    limit: 1,
  });
  return matches[0] ?? null;
}
