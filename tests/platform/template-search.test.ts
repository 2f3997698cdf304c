/**
 * 1:N search over protected templates (face_template_search): the HNSW path (pgvector) and the exact
 * scan agree, scoping by environment and key_id holds on both, erased identities come back
 * unreachable. An in-process embedded PGlite (pgvector) covers both paths in every run, CI included;
 * the database the suite runs on (CI: the machine's Postgres, which has no pgvector) covers the
 * exact path there.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type EmbeddedDatabase, startEmbeddedDatabase } from "../../scripts/local/embedded-db";
import { applyMigrations } from "../../scripts/local/migrations";
import { freePort } from "../../scripts/local/ports";
import { connect, type Sql } from "../../shared/kernel/db/client";
import { rpc } from "../../shared/kernel/db/rpc";
import { randomHex } from "../../shared/lib/crypto";
import { type TemplateProtector, templateProtector } from "../../shared/lib/template-protection";
import { createMerchant } from "../../shared/merchants/accounts";
import { faceEmbeddingOfPerson, simulateCapture } from "../../shared/simulator";
import { randomFace } from "../harness/identity";

type Environment = "test" | "live";

interface SeedRow {
  id: string;
  environment: Environment;
  keyId: string;
  embedding: number[];
  erased?: boolean;
}

/** Identities and their protected templates in one statement each; the suite's own rows only. */
async function seed(sql: Sql, rows: SeedRow[]): Promise<void> {
  const json = JSON.stringify(
    rows.map((r) => ({ id: r.id, environment: r.environment, key_id: r.keyId, embedding: r.embedding, erased: !!r.erased })),
  );
  await sql.unsafe(
    `insert into private.identities (id, environment, created_at, erased_at)
     select (r ->> 'id')::uuid, r ->> 'environment', now(), case when (r ->> 'erased')::boolean then now() end
     from jsonb_array_elements($1::text::jsonb) r`,
    [json],
  );
  await sql.unsafe(
    `insert into private.face_templates (identity_id, environment, key_id, embedding, created_at)
     select (r ->> 'id')::uuid, r ->> 'environment', r ->> 'key_id',
            array(select e::real from jsonb_array_elements_text(r -> 'embedding') with ordinality as x(e, n) order by n), now()
     from jsonb_array_elements($1::text::jsonb) r`,
    [json],
  );
}

function search(
  sql: Sql,
  embedding: number[],
  { environment = "test", keyId, exact, limit = 1 }: { environment?: Environment; keyId: string; exact: boolean; limit?: number },
) {
  return rpc(sql, "face_template_search", { environment, key_id: keyId, embedding, limit, exact });
}

/** A fresh identity id (typed as a plain string). */
const uuid = (): string => crypto.randomUUID();

const dot = (a: readonly number[], b: readonly number[]) => a.reduce((sum, x, i) => sum + x * b[i], 0);

/** A fresh live capture's face embedding of sandbox person `person` (cosine ~0.97 to the enrolled one). */
const liveFace = (person: number) => simulateCapture({ person, seed: Math.floor(Math.random() * 2 ** 31) }).face.embedding;

/**
 * One known person's rows: the enrolled template, plus decoys that are as close as can be but out
 * of scope: the identical protected vector under a retired key_id and in the other environment,
 * and the same face protected under the retired key (what a key rotation leaves behind).
 */
function knownPerson(person: number, key: TemplateProtector, retired: TemplateProtector, options: { erased?: boolean } = {}) {
  const template = key.protect(faceEmbeddingOfPerson(person));
  const rows = {
    enrolled: { id: uuid(), environment: "test", keyId: key.keyId, embedding: template, erased: options.erased },
    staleKeyCopy: { id: uuid(), environment: "test", keyId: retired.keyId, embedding: template },
    liveTwin: { id: uuid(), environment: "live", keyId: key.keyId, embedding: template },
    underRetiredKey: { id: uuid(), environment: "test", keyId: retired.keyId, embedding: retired.protect(faceEmbeddingOfPerson(person)) },
  } satisfies Record<string, SeedRow>;
  return { person, template, ...rows, all: Object.values(rows) as SeedRow[] };
}

