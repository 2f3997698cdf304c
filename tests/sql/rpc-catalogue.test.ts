/**
 * The RPC catalogue against the database it types. The catalogue is the `RpcCatalogue` interface of
 * shared/kernel/db/rpc.ts as every slice (shared/<domain>/rpc.ts, shared/kernel/rpc.ts) merges into
 * it, read with the TypeScript compiler over tsconfig.json; the database's RPCs are the functions of
 * schema `public` that take one jsonb (extension members aside; tests/sql/grants.test.ts already
 * refuses any other public function). Every RPC has a row, every row an RPC, and a row's parameter
 * names exactly the top-level keys its function's body reads from `p`: through `->>`, `->`, `?`,
 * `?|`, `?&`, `#>`, `#>>` or a subscript, and through the helpers it hands the whole `p` to
 * (`private.request_authenticate(p)`, `public.identity_enroll(p)` …), followed to their own bodies.
 */
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { testDb } from "../harness/factories";

const ROOT = resolve(import.meta.dirname, "../..");
const MECHANISM = join(ROOT, "shared/kernel/db/rpc.ts");

/** Name → the keys its parameter may carry (for a union, any member's), or `open` when it takes any key. */
type Catalogue = Map<string, { keys: Set<string>; open: boolean }>;

/**
 * Where a row and its function disagree on purpose, and why. Empty today; a row here must name the
 * key and the reason, and the test fails when the exception no longer applies.
 */
const EXCEPTIONS: Record<string, { unread?: string[]; undeclared?: string[]; reason: string }> = {};

// ---------------------------------------------------------------------------------------------
// The TypeScript side
// ---------------------------------------------------------------------------------------------

/** The merged RpcCatalogue of the program tsconfig.json describes: each row's parameter keys. */
function typescriptCatalogue(): Catalogue {
  const configFile = ts.readConfigFile(join(ROOT, "tsconfig.json"), ts.sys.readFile);
  const config = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
  const checker = program.getTypeChecker();
  const mechanism = program.getSourceFile(MECHANISM);
  if (!mechanism) throw new Error(`${MECHANISM} is not in the program`);
  const declaration = mechanism.statements.find(
    (statement): statement is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(statement) && statement.name.text === "RpcCatalogue",
  );
  if (!declaration) throw new Error("RpcCatalogue is not declared in shared/kernel/db/rpc.ts");
  const catalogue = checker.getTypeAtLocation(declaration.name);

  const rows: Catalogue = new Map();
  for (const row of checker.getPropertiesOfType(catalogue)) {
    const tuple = checker.getTypeOfSymbol(row);
    const [parameter] = checker.getTypeArguments(tuple as ts.TypeReference);
    const members = parameter.isUnion() ? parameter.types : [parameter];
    const keys = new Set(members.flatMap((member) => checker.getPropertiesOfType(member).map((key) => key.name)));
    const open = members.some((member) => checker.getIndexInfosOfType(member).length > 0);
    rows.set(row.name, { keys, open });
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// The database side
// ---------------------------------------------------------------------------------------------

interface SqlFunction {
  schema: string;
  name: string;
  argNames: string[];
  source: string;
}

/** A body without its comments. */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/--[^\n]*/g, " ");
}

/** A body with its string literals emptied (so a quoted `p` is not a use of the parameter). */
function withoutStrings(source: string): string {
  return source.replace(/'(?:[^']|'')*'/g, "''");
}

const escapeDollar = (text: string) => text.replace(/[$]/g, "\\$");

/**
 * The name a body uses for its argument at `index`: its declared name, or `$n` when it has none (a
 * named argument's `$n` is not looked for: in a body that names it, `$1` is an EXECUTE's parameter).
 */
function nameOf(fn: SqlFunction, index: number): string {
  return fn.argNames[index] || `$${index + 1}`;
}

