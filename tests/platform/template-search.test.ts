/**
 * 1:N search over sealed templates (face_template_search, D-680): the stored row holds no embedding
 * in the clear, candidates picked by code are re-checked exactly (the answer is the exact cosine, the
 * same under every key at the gate), a template the migration sealed without a code is still found,
 * scoping by environment, key_id and merchant holds, erased identities come back unreachable. Run on an
 * in-process embedded PGlite (its pgcrypto module: the sealing path of the embedded default) and on the
 * database the suite runs on (CI: the machine's Postgres).
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
import { faceAtSimilarity, randomFace } from "../harness/identity";

type Environment = "test" | "live";

interface SeedRow {
  id: string;
  environment: Environment;
  keyId: string;
  embedding: number[];
  erased?: boolean;
  /** Sealed without a code, as the migration of D-680 left a template stored before it. */
  uncoded?: boolean;
}

/**
 * Identities and their templates in one statement each, as identity_enroll stores them (code and seal);
 * `uncoded` rows as the migration of D-680 left the templates it sealed. The suite's own rows only.
 */
async function seed(sql: Sql, rows: SeedRow[], codeOf: (row: SeedRow) => string | null): Promise<void> {
  const json = JSON.stringify(
    rows.map((r) => ({
      id: r.id,
      environment: r.environment,
      key_id: r.keyId,
      embedding: r.embedding,
      code: r.uncoded ? null : codeOf(r),
      erased: !!r.erased,
    })),
  );
  await sql.unsafe(
    `insert into private.identities (id, environment, created_at, erased_at)
     select (r ->> 'id')::uuid, r ->> 'environment', now(), case when (r ->> 'erased')::boolean then now() end
     from jsonb_array_elements($1::text::jsonb) r`,
    [json],
  );
  await sql.unsafe(
    `insert into private.face_templates (identity_id, environment, key_id, code, sealed, seal_key_id, created_at)
     select (r ->> 'id')::uuid, r ->> 'environment', r ->> 'key_id', ('x' || (r ->> 'code'))::bit(2048),
            private.template_seal(array(select e::real from jsonb_array_elements_text(r -> 'embedding') with ordinality as x(e, n) order by n)),
            (select k.id from private.template_seal_keys k where k.retired_at is null), now()
     from jsonb_array_elements($1::text::jsonb) r`,
    [json],
  );
}

