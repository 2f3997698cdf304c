/**
 * `npm run bench:template-codes [-- --keys 5]`: identification on real faces before and after the
 * sealed template store (D-680).
 *
 * The faces are scripts/media/faces.ts's (realFaces: every real face at hand under the nine variants
 * of `npm run bench:faces`, computed once in Chromium and cached in dist/media/). Each face is
 * stored in turn as a template of an in-process embedded PGlite (pgcrypto), under each of `--keys`
 * fresh keys, exactly as identity_enroll stores it (code and seal); then every face is searched
 * (face_template_search, the RPC every identification makes) among all the others.
 *
 * - before: the exact ranking the store answered until D-680 (the protected templates' cosine, equal
 *   to the model's: the rotation keeps it), computed here over the faces themselves;
 * - after: the store's answer (candidates by code, re-checked exactly against the sealed embedding);
 * - code alone: the answer if the code's estimate decided (cosine from the Hamming distance), which
 *   D-680 does not do: it shows why the exact re-check is there.
 *
 * Each answer is read as identification reads it (searchOutcome: matched, near miss, none, with the
 * runner-up) and compared with before, twice: over the two best templates, and per person (the best
 * template, and as runner-up the best of another person: a person is enrolled once in the service, while
 * here each is stored under nine variants).
 *
 * With BENCH_TEMPLATES_URL set, that Postgres (already migrated; this run's rows are under keys of its
 * own and deleted afterwards) is used instead of PGlite.
 */
import { performance } from "node:perf_hooks";
import { type SearchOutcome, searchOutcome } from "../../shared/identity/face-match";
import { connect } from "../../shared/kernel/db/client";
import { rpc } from "../../shared/kernel/db/rpc";
import { randomHex } from "../../shared/lib/crypto";
import { TEMPLATE_CODE_BITS, templateProtector } from "../../shared/lib/template-protection";
import { startEmbeddedDatabase } from "../local/embedded-db";
import { applyMigrations } from "../local/migrations";
import { freePort } from "../local/ports";
import { realFaces, VARIANTS } from "../media/faces";
import { flag, loadNow, runConditions } from "./common";

interface Answer {
  outcome: SearchOutcome;
  /** The best candidate's index among the faces (null when none). */
  best: number | null;
}

const dot = (a: readonly number[], b: readonly number[]) => a.reduce((s, x, i) => s + x * (b[i] as number), 0);

function hamming(a: string, b: string): number {
  let d = 0;
  for (let i = 0; i < a.length; i += 8) {
    let x = Number.parseInt(a.slice(i, i + 8), 16) ^ Number.parseInt(b.slice(i, i + 8), 16);
    while (x) {
      x &= x - 1;
      d++;
    }
  }
  return d;
}

/** The answer of a ranking (best first): who is best and how the search ends with the runner-up. */
function answerOf(ranked: { index: number; similarity: number }[]): Answer {
  const [best, second] = ranked;
  const outcome = searchOutcome(best?.similarity ?? null, second?.similarity ?? null);
  return { outcome, best: outcome === "none" ? null : (best?.index ?? null) };
}