/** The calls `schema.name(args)` in a body, with each argument's text (split at top-level commas). */
function calls(source: string): { callee: string; args: string[] }[] {
  const found: { callee: string; args: string[] }[] = [];
  for (const match of source.matchAll(/\b(public|private)\.(\w+)\s*\(/g)) {
    const args: string[] = [];
    let depth = 0;
    let current = "";
    for (let i = match.index + match[0].length; i < source.length; i++) {
      const c = source[i];
      if (c === "'") {
        const end = source.indexOf("'", i + 1);
        current += source.slice(i, end + 1);
        i = end;
        continue;
      }
      if (c === "(" || c === "[") depth++;
      if ((c === ")" || c === "]") && depth-- === 0) {
        args.push(current.trim());
        break;
      }
      if (c === "," && depth === 0) {
        args.push(current.trim());
        current = "";
      } else current += c;
    }
    found.push({ callee: `${match[1]}.${match[2]}`, args });
  }
  return found;
}

/**
 * The top-level keys a body reads from its argument `name`, the helpers it hands that argument to
 * whole (callee and argument position), and the uses of it that are neither (its value escapes to
 * something the test cannot follow: an assignment, a `||`, a function of another schema …).
 */
function readsOf(source: string, name: string) {
  const body = withoutComments(source);
  const n = escapeDollar(name);
  const keys = new Set<string>();
  let understood = 0;
  const operator = new RegExp(`(?<![\\w.$])${n}\\s*(->>|->|#>>|#>|\\?)\\s*'((?:[^']|'')*)'`, "g");
  for (const [, op, key] of body.matchAll(operator)) {
    keys.add(op.startsWith("#") ? key.replace(/^\{/, "").split(/[,}]/)[0].replace(/^"|"$/g, "") : key);
    understood++;
  }
  const anyOf = new RegExp(`(?<![\\w.$])${n}\\s*\\?[|&]\\s*array\\s*\\[([^\\]]*)\\]`, "gi");
  for (const [, list] of body.matchAll(anyOf)) {
    for (const [, key] of list.matchAll(/'((?:[^']|'')*)'/g)) keys.add(key);
    understood++;
  }
  const subscript = new RegExp(`(?<![\\w.$])${n}\\s*\\[\\s*'((?:[^']|'')*)'\\s*\\]`, "g");
  for (const [, key] of body.matchAll(subscript)) {
    keys.add(key);
    understood++;
  }
  const handedTo: { callee: string; index: number }[] = [];
  for (const call of calls(body)) {
    call.args.forEach((arg, index) => {
      if (arg === name) {
        handedTo.push({ callee: call.callee, index });
        understood++;
      }
    });
  }
  const uses = withoutStrings(body).match(new RegExp(`(?<![\\w.$])${n}(?![\\w$])`, "g"))?.length ?? 0;
  return { keys, handedTo, unexplained: uses - understood };
}

/** Every function of public and private, by `schema.name` (an overloaded name keeps each of its bodies). */
async function sqlFunctions(): Promise<Map<string, (SqlFunction & { rpc: boolean })[]>> {
  const rows = await testDb().unsafe(`
    select n.nspname as schema, p.proname as name, to_jsonb(coalesce(p.proargnames, '{}')) as arg_names, p.prosrc as source,
           n.nspname = 'public' and p.pronargs = 1 and p.proargtypes[0] = 'jsonb'::regtype as rpc
    from pg_proc p
    join pg_namespace n on n.oid = p.pronamespace
    where n.nspname in ('public', 'private')
      and not exists (
        select 1 from pg_depend d
        where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
    order by 1, 2`);
  const functions = new Map<string, (SqlFunction & { rpc: boolean })[]>();
  for (const row of rows) {
    const key = `${row.schema}.${row.name}`;
    functions.set(key, [
      ...(functions.get(key) ?? []),
      { schema: row.schema, name: row.name, argNames: row.arg_names, source: row.source, rpc: row.rpc },
    ]);
  }
  return functions;
}

/**
 * The keys each public RPC reads from its parameter, following whole hand-offs to helpers.
 * A use of the parameter the reader cannot explain makes the row `open` (reported, never guessed).
 */
async function databaseCatalogue(): Promise<{ rows: Catalogue; unexplained: string[] }> {
  const functions = await sqlFunctions();
  const unexplained: string[] = [];
  const read = (fn: SqlFunction, index: number, seen: Set<string>): { keys: Set<string>; open: boolean } => {
    const at = `${fn.schema}.${fn.name}#${index}`;
    if (seen.has(at)) return { keys: new Set(), open: false };
    seen.add(at);
    const keys = new Set<string>();
    let open = false;
    const name = nameOf(fn, index);
    const found = readsOf(fn.source, name);
    for (const key of found.keys) keys.add(key);
    if (found.unexplained > 0) {
      open = true;
      unexplained.push(`${fn.schema}.${fn.name} uses ${name} ${found.unexplained} time(s) in a way the test cannot follow`);
    }
    for (const { callee, index: position } of found.handedTo) {
      const helpers = functions.get(callee) ?? [];
      if (helpers.length !== 1) {
        open = true;
        unexplained.push(
          `${fn.schema}.${fn.name} hands ${name} to ${callee}, which is ${helpers.length ? "overloaded" : "not in public or private"}`,
        );
        continue;
      }
      const [helper] = helpers;
      const inner = read(helper, position, seen);
      for (const key of inner.keys) keys.add(key);
      open ||= inner.open;
    }
    return { keys, open };
  };
  const rows: Catalogue = new Map();
  for (const fn of [...functions.values()].flat()) {
    if (!fn.rpc) continue;
    if (rows.has(fn.name)) unexplained.push(`public.${fn.name} is overloaded; an RPC is one function`);
    rows.set(fn.name, read(fn, 0, new Set()));
  }
  return { rows, unexplained };
}

