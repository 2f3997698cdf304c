import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { type ServiceSecret, serviceSecrets } from "../../shared/kernel/config";

function generate(name: ServiceSecret): string {
  switch (name) {
    case "SIGNING_KEYS_JWK": {
      const { privateKey } = generateKeyPairSync("ed25519");
      const jwk = privateKey.export({ format: "jwk" });
      return JSON.stringify([{ ...jwk, kid: `ed25519-${randomBytes(6).toString("hex")}`, alg: "EdDSA", use: "sig" }]);
    }
    case "SERVICE_ROLE_KEY":
      return `svc_${randomBytes(32).toString("hex")}`;
    default:
      return randomBytes(32).toString("hex");
  }
}

/**
 * The secrets for a local run: values from `env` win; missing ones are read from `file` (when
 * given) or generated and written there with mode 0600, so a persisted embedded database keeps
 * working across restarts (subject_refs and protected templates depend on these keys).
 */
export function localSecrets(env: Record<string, string | undefined>, file?: string): Record<ServiceSecret, string> {
  const stored: Partial<Record<ServiceSecret, string>> = file && existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
  let changed = false;
  const secrets = {} as Record<ServiceSecret, string>;
  for (const name of serviceSecrets) {
    const value = env[name] ?? stored[name];
    if (value) secrets[name] = value;
    else {
      secrets[name] = stored[name] = generate(name);
      changed = true;
    }
  }
  if (file && changed) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  }
  return secrets;
}