async function main() {
  const started = performance.now();
  const loadAtStart = loadNow();
  const keys = flag("keys", 5);
  const faces = await realFaces([...VARIANTS]);
  const external = process.env.BENCH_TEMPLATES_URL;
  const embedded = external ? null : await startEmbeddedDatabase({ dataDir: "memory://", port: await freePort() });
  const sql = connect(external ?? (embedded as { url: string }).url);
  if (!external) await applyMigrations(sql);
  const keyIds: string[] = [];
  const persons = faces.map((f) => f.person);
  const tally = {
    queries: 0,
    afterAgrees: 0,
    afterSimilarityGap: 0,
    codeAloneDisagrees: 0,
    codeAloneNearGate: 0,
    personAgrees: 0,
  };
  const before = { matchedSame: 0, matchedOther: 0, nearMiss: 0, none: 0 };
  const after = { ...before };
  const personBefore = { ...before };
  const personAfter = { ...before };
  /** The best template and, as runner-up, the best of another person. */
  const perPerson = (ranked: { index: number; similarity: number }[]) => {
    const best = ranked[0];
    const other = best ? ranked.find((m) => persons[m.index] !== persons[best.index]) : undefined;
    return answerOf(best ? (other ? [best, other] : [best]) : []);
  };
  const record = (into: typeof before, a: Answer, query: number) => {
    if (a.outcome === "none") into.none++;
    else if (a.outcome === "near_miss") into.nearMiss++;
    else if (a.best !== null && persons[a.best] === persons[query]) into.matchedSame++;
    else into.matchedOther++;
  };
  for (let k = 0; k < keys; k++) {
    const key = await templateProtector(`bench-template-codes-${randomHex(16)}`);
    keyIds.push(key.keyId);
    const stored = faces.map((f) => key.protect(f.embedding));
    const codes = stored.map((e) => key.code(e));
    const ids = faces.map(() => crypto.randomUUID());
    const rows = JSON.stringify(ids.map((id, i) => ({ id, code: codes[i], embedding: stored[i] })));
    await sql.unsafe(
      `insert into private.identities (id, environment, created_at) select (r ->> 'id')::uuid, 'test', now() from jsonb_array_elements($1::text::jsonb) r`,
      [rows],
    );
    await sql.unsafe(
      `insert into private.face_templates (identity_id, environment, key_id, code, sealed, seal_key_id, created_at)
       select (r ->> 'id')::uuid, 'test', $2, ('x' || (r ->> 'code'))::bit(2048),
              private.template_seal(array(select e::real from jsonb_array_elements_text(r -> 'embedding') with ordinality as x(e, n) order by n)),
              (select s.id from private.template_seal_keys s where s.retired_at is null), now()
       from jsonb_array_elements($1::text::jsonb) r`,
      [rows, key.keyId],
    );
    const indexOf = new Map<string, number>(ids.map((id, i) => [id, i]));
    for (let q = 0; q < faces.length; q++) {
      const query = key.protect((faces[q] as { embedding: number[] }).embedding);
      // The face itself is stored too: asked for three, it is dropped, so the gallery is every other face.
      const found = await rpc(sql, "face_template_search", {
        environment: "test",
        key_id: key.keyId,
        embedding: query,
        code: key.code(query),
        limit: 12,
      });
      const ranked = found
        .map((m) => ({ index: indexOf.get(m.identity_id) as number, similarity: m.similarity }))
        .filter((m) => m.index !== q);
      const store = ranked.slice(0, 2);
      const exact = stored
        .map((e, index) => ({ index, similarity: dot(query, e) }))
        .filter((m) => m.index !== q)
        .sort((a, b) => b.similarity - a.similarity);
      const queryCode = key.code(query);
      const estimated = codes
        .map((c, index) => ({ index, similarity: Math.cos((Math.PI * hamming(queryCode, c)) / TEMPLATE_CODE_BITS) }))
        .filter((m) => m.index !== q)
        .sort((a, b) => b.similarity - a.similarity);
      const [b, a, c] = [answerOf(exact), answerOf(store), answerOf(estimated)];
      tally.queries++;
      if (a.outcome === b.outcome && a.best === b.best) tally.afterAgrees++;
      for (const [i, m] of store.entries())
        tally.afterSimilarityGap = Math.max(tally.afterSimilarityGap, Math.abs(m.similarity - (exact[i]?.similarity ?? 0)));
      if (c.outcome !== b.outcome || c.best !== b.best) {
        tally.codeAloneDisagrees++;
        if (Math.abs((exact[0]?.similarity ?? 0) - 0.965) < 0.02) tally.codeAloneNearGate++;
      }
      record(before, b, q);
      record(after, a, q);
      const [pb, pa] = [perPerson(exact.slice(0, 11)), perPerson(ranked)];
      if (pa.outcome === pb.outcome && pa.best === pb.best) tally.personAgrees++;
      record(personBefore, pb, q);
      record(personAfter, pa, q);
    }
  }
  if (external) {
    await sql`delete from private.face_templates where key_id in ${sql(keyIds)}`;
  }
  await sql.end();
  await embedded?.stop();
  console.log(`${faces.length} real faces of ${new Set(persons).size} persons, ${keys} keys: ${tally.queries} searches`);
  console.log("outcome        before  after");
  for (const name of ["matchedSame", "matchedOther", "nearMiss", "none"] as const)
    console.log(`${name.padEnd(14)} ${String(before[name]).padStart(6)} ${String(after[name]).padStart(6)}`);
  console.log(
    `after answers as before: ${tally.afterAgrees} of ${tally.queries}; largest similarity gap ${tally.afterSimilarityGap.toExponential(2)}`,
  );
  console.log("per person     before  after");
  for (const name of ["matchedSame", "matchedOther", "nearMiss", "none"] as const)
    console.log(`${name.padEnd(14)} ${String(personBefore[name]).padStart(6)} ${String(personAfter[name]).padStart(6)}`);
  console.log(`per person, after answers as before: ${tally.personAgrees} of ${tally.queries}`);
  console.log(
    `code alone (not used to decide) answers otherwise: ${tally.codeAloneDisagrees} of ${tally.queries} (${tally.codeAloneNearGate} with the best within 0.02 of the gate)`,
  );
  console.log(runConditions(started, loadAtStart));
}

await main();
