/**
 * The function registry: every function the service deploys, each as its own Worker from
 * functions/<name>/index.ts, with its cron schedules, whether it serves static assets (the browser
 * client, its models and .wasm files: scripts/local/build.ts) and the path it is mounted at (default
 * `/functions/v1/<name>`; the resource API is the Worker mounted at `/v1`). Build, deploy, the local
 * server and the router read names, mounts, assets and schedules from here; tests/unit/architecture.test.ts
 * checks the folders match.
 * The bindings every function receives are the keys of the configuration schema (config.ts).
 */
const functionRegistry = {
  "agent-verification-request": {},
  "agent-verification-result": {},
  "alias-availability": {},
  "consent-retention": { crons: ["* * * * *"] },
  console: {},
  "device-add": {},
  "device-challenge": {},
  "device-manage": {},
  "disclose-claims": {},
  "face-identify": {},
  "handoff-register-public": {},
  "hosted-capture": { assets: true },
  "hosted-session-consume": {},
  "hosted-session-create": {},
  "hosted-session-get": {},
  "mandate-check": {},
  "mandate-consume": {},
  "mandate-get": {},
  "mandate-issue": {},
  "mandate-revoke": {},
  "mandate-scopes": {},
  mcp: {},
  me: { assets: true },
  "merchant-theme-get": {},
  openapi: { assets: true },
  "process-biovital-enrollment": {},
  "process-biovital-transaction": {},
  "receipt-anchor": { crons: ["* * * * *"] },
  "receipt-verify": {},
  "resource-api": { mount: "/v1", assets: true },
  "revoke-consent": {},
  "session-expiry-and-webhooks": { crons: ["* * * * *"] },
} as const satisfies Record<string, FunctionSpec>;

interface FunctionSpec {
  crons?: readonly string[];
  /** The path the Worker serves, everything under it included; default `/functions/v1/<name>`. */
  mount?: string;
  /** Serves static assets through its ASSETS binding. */
  assets?: true;
}

export type FunctionName = keyof typeof functionRegistry;

export const functionNames = Object.keys(functionRegistry) as FunctionName[];

/** The cron schedules of a function (wrangler `--schedule` when deployed, a minute timer locally). */
export function cronsOf(name: FunctionName): readonly string[] {
  const spec: FunctionSpec = functionRegistry[name];
  return spec.crons ?? [];
}

/** The path a function's Worker is mounted at: `/functions/v1/<name>`, or its own (`/v1`). */
export function mountOf(name: string): string {
  const spec: FunctionSpec | undefined = (functionRegistry as Record<string, FunctionSpec>)[name];
  return spec?.mount ?? `/functions/v1/${name}`;
}

/** Whether a function's Worker serves static assets (its `ASSETS` binding). */
export function hasAssets(name: FunctionName): boolean {
  const spec: FunctionSpec = functionRegistry[name];
  return spec.assets === true;
}
