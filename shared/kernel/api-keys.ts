import { randomBase62, sha256Hex } from "../lib/crypto";
import type { Environment, KeyKind } from "./principal";

const KEY_FORMAT = /^(pk|sk)_(test|live)_[0-9A-Za-z]{32,128}$/;
const RANDOM_PART_LENGTH = 40;

interface ParsedKey {
  kind: KeyKind;
  environment: Environment;
}

/** The kind and environment fixed by a key's prefix, or null when the key is not well formed. */
export function parseApiKey(key: string): ParsedKey | null {
  const match = KEY_FORMAT.exec(key);
  if (!match) return null;
  return { kind: match[1] === "pk" ? "publishable" : "secret", environment: match[2] as Environment };
}

/** A new key: prefix plus 40 random base62 characters (about 238 bits). Shown once; store only its hash. */
export async function mintApiKey(kind: KeyKind, environment: Environment): Promise<{ key: string; hash: string }> {
  const key = `${kind === "publishable" ? "pk" : "sk"}_${environment}_${randomBase62(RANDOM_PART_LENGTH)}`;
  return { key, hash: await sha256Hex(key) };
}
