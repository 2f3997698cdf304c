/**
 * The service's key material, read from the configuration once per bindings object. Domain
 * operations receive what they need from here as plain values; they never read configuration.
 */
import { importSigningKeys, type KeySet } from "../lib/signing";
import { type TemplateProtector, templateProtector } from "../lib/template-protection";
import type { Config, ServiceSecret } from "./config";
import type { Database } from "./db/client";

/** A secret binding a function cannot work without; its absence is a deployment error (500, logged). */
function requireSecret(config: Config, name: ServiceSecret): string {
  const value = config[name];
  if (!value) throw new Error(`missing secret binding ${name}`);
  return value;
}

const keySets = new WeakMap<Config, Promise<KeySet>>();

/** The signing keys of SIGNING_KEYS_JWK, imported once per configuration. */
export function signingKeysOf(config: Config): Promise<KeySet> {
  let keys = keySets.get(config);
  if (!keys) {
    keys = importSigningKeys(requireSecret(config, "SIGNING_KEYS_JWK"));
    keySets.set(config, keys);
  }
  return keys;
}

const protectors = new WeakMap<Config, Promise<TemplateProtector>>();

/**
 * The protected-template store and this deployment's protector (TEMPLATE_PROTECTION_KEY): the
 * store is TEMPLATE_STORE_URL, by default the main database, so it can be a separately held
 * database or role.
 */
async function templatesOf(vars: {
  config: Config;
  db(url?: string): Database;
}): Promise<{ store: Database; protector: TemplateProtector }> {
  const { config } = vars;
  let protector = protectors.get(config);
  if (!protector) {
    protector = templateProtector(requireSecret(config, "TEMPLATE_PROTECTION_KEY"));
    protectors.set(config, protector);
  }
  return { store: vars.db(config.TEMPLATE_STORE_URL ?? config.DATABASE_URL), protector: await protector };
}

/**
 * The key material of the acts on a person (enrol, identify, recognise, claim, prove an attribute,
 * the sink, a hosted session's completion), assembled here once for every surface: the template
 * store and its protector, the pseudonym secret (SUBJECT_REF_SECRET), and the signing keys, imported
 * when an act first signs (unusable keys are that act's error, not every request's).
 */
export interface KeyMaterial {
  templates: { store: Database; protector: TemplateProtector };
  subjectRefSecret: string;
  signing: () => Promise<KeySet>;
}

/** The key material of a request's configuration (each part read and imported once per configuration). */
export async function keyMaterialOf(vars: { config: Config; db(url?: string): Database }): Promise<KeyMaterial> {
  return {
    templates: await templatesOf(vars),
    subjectRefSecret: requireSecret(vars.config, "SUBJECT_REF_SECRET"),
    signing: () => signingKeysOf(vars.config),
  };
}