const PATHS = [
  { name: "HNSW", exact: false },
  { name: "exact", exact: true },
];

describe("face_template_search on embedded PGlite with pgvector: HNSW and exact paths", () => {
  let embedded: EmbeddedDatabase;
  let sql: Sql;
  let key: TemplateProtector;
  let retired: TemplateProtector;
  let known: ReturnType<typeof knownPerson>[];
  let erased: ReturnType<typeof knownPerson>;

  beforeAll(async () => {
    embedded = await startEmbeddedDatabase({ dataDir: "memory://", port: await freePort() });
    sql = connect(embedded.url);
    await applyMigrations(sql);
    [key, retired] = await Promise.all([
      templateProtector(`template-search-key-${randomHex(16)}`),
      templateProtector(`template-search-old-${randomHex(16)}`),
    ]);
    known = [7, 8, 11, 12, 23, 42, 77, 512].map((person) => knownPerson(person, key, retired));
    erased = knownPerson(99, key, retired, { erased: true });
    // About a thousand in scope: below several hundred rows the planner rightly prefers sorting the
    // scope's rows exactly over walking the graph, and the HNSW path would not be exercised.
    const crowd: SeedRow[] = Array.from({ length: 1200 }, (_, i) => ({
      id: crypto.randomUUID(),
      environment: i % 10 === 8 ? "live" : "test",
      keyId: i % 10 === 9 ? retired.keyId : key.keyId,
      embedding: (i % 10 === 9 ? retired : key).protect(randomFace()),
    }));
    await seed(sql, [...crowd, ...known.flatMap((k) => k.all), ...erased.all]);
    // PGlite runs no autovacuum: without statistics the planner estimates the scope filter as highly
    // selective and sorts the scope index's rows instead of walking the HNSW graph. A server's
    // autovacuum would analyse the table; here we do it ourselves.
    await sql`analyze private.face_templates`;
    await sql`analyze private.identities`;
  });

  afterAll(async () => {
    await sql?.end();
    await embedded?.stop();
  });

  it("has the pgvector column and its HNSW index", async () => {
    const columns = await sql`select data_type, udt_name from information_schema.columns
      where table_schema = 'private' and table_name = 'face_templates' and column_name = 'embedding_vector'`;
    expect(columns).toEqual([{ data_type: "USER-DEFINED", udt_name: "vector" }]);
    const [index] = await sql`select indexdef from pg_indexes where schemaname = 'private' and indexname = 'face_templates_hnsw_idx'`;
    expect(index.indexdef).toMatch(/USING hnsw \(embedding_vector vector_cosine_ops\)/);
  });

  it("plans the search's query through the HNSW index", async () => {
    const query = key.protect(liveFace(7));
    const plan = await sql.unsafe(
      `explain (costs off)
       select t.identity_id from private.face_templates t join private.identities i on i.id = t.identity_id
       where t.environment = $2 and t.key_id = $3
       order by t.embedding_vector operator(public.<=>) $1::public.vector(128) limit 1`,
      [JSON.stringify(query), "test", key.keyId],
    );
    expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toMatch(/Index Scan using face_templates_hnsw_idx/);
  });

  it("really walks the HNSW graph when exact is not asked (ef_search caps what it returns)", async () => {
    // pgvector returns at most hnsw.ef_search rows from an HNSW scan; the exact scan has no such cap.
    // `set local`: PGlite is one session behind the multiplexer, so a plain `set` would leak.
    const query = key.protect(liveFace(8));
    const lengths = await sql.begin(async (tx) => {
      await tx`set local hnsw.ef_search = 1`;
      const viaIndex = await search(tx as unknown as Sql, query, { keyId: key.keyId, exact: false, limit: 10 });
      const exact = await search(tx as unknown as Sql, query, { keyId: key.keyId, exact: true, limit: 10 });
      return [viaIndex.length, exact.length];
    });
    expect(lengths).toEqual([1, 10]);
  });

  it("finds every known face on both paths: same identity, same similarity (1e-5), equal to the protected cosine", async () => {
    for (const person of known) {
      const query = key.protect(liveFace(person.person));
      const [hnsw] = await search(sql, query, { keyId: key.keyId, exact: false });
      const [exact] = await search(sql, query, { keyId: key.keyId, exact: true });
      expect(exact).toMatchObject({ identity_id: person.enrolled.id, reachable: true });
      expect(hnsw.identity_id).toBe(exact.identity_id);
      expect(Math.abs(hnsw.similarity - exact.similarity)).toBeLessThan(1e-5);
      expect(Math.abs(exact.similarity - dot(query, person.template))).toBeLessThan(1e-5);
      expect(exact.similarity).toBeGreaterThan(0.75);
    }
  });

  it("ranks the known face first on both paths (limit 5); HNSW never beats the exact scan at any rank", async () => {
    // Below the known face the neighbours are random vectors at similar distances: an approximate
    // index may order or miss those, but can never report a closer one than the exact scan.
    const queries = [
      ...known.slice(0, 3).map((k) => key.protect(liveFace(k.person))),
      ...Array.from({ length: 10 }, () => key.protect(randomFace())),
    ];
    for (const [n, query] of queries.entries()) {
      const hnsw = await search(sql, query, { keyId: key.keyId, exact: false, limit: 5 });
      const exact = await search(sql, query, { keyId: key.keyId, exact: true, limit: 5 });
      expect(hnsw).toHaveLength(5);
      for (const [i, m] of hnsw.entries()) expect(m.similarity).toBeLessThanOrEqual(exact[i].similarity + 1e-5);
      if (n < 3) {
        expect(hnsw[0].identity_id).toBe(known[n].enrolled.id);
        expect(exact[0].identity_id).toBe(known[n].enrolled.id);
      } else {
        expect(exact[0].similarity).toBeLessThan(0.75);
      }
    }
  });

  it("scoped to a merchant, answers only its consented persons, also behind more nearer faces than ef_search returns", async () => {
    const merchant = await createMerchant(sql, `template-search ${randomHex(4)}`);
    const other = await createMerchant(sql, `template-search other ${randomHex(4)}`);
    // Person 512's enrolled template has this merchant's consent; 60 nearer copies of the query (other
    // merchants' persons, or withdrawn consents) stand in front of it in the graph.
    const person = known[7];
    const query = key.protect(liveFace(person.person));
    const decoys: SeedRow[] = Array.from({ length: 60 }, () => ({
      id: uuid(),
      environment: "test",
      keyId: key.keyId,
      embedding: (() => {
        const v = query.map((x) => x + (Math.random() - 0.5) * 0.01);
        const norm = Math.hypot(...v);
        return v.map((x) => x / norm);
      })(),
    }));
    await seed(sql, decoys);
    await sql.unsafe(
      `insert into private.consents (identity_id, merchant_id, version, retention_days, granted_at, revoked_at)
       select (r ->> 'id')::uuid, (r ->> 'merchant')::uuid, 'v1', 30, now(), case when (r ->> 'revoked')::boolean then now() end
       from jsonb_array_elements($1::text::jsonb) r`,
      [
        JSON.stringify([
          { id: person.enrolled.id, merchant: merchant.merchant_id, revoked: false },
          { id: known[0].enrolled.id, merchant: merchant.merchant_id, revoked: true },
          ...decoys.map((d, i) => ({ id: d.id, merchant: i % 2 ? other.merchant_id : merchant.merchant_id, revoked: i % 2 === 0 })),
        ]),
      ],
    );
    await sql`analyze private.face_templates`;
    const scoped = (embedding: number[], exact: boolean) =>
      rpc(sql, "face_template_search", {
        environment: "test",
        key_id: key.keyId,
        embedding,
        limit: 5,
        exact,
        merchant_id: merchant.merchant_id,
      });
    for (const exact of [false, true]) {
      const found = await scoped(query, exact);
      expect(found.map((m) => m.identity_id)).toEqual([person.enrolled.id]);
      expect(found[0].similarity).toBeGreaterThan(0.75);
      // Person 7's consent with the merchant was withdrawn: not found.
      expect(await scoped(key.protect(liveFace(known[0].person)), exact)).toEqual([
        expect.objectContaining({ identity_id: person.enrolled.id }),
      ]);
    }
    // With many consents the planner walks the HNSW graph with the filter (forced here: no sort, a small
    // ef_search): the iterative scan still reaches the consented face behind the 60 nearer ones.
    const viaGraph = await sql.begin(async (tx) => {
      await tx`set local enable_sort = off`;
      await tx`set local hnsw.ef_search = 10`;
      const plan = await tx.unsafe(
        `explain (costs off) select t.identity_id from private.face_templates t
         where t.environment = 'test' and t.key_id = $2
           and exists (select 1 from private.consents c where c.identity_id = t.identity_id and c.merchant_id = $3 and c.revoked_at is null)
         order by t.embedding_vector operator(public.<=>) $1::public.vector(128) limit 5`,
        [JSON.stringify(query), key.keyId, merchant.merchant_id],
      );
      expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toMatch(/face_templates_hnsw_idx/);
      return rpc(tx as unknown as Sql, "face_template_search", {
        environment: "test",
        key_id: key.keyId,
        embedding: query,
        limit: 5,
        merchant_id: merchant.merchant_id,
      });
    });
    expect(viaGraph.map((m) => m.identity_id)).toEqual([person.enrolled.id]);
    // Unscoped, the decoys come first.
    const [nearest] = await search(sql, query, { keyId: key.keyId, exact: true });
    expect(decoys.map((d) => d.id)).toContain(nearest.identity_id);
  });

  for (const { name, exact } of PATHS) {
    describe(`${name} path`, () => {
      it("never returns a template stored under another key_id (key rotation revokes templates)", async () => {
        const out = new Set(known.flatMap((k) => [k.staleKeyCopy.id, k.underRetiredKey.id]));
        for (const person of known) {
          const matches = await search(sql, key.protect(liveFace(person.person)), { keyId: key.keyId, exact, limit: 50 });
          expect(matches.length).toBeGreaterThan(0);
          expect(matches.filter((m) => out.has(m.identity_id))).toEqual([]);
        }
        // A face captured now and protected under the current key, searched among the retired key's
        // templates: its own template from before the rotation is no closer than a stranger's, and
        // nothing of the current key comes back.
        const person = known[0];
        const retiredMatches = await search(sql, key.protect(liveFace(person.person)), { keyId: retired.keyId, exact, limit: 50 });
        const current = new Set(known.flatMap((k) => [k.enrolled.id, k.liveTwin.id]));
        expect(retiredMatches.filter((m) => current.has(m.identity_id))).toEqual([]);
        const own = retiredMatches.find((m) => m.identity_id === person.underRetiredKey.id);
        expect(own?.similarity ?? 0).toBeLessThan(0.5);
      });

      it("keeps environments apart: the live twin answers live searches only", async () => {
        const person = known[1];
        const query = key.protect(liveFace(person.person));
        const [sandbox] = await search(sql, query, { environment: "test", keyId: key.keyId, exact });
        const [live] = await search(sql, query, { environment: "live", keyId: key.keyId, exact });
        expect(sandbox.identity_id).toBe(person.enrolled.id);
        expect(live.identity_id).toBe(person.liveTwin.id);
        const liveIds = new Set(known.map((k) => k.liveTwin.id));
        const sandboxList = await search(sql, query, { environment: "test", keyId: key.keyId, exact, limit: 50 });
        expect(sandboxList.filter((m) => liveIds.has(m.identity_id))).toEqual([]);
      });

      it("returns an erased identity as unreachable instead of hiding it", async () => {
        const query = key.protect(liveFace(erased.person));
        const [best] = await search(sql, query, { keyId: key.keyId, exact });
        expect(best).toMatchObject({ identity_id: erased.enrolled.id, reachable: false });
        expect(best.similarity).toBeGreaterThan(0.75);
        const [other] = await search(sql, key.protect(liveFace(known[2].person)), { keyId: key.keyId, exact });
        expect(other.reachable).toBe(true);
      });
    });
  }
});