function search(
  sql: Sql,
  embedding: number[],
  { environment = "test", key, limit = 1 }: { environment?: Environment; key: TemplateProtector; limit?: number },
) {
  return rpc(sql, "face_template_search", { environment, key_id: key.keyId, embedding, code: key.code(embedding), limit });
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
function knownPerson(
  person: number,
  key: TemplateProtector,
  retired: TemplateProtector,
  options: { erased?: boolean; uncoded?: boolean } = {},
) {
  const template = key.protect(faceEmbeddingOfPerson(person));
  const rows = {
    enrolled: { id: uuid(), environment: "test", keyId: key.keyId, embedding: template, erased: options.erased, uncoded: options.uncoded },
    staleKeyCopy: { id: uuid(), environment: "test", keyId: retired.keyId, embedding: template },
    liveTwin: { id: uuid(), environment: "live", keyId: key.keyId, embedding: template },
    underRetiredKey: { id: uuid(), environment: "test", keyId: retired.keyId, embedding: retired.protect(faceEmbeddingOfPerson(person)) },
  } satisfies Record<string, SeedRow>;
  return { person, template, ...rows, all: Object.values(rows) as SeedRow[] };
}

/** The exact ranking the store must answer: every in-scope row's protected cosine, best first. */
function bruteForce(rows: SeedRow[], query: number[], keyId: string, environment: Environment, limit: number) {
  return rows
    .filter((r) => r.keyId === keyId && r.environment === environment)
    .map((r) => ({ id: r.id, similarity: dot(query, r.embedding) }))
    .sort((a, b) => b.similarity - a.similarity)
    .slice(0, limit);
}

/** The same cases on each database: `open` gives a migrated connection, `close` ends it. */
function sealedSearchSuite(name: string, open: () => Promise<Sql>, close: (sql: Sql) => Promise<void>) {
  describe(`face_template_search over sealed templates: ${name}`, () => {
    let sql: Sql;
    let key: TemplateProtector;
    let retired: TemplateProtector;
    let known: ReturnType<typeof knownPerson>[];
    let erased: ReturnType<typeof knownPerson>;
    let uncoded: ReturnType<typeof knownPerson>;
    let rows: SeedRow[];

    beforeAll(async () => {
      sql = await open();
      // Keys of this suite's own: their key_id scopes every search below to the rows seeded here.
      [key, retired] = await Promise.all([
        templateProtector(`template-search-key-${randomHex(16)}`),
        templateProtector(`template-search-old-${randomHex(16)}`),
      ]);
      known = [7, 8, 11, 12, 23, 42].map((person) => knownPerson(person, key, retired));
      erased = knownPerson(99, key, retired, { erased: true });
      uncoded = knownPerson(77, key, retired, { uncoded: true });
      const crowd: SeedRow[] = Array.from({ length: 300 }, (_, i) => ({
        id: crypto.randomUUID(),
        environment: i % 10 === 8 ? "live" : "test",
        keyId: i % 10 === 9 ? retired.keyId : key.keyId,
        embedding: (i % 10 === 9 ? retired : key).protect(randomFace()),
      }));
      rows = [...crowd, ...known.flatMap((k) => k.all), ...erased.all, ...uncoded.all];
      await seed(sql, rows, (r) => (r.keyId === key.keyId ? key : retired).code(r.embedding));
    });

    afterAll(async () => {
      await close(sql);
    });

    it("stores no embedding in the clear: a code and a sealed embedding, no real[] or vector column, no float in the bytes", async () => {
      const columns = await sql`select column_name, data_type from information_schema.columns
        where table_schema = 'private' and table_name = 'face_templates' order by column_name`;
      expect(columns.map((c) => [c.column_name, c.data_type])).toEqual([
        ["code", "bit"],
        ["created_at", "timestamp with time zone"],
        ["environment", "text"],
        ["identity_id", "uuid"],
        ["key_id", "text"],
        ["seal_key_id", "integer"],
        ["sealed", "bytea"],
      ]);
      const person = known[0];
      const [row] = await sql`select encode(sealed, 'escape') as bytes, length(sealed) as size, code::text as code
        from private.face_templates where identity_id = ${person.enrolled.id}`;
      // No component of the embedding, as text or as float4 bytes, is in what is stored.
      const floats = Buffer.from(new Float32Array(person.template).buffer);
      expect(row.bytes.includes(String(Math.fround(person.template[0])).slice(0, 8))).toBe(false);
      expect(Buffer.from(row.bytes, "latin1").includes(floats.subarray(0, 8))).toBe(false);
      expect(row.code).toHaveLength(2048);
      // The worker's role reads no table; what an RPC answers of a template is a similarity, never the vector.
      const [found] = await search(sql, key.protect(liveFace(person.person)), { key, limit: 1 });
      expect(Object.keys(found).sort()).toEqual(["identity_id", "reachable", "similarity"]);
    });

    it("answers the exact cosine: each known face first, with its protected cosine (1e-5), the top 5 as an exact ranking", async () => {
      for (const person of known) {
        const query = key.protect(liveFace(person.person));
        const found = await search(sql, query, { key, limit: 5 });
        expect(found[0]).toMatchObject({ identity_id: person.enrolled.id, reachable: true });
        expect(Math.abs(found[0].similarity - dot(query, person.template))).toBeLessThan(1e-5);
        const exact = bruteForce(rows, query, key.keyId, "test", 5);
        expect(found.map((m) => m.identity_id)).toEqual(exact.map((m) => m.id));
        for (const [i, m] of found.entries()) expect(Math.abs(m.similarity - exact[i].similarity)).toBeLessThan(1e-5);
      }
      for (let i = 0; i < 5; i++) {
        const query = key.protect(randomFace());
        const [best] = await search(sql, query, { key });
        expect(best.identity_id).toBe(bruteForce(rows, query, key.keyId, "test", 1)[0].id);
      }
    });

    // Twenty keys, each built in the Worker's way (a 2,048 x 128 matrix): slow on a loaded machine.
    it("decides at the gate by the exact cosine under every key: a face at 0.959 never matches, one at 0.966 always does", async () => {
      // The code's estimate of a cosine near the gate spreads by about 0.006 from key to key; the answer
      // must not. Twenty keys, each with its own stored face, queried at 0.959 and 0.966 of it.
      for (let k = 0; k < 20; k++) {
        const each = await templateProtector(`template-search-gate-${k}-${randomHex(8)}`);
        const face = randomFace();
        const row: SeedRow = { id: uuid(), environment: "test", keyId: each.keyId, embedding: each.protect(face) };
        await seed(sql, [row], (r) => each.code(r.embedding));
        for (const cosine of [0.959, 0.966]) {
          const [best] = await search(sql, each.protect(faceAtSimilarity(face, cosine)), { key: each });
          expect(best.identity_id).toBe(row.id);
          expect(Math.abs(best.similarity - cosine)).toBeLessThan(2e-4);
          expect(best.similarity >= 0.965).toBe(cosine > 0.965);
        }
      }
    }, 120_000);

    it("finds a template the migration sealed without a code (re-checked on every search)", async () => {
      const query = key.protect(liveFace(uncoded.person));
      const [best] = await search(sql, query, { key });
      expect(best).toMatchObject({ identity_id: uncoded.enrolled.id, reachable: true });
      expect(Math.abs(best.similarity - dot(query, uncoded.template))).toBeLessThan(1e-5);
    });

    it("scoped to a merchant, answers only its consented persons, also behind 60 nearer faces of others", async () => {
      const merchant = await createMerchant(sql, `template-search ${randomHex(4)}`);
      const other = await createMerchant(sql, `template-search other ${randomHex(4)}`);
      const person = known[5];
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
      await seed(sql, decoys, (r) => key.code(r.embedding));
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
      const scoped = (embedding: number[]) =>
        rpc(sql, "face_template_search", {
          environment: "test",
          key_id: key.keyId,
          embedding,
          code: key.code(embedding),
          limit: 5,
          merchant_id: merchant.merchant_id,
        });
      const found = await scoped(query);
      expect(found.map((m) => m.identity_id)).toEqual([person.enrolled.id]);
      // Person 7's consent with the merchant was withdrawn: not found.
      expect(await scoped(key.protect(liveFace(known[0].person)))).toEqual([expect.objectContaining({ identity_id: person.enrolled.id })]);
      // Unscoped, the decoys come first.
      const [nearest] = await search(sql, query, { key });
      expect(decoys.map((d) => d.id)).toContain(nearest.identity_id);
    });

    it("never returns a template stored under another key_id (key rotation revokes templates)", async () => {
      const out = new Set(known.flatMap((k) => [k.staleKeyCopy.id, k.underRetiredKey.id]));
      for (const person of known) {
        const matches = await search(sql, key.protect(liveFace(person.person)), { key, limit: 50 });
        expect(matches.length).toBeGreaterThan(0);
        expect(matches.filter((m) => out.has(m.identity_id))).toEqual([]);
      }
      // A face protected under the current key, searched among the retired key's templates (with the
      // retired key's code of it): its own template from before the rotation is no closer than a stranger's.
      const person = known[0];
      const query = key.protect(liveFace(person.person));
      const retiredMatches = await rpc(sql, "face_template_search", {
        environment: "test",
        key_id: retired.keyId,
        embedding: query,
        code: retired.code(query),
        limit: 50,
      });
      const current = new Set(known.flatMap((k) => [k.enrolled.id, k.liveTwin.id]));
      expect(retiredMatches.filter((m) => current.has(m.identity_id))).toEqual([]);
      const own = retiredMatches.find((m) => m.identity_id === person.underRetiredKey.id);
      expect(own?.similarity ?? 0).toBeLessThan(0.5);
    });

    it("keeps environments apart: the live twin answers live searches only", async () => {
      const person = known[1];
      const query = key.protect(liveFace(person.person));
      const [sandbox] = await search(sql, query, { environment: "test", key });
      const [live] = await search(sql, query, { environment: "live", key });
      expect(sandbox.identity_id).toBe(person.enrolled.id);
      expect(live.identity_id).toBe(person.liveTwin.id);
      const liveIds = new Set(known.map((k) => k.liveTwin.id));
      const sandboxList = await search(sql, query, { environment: "test", key, limit: 50 });
      expect(sandboxList.filter((m) => liveIds.has(m.identity_id))).toEqual([]);
    });

    it("returns an erased identity as unreachable instead of hiding it", async () => {
      const [best] = await search(sql, key.protect(liveFace(erased.person)), { key });
      expect(best).toMatchObject({ identity_id: erased.enrolled.id, reachable: false });
      const [other] = await search(sql, key.protect(liveFace(known[2].person)), { key });
      expect(other.reachable).toBe(true);
    });

    it("face_template_verify: the exact cosine with one identity's template, null under another key", async () => {
      const person = known[3];
      const query = key.protect(liveFace(person.person));
      const verify = (keyId: string) =>
        rpc(sql, "face_template_verify", { environment: "test", identity_id: person.enrolled.id, key_id: keyId, embedding: query });
      expect(Math.abs(((await verify(key.keyId)).similarity ?? 0) - dot(query, person.template))).toBeLessThan(1e-5);
      expect(await verify(retired.keyId)).toEqual({ similarity: null });
    });

    // pgvector is in the embedded default and on Supabase, not on every Postgres (this machine's has none).
    it("walks the codes' HNSW index where pgvector exists, its answer the exact one; no index where pgvector is absent (D-682)", {
      timeout: 120_000,
    }, async () => {
      const [{ vector }] = await sql`select exists (select 1 from pg_extension where extname = 'vector') as vector`;
      const [{ index }] = await sql`select to_regclass('private.face_templates_code_hnsw_idx') is not null as index`;
      expect(index).toBe(vector);
      if (!vector) return;
      // A scope of its own big enough that the planner walks the graph rather than scanning and sorting
      // (at a few dozen rows the scope's btree and a sort cost less); the known face among 1,200 others.
      const scope = await templateProtector(`template-search-hnsw-${randomHex(16)}`);
      const crowd: SeedRow[] = Array.from({ length: 1_200 }, () => ({
        id: uuid(),
        environment: "test",
        keyId: scope.keyId,
        embedding: scope.protect(randomFace()),
      }));
      const target = crowd[600];
      await seed(sql, crowd, (r) => scope.code(r.embedding));
      await sql`analyze private.face_templates`;
      const scans = async () => {
        const [row] = await sql`select coalesce(sum(idx_scan), 0)::int as n from pg_stat_user_indexes
                                where indexrelname = 'face_templates_code_hnsw_idx'`;
        return row.n as number;
      };
      const before = await scans();
      // a live face of the target, already in the protected space (the rotation keeps cosines)
      const query = faceAtSimilarity(target.embedding, 0.97);
      const answer = await search(sql, query, { key: scope, limit: 3 });
      await sql`select pg_stat_force_next_flush()`;
      expect((await scans()) - before).toBe(1);
      const exact = bruteForce(crowd, query, scope.keyId, "test", 3);
      expect(answer.map((a: { identity_id: string }) => a.identity_id)).toEqual(exact.map((e) => e.id));
      expect(answer[0].identity_id).toBe(target.id);
    });

    // Re-seals every template of the database: only where this suite is alone (the embedded one).
    it.runIf(name.startsWith("embedded"))(
      "rotates the seal key in the store: every template re-sealed, the old key gone, the answers the same",
      async () => {
        const person = known[4];
        const query = key.protect(liveFace(person.person));
        const [before] = await search(sql, query, { key });
        const [old] = await sql`select id, (select sealed from private.face_templates where identity_id = ${person.enrolled.id}) as sealed
        from private.template_seal_keys`;
        const [{ resealed }] = await sql`select private.template_seal_rotate(now()) as resealed`;
        const [{ templates }] = await sql`select count(*)::int as templates from private.face_templates`;
        expect(resealed).toBe(templates);
        const keys = await sql`select id from private.template_seal_keys`;
        expect(keys.map((k) => k.id)).not.toContain(old.id);
        expect(keys).toHaveLength(1);
        const [{ sealed }] = await sql`select sealed from private.face_templates where identity_id = ${person.enrolled.id}`;
        expect(Buffer.compare(sealed, old.sealed)).not.toBe(0);
        const [after] = await search(sql, query, { key });
        expect(after).toEqual(before);
      },
    );
  });
}

let embedded: EmbeddedDatabase | undefined;
sealedSearchSuite(
  "embedded PGlite (pgcrypto)",
  async () => {
    embedded = await startEmbeddedDatabase({ dataDir: "memory://", port: await freePort() });
    const sql = connect(embedded.url);
    await applyMigrations(sql);
    return sql;
  },
  async (sql) => {
    await sql?.end();
    await embedded?.stop();
  },
);
sealedSearchSuite(
  "the database the suite runs on",
  async () => connect(inject("databaseUrl")),
  async (sql) => {
    await sql?.end();
  },
);
