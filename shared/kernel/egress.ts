/**
 * Where a worker may send a request it builds from what a caller named (a client's metadata
 * document, the keys that document points to): the public Internet only. Deployed on Cloudflare,
 * a Worker's `fetch` reaches nothing else (no private network, no direct IP access to a
 * Cloudflare zone, and `global_fetch_strictly_public` sends even the service's own zone through
 * the front door); locally, and wherever the runtime does not, this guard refuses a destination
 * named by an address outside the public Internet or a `localhost` name before anything is sent.
 * A host name that only resolves to such an address is the runtime's to stop (it resolves, we do not).
 */

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** IPv4 blocks that are not the public Internet (RFC 6890 and its successors): [first octets, prefix length]. */
const NON_PUBLIC_IPV4: [number[], number][] = [
  [[0], 8], // "this network"
  [[10], 8], // private
  [[100, 64], 10], // carrier-grade NAT
  [[127], 8], // loopback
  [[169, 254], 16], // link-local (cloud metadata services live here)
  [[172, 16], 12], // private
  [[192, 0, 0], 24], // IETF protocol assignments
  [[192, 168], 16], // private
  [[198, 18], 15], // benchmarking
  [[224], 3], // multicast, reserved and broadcast (224.0.0.0 and up)
];

function ipv4Value(text: string): number | null {
  const match = IPV4.exec(text);
  if (!match) return null;
  const octets = match.slice(1).map(Number);
  if (octets.some((octet) => octet > 255)) return null;
  return octets.reduce((value, octet) => value * 256 + octet, 0);
}

function isNonPublicIpv4(value: number): boolean {
  return NON_PUBLIC_IPV4.some(([first, length]) => {
    const base = [...first, 0, 0, 0, 0].slice(0, 4).reduce((sum, octet) => sum * 256 + octet, 0);
    const size = 2 ** (32 - length);
    return value >= base && value < base + size;
  });
}

/** An IPv6 literal (URL form, brackets stripped) as eight 16-bit groups, or null. */
function ipv6Groups(text: string): number[] | null {
  if (!text.includes(":")) return null;
  let address = text.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) {
    const value = ipv4Value(dotted[1]);
    if (value === null) return null;
    address = `${address.slice(0, -dotted[1].length)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head, tail, extra] = address.split("::");
  if (extra !== undefined) return null;
  const parse = (part: string | undefined) => (part ? part.split(":").map((group) => Number.parseInt(group, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return null;
  const groups = [...left, ...Array(tail === undefined ? 0 : missing).fill(0), ...right];
  return groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : null;
}

function isNonPublicIpv6(groups: number[]): boolean {
  const [first] = groups;
  if (groups.slice(0, 7).every((group) => group === 0)) return true; // :: and ::1
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return isNonPublicIpv4(groups[6] * 65536 + groups[7]); // IPv4-mapped
  }
  if ((first & 0xfe00) === 0xfc00) return true; // unique local fc00::/7
  if ((first & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((first & 0xff00) === 0xff00) return true; // multicast
  return false;
}

/**
 * Whether a URL's host names this machine or a network other than the public Internet by itself:
 * `localhost` (and any `*.localhost`), or an IP literal in a loopback, private, link-local,
 * shared, multicast or reserved block. `URL` has already turned `2130706433` or `0x7f.1` into
 * the dotted form.
 *
 * @example isNonPublicHost(new URL("https://[::1]/x").hostname) // true
 */
export function isNonPublicHost(hostname: string): boolean {
  const host = hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const v4 = ipv4Value(host);
  if (v4 !== null) return isNonPublicIpv4(v4);
  const v6 = ipv6Groups(host);
  return v6 !== null && isNonPublicIpv6(v6);
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

export interface EgressPolicy {
  /** Origins the deployment itself configured (its rate-limit store …): always reachable. */
  configuredOrigins: ReadonlySet<string>;
  /** Tests and local development only: loopback hosts are reachable too. */
  allowLoopback: boolean;
}

/** Why `url` may not be fetched under `policy`, or null when it may. */
export function egressRefusal(url: URL, policy: EgressPolicy): string | null {
  if (policy.configuredOrigins.has(url.origin)) return null;
  if (!isNonPublicHost(url.hostname)) return null;
  if (policy.allowLoopback && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return `${url.hostname} is not on the public Internet`;
}

/**
 * Puts `policy()` in front of the isolate's global `fetch`: a request to a refused destination
 * fails as an unreachable host does (a `TypeError`), before anything is sent. Installed once per
 * isolate by the worker whose libraries fetch what callers name.
 */
export function guardGlobalFetch(policy: () => EgressPolicy): void {
  const unguarded = globalThis.fetch;
  globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const refusal = egressRefusal(url, policy());
    return refusal ? Promise.reject(new TypeError(`fetch refused: ${refusal}`)) : unguarded(input, init);
  };
}