describe("face_template_search on the database the suite runs on", () => {
  let sql: Sql;
  let key: TemplateProtector;
  let retired: TemplateProtector;
  let known: ReturnType<typeof knownPerson>[];
  let erased: ReturnType<typeof knownPerson>;

  beforeAll(async () => {
    sql = connect(inject("databaseUrl"));
    // A key of this test's own: its key_id scopes every search below to the rows seeded here.
    [key, retired] = await Promise.all([
      templateProtector(`template-search-suite-${randomHex(16)}`),
      templateProtector(`template-search-suite-old-${randomHex(16)}`),
    ]);
    known = [7, 8, 11].map((person) => knownPerson(person, key, retired));
    erased = knownPerson(99, key, retired, { erased: true });
    const crowd: SeedRow[] = Array.from({ length: 60 }, () => ({
      id: crypto.randomUUID(),
      environment: "test",
      keyId: key.keyId,
      embedding: key.protect(randomFace()),
    }));
    await seed(sql, [...crowd, ...known.flatMap((k) => k.all), ...erased.all]);
  });

  afterAll(async () => {
    await sql?.end();
  });

  it("has the pgvector column exactly where the extension is available", async () => {
    const [{ available }] = await sql`select exists (select 1 from pg_available_extensions where name = 'vector') as available`;
    const [{ present }] = await sql`select exists (select 1 from information_schema.columns
      where table_schema = 'private' and table_name = 'face_templates' and column_name = 'embedding_vector') as present`;
    expect(present).toBe(available);
  });

  it("exact path: finds each known face with the protected cosine, scoped by key_id and environment", async () => {
    const outOfScope = new Set(known.flatMap((k) => [k.staleKeyCopy.id, k.underRetiredKey.id, k.liveTwin.id]));
    for (const person of known) {
      const query = key.protect(liveFace(person.person));
      const matches = await search(sql, query, { keyId: key.keyId, exact: true, limit: 50 });
      expect(matches[0]).toMatchObject({ identity_id: person.enrolled.id, reachable: true });
      expect(Math.abs(matches[0].similarity - dot(query, person.template))).toBeLessThan(1e-5);
      expect(matches.filter((m) => outOfScope.has(m.identity_id))).toEqual([]);
      const [live] = await search(sql, query, { environment: "live", keyId: key.keyId, exact: true });
      expect(live.identity_id).toBe(person.liveTwin.id);
      // The default path (HNSW where pgvector exists, the exact scan otherwise) agrees.
      const [byDefault] = await search(sql, query, { keyId: key.keyId, exact: false });
      expect(byDefault.identity_id).toBe(person.enrolled.id);
      expect(Math.abs(byDefault.similarity - matches[0].similarity)).toBeLessThan(1e-5);
    }
  });

  it("exact path: an erased identity comes back unreachable", async () => {
    const [best] = await search(sql, key.protect(liveFace(erased.person)), { keyId: key.keyId, exact: true });
    expect(best).toMatchObject({ identity_id: erased.enrolled.id, reachable: false });
  });
});
