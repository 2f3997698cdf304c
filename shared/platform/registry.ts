/**
 * The function registry: every function the service deploys, each as its own Worker from
 * functions/<name>/index.ts, with its cron schedules. Build, deploy, the local server and the router
 * read names and schedules from here; tests/unit/architecture.test.ts checks the folders match.
 * The bindings every function receives are the keys of the configuration schema (config.ts).
 */
const functionRegistry = {
  "alias-availability": {},
  "face-identify": {},
  "hosted-capture": {},
  "hosted-session-consume": {},
  "hosted-session-create": {},
  "hosted-session-get": {},
  "mandate-check": {},
  "mandate-consume": {},
  "mandate-get": {},
  "mandate-issue": {},
  "mandate-revoke": {},
  "mandate-scopes": {},
  "merchant-theme-get": {},
  "outbox-worker": { crons: ["* * * * *"] },
  "process-biovital-enrollment": {},
  "process-biovital-transaction": {},
  "receipt-anchor": { crons: ["* * * * *"] },
  "receipt-verify": {},
} as const satisfies Record<string, { crons?: readonly string[] }>;

export type FunctionName = keyof typeof functionRegistry;

export const functionNames = Object.keys(functionRegistry) as FunctionName[];

/** The cron schedules of a function (wrangler `--schedule` when deployed, a minute timer locally). */
export function cronsOf(name: FunctionName): readonly string[] {
  const spec: { crons?: readonly string[] } = functionRegistry[name];
  return spec.crons ?? [];
}
