import * as v from "valibot";
import { attestationFormats } from "../contracts/device";

/** One certificate in PEM. */
const PEM_CERTIFICATE = /^-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----\s*$/;

/** Bindings every function worker receives (wrangler vars/secrets in production, miniflare bindings locally). */
const configSchema = v.object({
  DATABASE_URL: v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\//, "DATABASE_URL must be a postgres:// URL")),
  UPSTASH_REDIS_REST_URL: v.optional(v.pipe(v.string(), v.url())),
  UPSTASH_REDIS_REST_TOKEN: v.optional(v.string()),
  /**
   * Local runs only (scripts/local/rate-limit-server.ts): the counters every worker of one `npm
   * start` shares when no Upstash is configured. Never set when deployed.
   */
  LOCAL_RATE_LIMIT_URL: v.optional(v.pipe(v.string(), v.url())),
  LEGACY_API_KEY_HEADER: v.optional(
    v.pipe(v.string(), v.toLowerCase(), v.regex(/^[a-z0-9-]+$/, "LEGACY_API_KEY_HEADER must be a header name")),
    "x-api-key",
  ),
  TEST_CLOCK: v.optional(v.picklist(["0", "1"]), "0"),
  TEMPLATE_STORE_URL: v.optional(v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\//, "TEMPLATE_STORE_URL must be a postgres:// URL"))),
  SUBJECT_REF_SECRET: v.optional(v.pipe(v.string(), v.minLength(32, "SUBJECT_REF_SECRET must be at least 32 characters"))),
  TEMPLATE_PROTECTION_KEY: v.optional(v.pipe(v.string(), v.minLength(32, "TEMPLATE_PROTECTION_KEY must be at least 32 characters"))),
  SIGNING_KEYS_JWK: v.optional(v.string()),
  /** The service role's bearer key: `svc_` and at least 28 more characters (the local default is `svc_` and 64 hex). */
  SERVICE_ROLE_KEY: v.optional(
    v.pipe(v.string(), v.regex(/^svc_[\x21-\x7e]{28,}$/, "SERVICE_ROLE_KEY must be svc_ followed by at least 28 printable characters")),
  ),
  PUBLIC_BASE_URL: v.optional(v.pipe(v.string(), v.url())),
  /**
   * Attestation roots this deployment trusts beside those pinned in the repository
   * (shared/devices/trust-roots.ts), per statement format, as JSON: {"packed": ["-----BEGIN
   * CERTIFICATE-----…"], "tpm": […]}. For an organisation's own authenticators (enterprise
   * attestation) or a vendor not pinned yet; docs/devices.md, "Attestation and trust roots".
   */
  DEVICE_ATTESTATION_ROOTS: v.optional(
    v.pipe(
      v.string(),
      v.parseJson(undefined, "DEVICE_ATTESTATION_ROOTS must be JSON"),
      v.record(
        v.picklist(
          attestationFormats.filter((format) => format !== "none"),
          "DEVICE_ATTESTATION_ROOTS: a key is an attestation format",
        ),
        v.array(v.pipe(v.string(), v.regex(PEM_CERTIFICATE, "DEVICE_ATTESTATION_ROOTS: each root is one PEM certificate"))),
      ),
    ),
  ),
  THEME_ASSETS_BASE_URL: v.optional(v.pipe(v.string(), v.url())),
  DEPLOYMENT_ID: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9._-]{1,64}$/, "DEPLOYMENT_ID must be 1 to 64 of A-Z a-z 0-9 . _ -")),
    "default",
  ),
  /** Encrypts webhook endpoint secrets at rest (shared/webhooks/secret-box.ts). */
  WEBHOOK_SECRET_KEY: v.optional(v.pipe(v.string(), v.minLength(32, "WEBHOOK_SECRET_KEY must be at least 32 characters"))),
  /** During a key rotation, the key the secrets not yet re-sealed (`webhook reseal`) are still sealed under. */
  WEBHOOK_SECRET_KEY_PREVIOUS: v.optional(
    v.pipe(v.string(), v.minLength(32, "WEBHOOK_SECRET_KEY_PREVIOUS must be at least 32 characters")),
  ),
  /**
   * "1" (default): a request whose change wrote events a merchant waits for delivers them right after
   * its answer, in a quick pass of its own (shared/webhooks/run.ts `deliverSoon`, D-660); "0" leaves
   * every delivery to the cron's tick. The test run sets "0" so a tick's counts stay exact; the
   * quick pass's own tests turn it on.
   */
  WEBHOOK_QUICK_PASS: v.optional(v.picklist(["0", "1"]), "1"),
  /** "1" lets webhook endpoints be plain http on a loopback host: local development and tests only. */
  WEBHOOK_ALLOW_LOOPBACK_HTTP: v.optional(v.picklist(["0", "1"]), "0"),
  /**
   * "1" lets the MCP server fetch a client's metadata document (and the keys it names) from a
   * loopback host: tests only (their documents are served on 127.0.0.1); deployed, only the public Internet.
   */
  OAUTH_CIMD_ALLOW_LOOPBACK: v.optional(v.picklist(["0", "1"]), "0"),
  /**
   * The public seal (docs/receipts.md#the-chain-sink): an EVM node's JSON-RPC URL and the anchoring
   * account's key (0x and 64 hex), both or neither. Neither: roots are recorded locally only.
   */
  ANCHOR_CHAIN_RPC_URL: v.optional(v.pipe(v.string(), v.url(), v.regex(/^https?:\/\//, "ANCHOR_CHAIN_RPC_URL must be an http(s) URL"))),
  ANCHOR_CHAIN_PRIVATE_KEY: v.optional(
    v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{64}$/, "ANCHOR_CHAIN_PRIVATE_KEY must be 0x followed by 64 hex characters")),
  ),
  /** Blocks an anchor's transaction must have (its own included) before the anchor is recorded (default 3). */
  ANCHOR_CHAIN_CONFIRMATIONS: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,3}$/, "ANCHOR_CHAIN_CONFIRMATIONS must be a number of blocks"),
      v.transform(Number),
      v.minValue(1),
      v.maxValue(128),
    ),
    "3",
  ),
  /**
   * Blocks (its own included) before a confirmed anchor may count as final and is no longer
   * re-verified for a reorg (default 64; at least the confirmations): final once this deep and at or
   * below the node's `finalized` block (D-650).
   */
  ANCHOR_CHAIN_FINALITY_DEPTH: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,5}$/, "ANCHOR_CHAIN_FINALITY_DEPTH must be a number of blocks"),
      v.transform(Number),
      v.minValue(1),
      v.maxValue(50_000),
    ),
    "64",
  ),
  /**
   * The most the anchoring account pays per gas, in gwei (whole or decimal); unset, no cap. While
   * fees are above it nothing is sent: the receipts stay valid and pending (D-515).
   */
  ANCHOR_CHAIN_MAX_FEE_GWEI: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,6}(\.\d{1,9})?$/, "ANCHOR_CHAIN_MAX_FEE_GWEI must be gwei, for example 0.05")),
  ),
  /** Per-attempt webhook timeout in milliseconds (default 15000). */
  WEBHOOK_TIMEOUT_MS: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,6}$/, "WEBHOOK_TIMEOUT_MS must be milliseconds"),
      v.transform(Number),
      v.minValue(100),
      v.maxValue(15_000),
    ),
    "15000",
  ),
});

