import type { Statements } from "../kernel/db/client";
import { rpc } from "../kernel/db/rpc";
import type { Environment } from "../kernel/principal";
import type { TemplateProtector } from "../lib/template-protection";
import type { TemplateMatch } from "./rpc";

/**
 * Where protected templates live and the key that protects them: the template store's connection
 * (TEMPLATE_STORE_URL, by default the main database) and this deployment's protector. The store
 * answers similarities only; a template never comes back (D-680).
 */
export interface Templates {
  store: Statements;
  protector: TemplateProtector;
}

/**
 * The best stored match for a protected embedding in one environment (HNSW where available). With
 * `merchantId`, only among the persons who consented with that merchant (isolation by merchant);
 * without, across the environment (enrollment: one identity per face).
 */
export async function bestMatch(
  templates: Templates,
  environment: Environment,
  protectedEmbedding: number[],
  merchantId?: string,
): Promise<TemplateMatch | null> {
  return (await bestMatches(templates, environment, protectedEmbedding, merchantId, 1))[0] ?? null;
}

/** The `limit` best stored matches, best first (as {@link bestMatch}): the runner-up tells a match from a near miss. */
export async function bestMatches(
  templates: Templates,
  environment: Environment,
  protectedEmbedding: number[],
  merchantId: string | undefined,
  limit: number,
): Promise<TemplateMatch[]> {
  return await rpc(templates.store, "face_template_search", {
    environment,
    key_id: templates.protector.keyId,
    embedding: protectedEmbedding,
    code: templates.protector.code(protectedEmbedding),
    limit,
    ...(merchantId ? { merchant_id: merchantId } : {}),
  });
}

/**
 * The exact cosine of a protected live embedding and one identity's stored template, computed in the
 * store (the template never comes back, D-680); null when the identity has no template under this key.
 */
export async function templateSimilarity(
  templates: Templates,
  environment: Environment,
  identityId: string,
  protectedEmbedding: number[],
): Promise<number | null> {
  const { similarity } = await rpc(templates.store, "face_template_verify", {
    environment,
    identity_id: identityId,
    key_id: templates.protector.keyId,
    embedding: protectedEmbedding,
  });
  return similarity;
}
