/**
 * A CPU profile of one worker in workerd (`npm run bench:consume -- --cpu-profile`): V8's sampling
 * profiler through workerd's inspector (the DevTools protocol on `inspectorPort`), started before
 * a load and stopped after it; each sample is mapped back through the bundle's source map to the
 * file it ran in, and its time is counted for the part of the service or the package that file
 * belongs to. Time in native code (JSON, crypto, sockets, the runtime's own bindings) counts for
 * the nearest JavaScript caller's part, so the driver's socket reads count as the driver.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { DIST_DIR } from "../local/functions";
import type { RunningServer } from "../local/server";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The parts the samples are counted for, by the source file's path (the first that matches). */
const PARTS: [RegExp, string][] = [
  [/node_modules\/postgres\//, "postgres.js: connection start-up, protocol, socket reads and writes"],
  [/node_modules\/hono\//, "Hono: routing, context, responses"],
  [/node_modules\/valibot\//, "valibot: input validation"],
  [/node_modules\/@upstash\//, "the rate limiter's client"],
  [/shared\/kernel\/db\//, "the service's database client (shared/kernel/db)"],
  [/shared\/kernel\/(authenticate|api-keys|keys|principal)/, "key authentication and hashing (shared/kernel)"],
  [/shared\/kernel\/(replay-guard)/, "the replay guard (shared/kernel)"],
  [/shared\/edge\/(rate-limit|limits)/, "rate limits (shared/edge)"],
  [/shared\/edge\//, "the edge's middleware and answers (shared/edge)"],
  [/shared\/kernel\//, "the kernel (errors, JSON, validation glue)"],
  [/shared\/mandates\//, "the mandates domain (shared/mandates)"],
  [/shared\//, "other domains (shared/)"],
  [/functions\//, "the function itself (functions/)"],
  [/node_modules\/([^/]+(\/[^/]+)?)\//, "package: $1"],
  [/^node-internal:/, "workerd's Node compatibility (Buffer, events, timers)"],
  [/^cloudflare:sockets/, "cloudflare:sockets (the TCP socket)"],
];

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** A source map's mappings as, per generated line, the sorted columns and the source index each starts. */
function decodeMappings(mappings: string): { column: number; source: number }[][] {
  const lines: { column: number; source: number }[][] = [];
  let source = 0;
  for (const line of mappings.split(";")) {
    const segments: { column: number; source: number }[] = [];
    let column = 0;
    for (const segment of line.split(",")) {
      if (!segment) continue;
      const values: number[] = [];
      let value = 0;
      let shift = 0;
      for (const char of segment) {
        const digit = BASE64.indexOf(char);
        value += (digit & 31) << shift;
        if (digit & 32) shift += 5;
        else {
          values.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      column += values[0] ?? 0;
      if (values.length > 1) source += values[1] ?? 0;
      segments.push({ column, source });
    }
    lines.push(segments);
  }
  return lines;
}

/** Sends DevTools protocol commands over one WebSocket and answers their results. */
async function inspector(url: string) {
  const Socket = (globalThis as { WebSocket?: typeof WebSocket }).WebSocket;
  if (!Socket) throw new Error("--cpu-profile needs a WebSocket in Node: Node 22, or NODE_OPTIONS=--experimental-websocket on Node 20");
  const socket = new Socket(url);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let next = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result);
  };
  return {
    send<T = unknown>(method: string, params: object = {}): Promise<T> {
      const id = ++next;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise<T>((resolve) => waiting.set(id, resolve as (result: unknown) => void));
    },
    close: () => socket.close(),
  };
}

/**
 * Profiles `worker` of `server` while `load` runs (`requests` requests); answers a Markdown table of
 * its CPU time by part, per request, and the functions that took most of it.
 */
export async function profileWorker(server: RunningServer, worker: string, requests: number, load: () => Promise<void>): Promise<string> {
  if (!server.inspectorPort) throw new Error("the server was started without an inspector port");
  const session = await inspector(`ws://127.0.0.1:${server.inspectorPort}/core:user:${worker}`);
  await session.send("Profiler.enable");
  await session.send("Profiler.setSamplingInterval", { interval: 100 });
  await session.send("Profiler.start");
  const started = performance.now();
  await load();
  const wall = performance.now() - started;
  const { profile } = await session.send<{ profile: Profile }>("Profiler.stop");
  session.close();

  // workerd names a module by its path below the worker's modules root: the bundle's folder of this run (scripts/local/server.ts).
  const functionsDir = join(DIST_DIR, "run", `${process.pid}-${new URL(server.url).port}`, "functions");
  const bundlePath = (url: string) => (url.startsWith("file://") ? new URL(url).pathname : join(functionsDir, url));
  const maps = new Map<string, { sources: string[]; lines: ReturnType<typeof decodeMappings> } | null>();
  const sourceOf = async (frame: CallFrame): Promise<string | null> => {
    if (!frame.url) return null;
    if (!maps.has(frame.url)) {
      const map = await readFile(`${bundlePath(frame.url)}.map`, "utf8")
        .then((text) => JSON.parse(text) as { sources: string[]; mappings: string })
        .catch(() => null);
      maps.set(frame.url, map ? { sources: map.sources, lines: decodeMappings(map.mappings) } : null);
    }
    const map = maps.get(frame.url);
    if (!map) return frame.url;
    const segments = map.lines[frame.lineNumber] ?? [];
    let found: { column: number; source: number } | undefined;
    for (const segment of segments) {
      if (segment.column > frame.columnNumber) break;
      found = segment;
    }
    return found ? (map.sources[found.source] ?? frame.url) : frame.url;
  };
  const partOf = (source: string) => {
    for (const [pattern, name] of PARTS) {
      const match = pattern.exec(source);
      if (match) return name.replace("$1", match[1] ?? "");
    }
    return source;
  };

  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const sources = new Map<number, string | null>();
  for (const node of profile.nodes) sources.set(node.id, await sourceOf(node.callFrame));
  /** The part a node's time counts for: its own source's, else its nearest JavaScript caller's, else the runtime's name for it. */
  const partOfNode = (id: number): string => {
    const own = byId.get(id)!;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const source = sources.get(at);
      if (source) return partOf(source);
    }
    return own.callFrame.functionName.startsWith("(") ? own.callFrame.functionName : "(native, no JavaScript caller)";
  };
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  const parts = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === "(idle)") continue;
    busy += us;
    const part = partOfNode(id);
    parts.set(part, (parts.get(part) ?? 0) + us);
    const source = sources.get(id);
    const name = `${node.callFrame.functionName || "(anonymous)"} (${source ? source.replace(/^.*node_modules\//, "").replace(/^(\.\.\/)+/, "") : "native"})`;
    functions.set(name, (functions.get(name) ?? 0) + us);
  }
  const perRequest = (us: number) => (us / requests / 1000).toFixed(3);
  const lines = [
    `${requests} requests in ${(wall / 1000).toFixed(1)} s; the worker's isolate was busy ${(busy / 1000).toFixed(0)} ms of it: **${perRequest(busy)} ms of CPU per request** (sampled every 100 µs; the profiler's own cost included).`,
    "",
    "| part (by source file; native code counted for its JavaScript caller) | ms per request | share |",
    "|---|---|---|",
    ...[...parts].sort((a, b) => b[1] - a[1]).map(([part, us]) => `| ${part} | ${perRequest(us)} | ${((100 * us) / busy).toFixed(1)}% |`),
    "",
    "The functions with the most time of their own:",
    "",
    "| function (source) | ms per request | share |",
    "|---|---|---|",
    ...[...functions]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20)
      .map(([name, us]) => `| ${name.replace(/\|/g, "\\|")} | ${perRequest(us)} | ${((100 * us) / busy).toFixed(1)}% |`),
  ];
  return lines.join("\n");
}