// ---------------------------------------------------------------------------------------------
// The comparison
// ---------------------------------------------------------------------------------------------

/** Every disagreement between the two catalogues, one sentence each, exceptions applied. */
function compareCatalogues(typescript: Catalogue, database: Catalogue, exceptions = EXCEPTIONS): string[] {
  const problems: string[] = [];
  for (const name of database.keys()) if (!typescript.has(name)) problems.push(`public.${name} has no catalogue row`);
  for (const name of typescript.keys()) if (!database.has(name)) problems.push(`catalogue row ${name} has no public.${name}(p jsonb)`);
  for (const [name, ts] of typescript) {
    const db = database.get(name);
    if (!db) continue;
    const exception = exceptions[name];
    if (ts.open) problems.push(`${name}: the catalogue's parameter takes any key (an index signature); name its keys`);
    if (db.open) problems.push(`${name}: the function's use of p cannot be followed; list it in EXCEPTIONS with a reason`);
    const unread = [...ts.keys].filter((key) => !db.keys.has(key)).sort();
    const undeclared = [...db.keys].filter((key) => !ts.keys.has(key)).sort();
    const expectedUnread = [...(exception?.unread ?? [])].sort();
    const expectedUndeclared = [...(exception?.undeclared ?? [])].sort();
    if (unread.join() !== expectedUnread.join())
      problems.push(
        `${name}: the catalogue sends [${unread}] the function never reads${expectedUnread.length ? ` (excepted: [${expectedUnread}])` : ""}`,
      );
    if (undeclared.join() !== expectedUndeclared.join())
      problems.push(
        `${name}: the function reads [${undeclared}] the catalogue does not declare${expectedUndeclared.length ? ` (excepted: [${expectedUndeclared}])` : ""}`,
      );
  }
  for (const name of Object.keys(exceptions))
    if (!typescript.has(name) || !database.has(name)) problems.push(`exception for ${name} names no RPC of both`);
  return problems;
}

const row = (keys: string[], open = false) => ({ keys: new Set(keys), open });

describe("the RPC catalogue", () => {
  it("has a row for every public RPC and an RPC for every row, each reading exactly the keys its row declares", async () => {
    const database = await databaseCatalogue();
    const typescript = typescriptCatalogue();
    expect(database.rows.size).toBeGreaterThan(60);
    expect(database.unexplained).toEqual([]);
    expect(compareCatalogues(typescript, database.rows)).toEqual([]);
  }, 120_000);

  it("reports a missing row, a missing RPC, a key either side lacks and an open parameter (the comparison itself)", () => {
    const typescript: Catalogue = new Map([
      ["alias_check", row(["environment", "now", "aliases"])],
      ["only_typed", row([])],
      ["theme_get", row(["merchant_id"], true)],
    ]);
    const database: Catalogue = new Map([
      ["alias_check", row(["environment", "now", "limit"])],
      ["only_in_sql", row([])],
      ["theme_get", row(["merchant_id"])],
    ]);
    expect(compareCatalogues(typescript, database, {})).toEqual([
      "public.only_in_sql has no catalogue row",
      "catalogue row only_typed has no public.only_typed(p jsonb)",
      "alias_check: the catalogue sends [aliases] the function never reads",
      "alias_check: the function reads [limit] the catalogue does not declare",
      "theme_get: the catalogue's parameter takes any key (an index signature); name its keys",
    ]);
    expect(
      compareCatalogues(typescript, database, {
        alias_check: { unread: ["aliases"], undeclared: ["limit"], reason: "planted" },
        gone: { reason: "planted" },
      }),
    ).toEqual([
      "public.only_in_sql has no catalogue row",
      "catalogue row only_typed has no public.only_typed(p jsonb)",
      "theme_get: the catalogue's parameter takes any key (an index signature); name its keys",
      "exception for gone names no RPC of both",
    ]);
  });

  it("reads the keys of every operator, the helpers p is handed to, and flags a use it cannot follow (the reader itself)", () => {
    const body = `
      declare v_now timestamptz := (p ->> 'now')::timestamptz; -- p ->> 'in_a_comment'
      begin
        if p ? 'nonce' and p ?| array['a', 'b'] then perform private.claim(v_now, p, p -> 'tenant' ->> 'merchant_id'); end if;
        return p #>> '{decision,scope}' || p['sub'] || 'p';
      end`;
    const found = readsOf(body, "p");
    expect([...found.keys].sort()).toEqual(["a", "b", "decision", "nonce", "now", "sub", "tenant"]);
    expect(found.handedTo).toEqual([{ callee: "private.claim", index: 1 }]);
    expect(found.unexplained).toBe(0);
    expect(readsOf("begin v := p || '{}'; return p ->> 'x'; end", "p").unexplained).toBe(1);
  });
});
