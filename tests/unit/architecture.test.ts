/**
 * The layering of docs/architecture.md, checked on the import graph of the source (type imports
 * included): imports run one way (lib and engine ← kernel ← domains ← edge ← surfaces; the browser
 * client on lib, engine and the contracts alone; the contracts, the wire shapes the server and the
 * page share, on lib alone), no domain module reaches Hono even through another module,
 * there is no import cycle, and the function folders are exactly the registry's.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { functionNames } from "../../shared/kernel/registry";

const ROOT = resolve(import.meta.dirname, "../..");
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s*["']([^"']+)["']/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Each file's imports: other source files (repository-relative) and packages (bare names). */
function importGraph(files: string[]): Map<string, { files: string[]; packages: string[] }> {
  const graph = new Map<string, { files: string[]; packages: string[] }>();
  for (const file of files) {
    const source = readFileSync(join(ROOT, file), "utf8");
    const entry = { files: [] as string[], packages: [] as string[] };
    for (const match of source.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3];
      if (!specifier.startsWith(".")) {
        entry.packages.push(specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]);
        continue;
      }
      const base = join(dirname(file), specifier).replace(/\.js$/, "");
      const target = [`${base}.ts`, join(base, "index.ts")].find(
        (candidate) => existsSync(join(ROOT, candidate)) && statSync(join(ROOT, candidate)).isFile(),
      );
      if (!target) throw new Error(`${file}: cannot resolve ${specifier}`);
      entry.files.push(relative(ROOT, join(ROOT, target)));
    }
    graph.set(file, entry);
  }
  return graph;
}

const files = ["shared", "functions", "scripts", "client"].flatMap(sourceFiles);
const graph = importGraph(files);

type Layer = "lib" | "engine" | "contracts" | "kernel" | "domain" | "edge" | "surface" | "client" | "tooling";

/**
 * The layer of a file: lib, engine, contracts (the wire shapes server and page share), kernel,
 * domain, edge (Hono), surface (functions), client (the browser's) or tooling (scripts).
 */
function layerOf(file: string): Layer {
  if (file.startsWith("functions/")) return "surface";
  if (file.startsWith("client/")) return "client";
  if (file.startsWith("scripts/")) return "tooling";
  if (file.startsWith("shared/lib/")) return "lib";
  if (file.startsWith("shared/engine/")) return "engine";
  if (file.startsWith("shared/contracts/")) return "contracts";
  if (file.startsWith("shared/kernel/")) return "kernel";
  if (file.startsWith("shared/edge/")) return "edge";
  return "domain";
}

const allowed: Record<Layer, ReadonlySet<Layer>> = {
  lib: new Set(["lib"]),
  engine: new Set(["engine", "lib"]),
  contracts: new Set(["contracts", "lib"]),
  kernel: new Set(["kernel", "lib", "engine", "contracts"]),
  domain: new Set(["domain", "kernel", "lib", "engine", "contracts"]),
  edge: new Set(["edge", "kernel", "lib", "engine", "contracts"]),
  surface: new Set(["surface", "edge", "domain", "kernel", "lib", "engine", "contracts"]),
  client: new Set(["client", "lib", "engine", "contracts"]),
  tooling: new Set(["tooling", "surface", "edge", "domain", "kernel", "lib", "engine", "contracts", "client"]),
};

/** The folder a domain file belongs to (shared/<domain>/), or null for any other layer. */
function domainOf(file: string): string | null {
  return layerOf(file) === "domain" ? file.split("/")[1] : null;
}

/** Domain folder → the other domain folders its files import. */
function domainGraph(): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const [file, { files: targets }] of graph) {
    const from = domainOf(file);
    if (!from) continue;
    const set = edges.get(from) ?? new Set<string>();
    for (const target of targets) {
      const to = domainOf(target);
      if (to && to !== from) set.add(to);
    }
    edges.set(from, set);
  }
  return edges;
}

/** The cycles among domain folders, each as a path that returns to its start. */
function domainCycles(edges: Map<string, Set<string>>): string[] {
  const cycles: string[] = [];
  const walk = (start: string, at: string, path: string[], seen: Set<string>) => {
    for (const next of edges.get(at) ?? []) {
      if (next === start) cycles.push([...path, next].join(" -> "));
      else if (!seen.has(next) && next > start) {
        seen.add(next);
        walk(start, next, [...path, next], seen);
      }
    }
  };
  for (const start of [...edges.keys()].sort()) walk(start, start, [start], new Set([start]));
  return cycles;
}

/** Every file `file` reaches through its imports, itself excluded. */
function reach(file: string, seen = new Set<string>()): Set<string> {
  for (const next of graph.get(file)?.files ?? []) {
    if (seen.has(next)) continue;
    seen.add(next);
    reach(next, seen);
  }
  return seen;
}

