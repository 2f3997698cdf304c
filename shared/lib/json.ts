/**
 * JSON as the caller wrote it: what `JSON.parse` loses or lets through and the API still has to
 * judge. How deep it nests, text that cannot be stored (a NUL, an unpaired surrogate) and the
 * source text of number literals (`1299.0` and `1e3` parse to integers). Every walk is iterative,
 * so a deeply nested body cannot overflow the stack.
 */

/** A NUL, or a UTF-16 surrogate without its partner: Postgres `text` and `jsonb` refuse both. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * True when `text` holds a character no Postgres text column or jsonb value can store.
 *
 * @example hasUnstorableText("a\u0000b") // true
 */
export function hasUnstorableText(text: string): boolean {
  return UNSTORABLE.test(text);
}

const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, "g");

/**
 * `text` with each unstorable character written as a `\uXXXX` escape: a key that can be echoed.
 *
 * @example escapeUnstorable("a\u0000b") // "a\\u0000b"
 */
export function escapeUnstorable(text: string): string {
  return text.replace(UNSTORABLE_ALL, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A path step back to the root, built only when a path is reported. */
interface Step {
  key: string;
  parent: Step | null;
}

function pathOf(step: Step | null): string[] {
  const path: string[] = [];
  for (let at = step; at; at = at.parent) path.push(at.key);
  return path.reverse();
}

/**
 * The path of an object or array nested more than `maxDepth` levels deep in `value` (`value`
 * itself is level 1), or null when nothing is. Walks without recursion and stops at the first one,
 * so it costs no stack and no more than one pass over what it visits.
 *
 * @example tooDeepPath({ a: [[1]] }, 2) // ["a", "0"]
 */
export function tooDeepPath(value: unknown, maxDepth: number): string[] | null {
  const pending: { node: unknown; depth: number; at: Step | null }[] = [{ node: value, depth: 1, at: null }];
  while (pending.length > 0) {
    const { node, depth, at } = pending.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (depth > maxDepth) return pathOf(at);
    const entries = Array.isArray(node) ? node.map((item, index) => [String(index), item] as const) : Object.entries(node);
    for (const [key, child] of entries) pending.push({ node: child, depth: depth + 1, at: { key, parent: at } });
  }
  return null;
}

/**
 * The paths (object keys and array indices, in document order) of every string in `value`, object
 * keys included, that holds unstorable text. A bad key is reported as the path to that key.
 *
 * @example unstorableTextPaths({ a: ["ok", "\ud800"], "b\u0000": 1 }) // [["a", "1"], ["b\u0000"]]
 */
export function unstorableTextPaths(value: unknown): string[][] {
  const found: string[][] = [];
  // a stack in reverse document order; `key: true` stands for the object key that ends `at`
  const pending: { node: unknown; at: Step | null; key?: true }[] = [{ node: value, at: null }];
  while (pending.length > 0) {
    const { node, at, key: isKey } = pending.pop()!;
    if (isKey) {
      found.push(pathOf(at));
    } else if (typeof node === "string") {
      if (hasUnstorableText(node)) found.push(pathOf(at));
    } else if (typeof node === "object" && node !== null) {
      const entries = Array.isArray(node) ? node.map((item, index) => [String(index), item] as const) : Object.entries(node);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i];
        const step = { key, parent: at };
        pending.push({ node: child, at: step });
        if (!Array.isArray(node) && hasUnstorableText(key)) pending.push({ node: key, at: step, key: true });
      }
    }
  }
  return found;
}

/** The key of a path in the map `numberLiterals` returns. */
export function pathKey(path: readonly string[]): string {
  return JSON.stringify(path);
}

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * The source text of every number literal in the JSON text `text`, by `pathKey` of its path. When
 * a key repeats, the later literal wins, as it does in `JSON.parse`; a literal recorded for a path
 * whose parsed value is no longer a number is stale, so callers look up only paths where
 * `JSON.parse` gave a number. `text` must be valid JSON (parse it first).
 *
 * @example numberLiterals('{"amount": 1299.0, "n": [1e3]}').get(pathKey(["amount"])) // "1299.0"
 */
export function numberLiterals(text: string): Map<string, string> {
  const literals = new Map<string, string>();
  const path: string[] = [];
  const inObject: boolean[] = [];
  let expectingKey = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === "{" || ch === "[") {
      inObject.push(ch === "{");
      path.push(ch === "{" ? "" : "0");
      expectingKey = ch === "{";
      i++;
    } else if (ch === "}" || ch === "]") {
      inObject.pop();
      path.pop();
      i++;
    } else if (ch === ",") {
      if (inObject.at(-1)) expectingKey = true;
      else path[path.length - 1] = String(Number(path[path.length - 1]) + 1);
      i++;
    } else if (ch === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      if (expectingKey) {
        path[path.length - 1] = JSON.parse(text.slice(i, end + 1)) as string;
        expectingKey = false;
      }
      i = end + 1;
    } else if (ch === "-" || (ch >= "0" && ch <= "9")) {
      NUMBER.lastIndex = i;
      const literal = NUMBER.exec(text)![0];
      literals.set(pathKey(path), literal);
      i += literal.length;
    } else {
      i++;
    }
  }
  return literals;
}

/**
 * A lookup of the number literals of the JSON text `text` as written, by path under `prefix` (the
 * path of the value they belong to, e.g. `["params", "arguments"]` inside a JSON-RPC message); the
 * text is scanned on the first lookup only.
 *
 * @example writtenNumbers('{"a": {"amount": 1e3}}', ["a"])(["amount"]) // "1e3"
 */
export function writtenNumbers(text: string, prefix: readonly string[] = []): (path: readonly string[]) => string | undefined {
  let literals: Map<string, string> | undefined;
  return (path) => (literals ??= numberLiterals(text)).get(pathKey([...prefix, ...path]));
}

/**
 * JSON with object keys sorted at every level (RFC 8785 for the strings, integers and finite
 * numbers the service discloses or signs): the bytes a disclosure's `contentDigest`
 * and a device's descriptor digest (shared/contracts/device.ts) are taken over, so a verifier
 * recomputes them whatever key order its JSON library keeps.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