export type Config = v.InferOutput<typeof configSchema>;

/** Every binding a function worker receives (those that are set): the keys of the schema above. */
export const bindingNames = Object.keys(configSchema.entries) as (keyof Config)[];

/**
 * The service's own key material: set per Worker with `wrangler secret put` when deployed,
 * generated once into .data/secrets.json for local runs (scripts/local/secrets.ts).
 */
export const serviceSecrets = [
  "SUBJECT_REF_SECRET",
  "TEMPLATE_PROTECTION_KEY",
  "SIGNING_KEYS_JWK",
  "SERVICE_ROLE_KEY",
  "WEBHOOK_SECRET_KEY",
] as const;
export type ServiceSecret = (typeof serviceSecrets)[number];
export type Bindings = v.InferInput<typeof configSchema> & Record<string, unknown>;

const parsed = new WeakMap<object, Config>();

/**
 * Validates the worker's bindings once per bindings object and returns them typed.
 * A misconfiguration fails loudly in the log and as a generic 500 to the caller.
 *
 * @example const { DATABASE_URL } = readConfig(c.env);
 */
export function readConfig(env: Bindings): Config {
  const cached = parsed.get(env);
  if (cached) return cached;
  const result = v.safeParse(configSchema, env);
  if (!result.success) {
    const problems = result.issues.map((issue) => `${v.getDotPath(issue) ?? "?"}: ${issue.message}`);
    throw new Error(`invalid configuration: ${problems.join("; ")}`);
  }
  parsed.set(env, result.output);
  return result.output;
}

/**
 * The service's own base URL, for the absolute URLs it puts into responses: `PUBLIC_BASE_URL` when
 * the deployment names it (behind a proxy or on a custom domain), otherwise the origin the request reached.
 *
 * @example serviceBaseUrl(config, c.req.url) // "https://auth.example.com"
 */
export function serviceBaseUrl(config: Pick<Config, "PUBLIC_BASE_URL">, requestUrl: string): string {
  return config.PUBLIC_BASE_URL ?? new URL(requestUrl).origin;
}