describe("architecture", () => {
  it("imports run one way: lib and engine, then the kernel, then domains, then the edge, then surfaces", () => {
    const wrong = files.flatMap((file) =>
      graph
        .get(file)!
        .files.filter((target) => !allowed[layerOf(file)].has(layerOf(target)))
        .map((target) => `${file} -> ${target}`),
    );
    expect(wrong).toEqual([]);
  });

  it("no domain, lib, engine, contracts or client module imports Hono, directly or through another module", () => {
    const pure = files.filter((file) => ["domain", "lib", "engine", "contracts", "client"].includes(layerOf(file)));
    const offenders = pure.filter((file) => [file, ...reach(file)].some((reached) => graph.get(reached)?.packages.includes("hono")));
    expect(offenders).toEqual([]);
  });

  it("contracts import nothing but lib, and no package: the browser bundles them whole", () => {
    const contracts = files.filter((file) => layerOf(file) === "contracts");
    expect(contracts.length).toBeGreaterThan(0);
    const wrong = contracts.flatMap((file) => {
      const { files: targets, packages } = graph.get(file)!;
      return [...targets.filter((target) => !["contracts", "lib"].includes(layerOf(target))), ...packages].map(
        (target) => `${file} -> ${target}`,
      );
    });
    expect(wrong).toEqual([]);
  });

  it("has no import cycle", () => {
    const cycles = files.filter((file) => reach(file).has(file));
    expect(cycles).toEqual([]);
  });

  it("has no cycle between domain folders (a domain either uses another or is used by it)", () => {
    expect(domainCycles(domainGraph())).toEqual([]);
  });

  it("finds a cycle between domain folders (the check itself)", () => {
    const edges = new Map([
      ["a", new Set(["b"])],
      ["b", new Set(["c"])],
      ["c", new Set(["a"])],
      ["d", new Set(["a"])],
    ]);
    expect(domainCycles(edges)).toEqual(["a -> b -> c -> a"]);
  });

  it("only surfaces and the edge itself import the edge (shared/edge/)", () => {
    const wrong = files.flatMap((file) =>
      graph
        .get(file)!
        .files.filter((target) => layerOf(target) === "edge" && !["edge", "surface", "tooling"].includes(layerOf(file)))
        .map((target) => `${file} -> ${target}`),
    );
    expect(wrong).toEqual([]);
  });

  it("serves exactly the registry's functions, each from functions/<name>/index.ts", () => {
    const folders = readdirSync(join(ROOT, "functions"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(folders).toEqual([...functionNames].sort());
    for (const name of folders) expect(existsSync(join(ROOT, "functions", name, "index.ts")), name).toBe(true);
  });

  it("fails on a domain module that reaches Hono (the check itself)", () => {
    graph.set("shared/example-domain/op.ts", { files: ["shared/edge/app.ts"], packages: [] });
    try {
      expect(
        ["shared/example-domain/op.ts", ...reach("shared/example-domain/op.ts")].some((f) => graph.get(f)?.packages.includes("hono")),
      ).toBe(true);
    } finally {
      graph.delete("shared/example-domain/op.ts");
    }
  });
});

describe("docs/architecture.md", () => {
  const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
  const map = doc.slice(doc.indexOf("## Folder map")).split("```")[1];

  /**
   * The files the folder map names. A line starts with a folder (`shared/lib/`) or a file with its
   * folder (`scripts/dev.ts`); the file and folder names after it are in that folder, an indented
   * line's in the last folder; a name that starts with a top-level folder is from the root; words
   * in parentheses and commas are skipped, and the first other word ends the list.
   */
  function namedFiles(): string[] {
    const named: string[] = [];
    let folder = "";
    for (const line of map.split("\n")) {
      const words = line
        .replace(/\([^)]*\)/g, " ")
        .trim()
        .split(/[\s,]+/)
        .filter(Boolean);
      if (words.length === 0 || words[0].includes("<")) continue;
      const indented = /^\s/.test(line);
      let base = indented ? folder : "";
      for (const [i, word] of words.entries()) {
        if (!/^[\w.-]+(\/[\w.-]+)*\/?$/.test(word) || !(/\.(ts|md|sql)$/.test(word) || word.endsWith("/"))) break;
        const path = /^(shared|functions|scripts|client|tests|docs|supabase)\//.test(word) ? word : join(base, word);
        named.push(path);
        if (i === 0 && !indented) folder = base = word.endsWith("/") ? word : `${dirname(word)}/`;
      }
    }
    return named;
  }

  it("names only files and folders that exist", () => {
    const missing = namedFiles().filter((path) => !existsSync(join(ROOT, path)));
    expect(missing).toEqual([]);
  });

  it("names every source file under shared/, scripts/ and client/", () => {
    const named = new Set(namedFiles().map((path) => path.replace(/\/$/, "")));
    const isNamed = (file: string) => named.has(file);
    const unnamed = ["shared", "scripts", "client"].flatMap(sourceFiles).filter((file) => !isNamed(file));
    expect(unnamed).toEqual([]);
  });
});
