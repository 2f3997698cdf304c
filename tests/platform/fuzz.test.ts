/**
 * The generated-input test (issue 11): for every function of the registry, requests built by
 * fast-check from its valibot schema and from hostile values (tests/harness/fuzz-requests.ts), sent
 * over HTTP. No answer may be a 5xx, every status and code must be one docs/functions.md lists for
 * that function (and, on the resource API, one its OpenAPI document lists for the route), and afterwards every row the requests could have written must belong to an answer
 * that says it was written (tests/harness/fuzz-run.ts).
 *
 * The suite runs FUZZ_REQUESTS (default 2,000) with the fixed FUZZ_SEED; `npm run fuzz` runs 12,000
 * and `npm run fuzz:v1` 10,000 of the resource API alone, and print the figures docs/benchmarks.md records.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import resourceApi from "../../functions/resource-api/index";
import { resourceApiDocument } from "../../functions/resource-api/openapi";
import { functionNames } from "../../shared/kernel/registry";
import { capture } from "../harness/captures";
import { documentedAnswers } from "../harness/documented-answers";
import { testDb } from "../harness/factories";
import { type FunctionPlan, functionPlans, skeletonOf } from "../harness/fuzz-plans";
import { type Recipe, recipeOf } from "../harness/fuzz-requests";
import {
  Attribution,
  type Cohort,
  cohort,
  hostedOutcomes,
  identitiesOf,
  ledgerRows,
  type Outcome,
  problemsOf,
  send,
} from "../harness/fuzz-run";
import { type DocumentedOperations, documentedOperations } from "../harness/openapi-answers";

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 2_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
/** Requests per cohort of fixtures: few enough that no per-merchant rate limit is reached on the usual paths. */
const PER_COHORT = 300;
const CONCURRENCY = 6;
/** FUZZ_FUNCTIONS=resource-api,…: draw only these functions' requests (`npm run fuzz:v1`). */
const ONLY = process.env.FUZZ_FUNCTIONS?.split(",").map((name) => name.trim());

describe("generated input, every function", () => {
  it(`answers ${REQUESTS} generated requests with no 5xx, only documented answers, and writes only what it answers`, {
    timeout: 3_600_000,
  }, async () => {
    const docs = documentedAnswers();
    const plans = functionPlans({
      live: skeletonOf(capture(1).descriptor),
      attack: skeletonOf(capture(1, { attack: "photo" }).descriptor),
    });
    expect(plans.map((plan) => plan.name).sort()).toEqual([...functionNames].sort());
    const drawn = ONLY ? plans.filter((plan) => ONLY.includes(plan.name)) : plans;
    const recipes = drawnRecipes(drawn, REQUESTS, SEED);

    const started = performance.now();
    const attribution = new Attribution();
    const outcomes: Outcome[] = [];
    const cohorts: Cohort[] = [];
    let setupMs = 0;
    for (let from = 0; from < recipes.length; from += PER_COHORT) {
      const setupStarted = performance.now();
      const c = await cohort();
      setupMs += performance.now() - setupStarted;
      cohorts.push(c);
      const batch = recipes.slice(from, from + PER_COHORT);
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < batch.length) {
            const outcome = await send(c, batch[next++]);
            attribution.record(outcome);
            outcomes.push(outcome);
          }
        }),
      );
    }
    const seconds = (performance.now() - started) / 1000;

    report(outcomes, seconds, setupMs / 1000);
    const openApi = documentedOperations(resourceApiDocument(resourceApi));
    const failures = outcomes.flatMap((o) =>
      [...problemsOf(o, docs), ...openApiProblems(o, openApi)].map((problem) => ({
        problem,
        request: summary(o),
        answer: o.text.slice(0, 300),
      })),
    );
    expect(failures.slice(0, 15), `${failures.length} answers break the contract`).toEqual([]);

    const unattributed: string[] = [];
    for (const c of cohorts) {
      const after = await ledgerRows(testDb(), c.merchant.merchant_id);
      const documented = await identitiesOf(testDb(), c.merchant.merchant_id, attribution.documentSubjects);
      const hosted = await hostedOutcomes(testDb(), c.merchant.merchant_id, attribution.hostedEnded);
      const claimed = await identitiesOf(testDb(), c.merchant.merchant_id, attribution.claimedSubjects);
      unattributed.push(...attribution.unattributed(c.before, after, hosted, documented, claimed));
    }

    expect(unattributed.slice(0, 15), `${unattributed.length} rows written that no answer accounts for`).toEqual([]);
    // the run reached past the edge: approvals, decisions and refusals deep in the operations
    const seen = new Set(outcomes.map((o) => `${o.recipe.fn} ${o.status}`));
    const deepest = [
      "mandate-consume 200",
      "mandate-issue 201",
      "process-biovital-transaction 200",
      "face-identify 200",
      "resource-api 201",
    ];
    for (const deep of deepest.filter((answer) => drawn.some((plan) => answer.startsWith(`${plan.name} `)))) {
      expect(seen.has(deep), deep).toBe(true);
    }
  });
});

/**
 * Each function's requests come from a stream of its own (the seed and the function's name), its
 * share of the run in proportion to its weight, interleaved evenly. A function added to the registry
 * then shortens every other's stream a little and redraws none: with one shared stream it redrew
 * every sample, and the run's reach into deep answers changed with the registry's luck.
 */
function drawnRecipes(plans: FunctionPlan[], requests: number, seed: number): Recipe[] {
  const weights = plans.map((plan) => plan.weight ?? 8);
  const total = weights.reduce((sum, w) => sum + w, 0);
  const exact = weights.map((w) => (requests * w) / total);
  const counts = exact.map(Math.floor);
  // largest remainders first, ties in the registry's order, so the counts add up to the run
  const byRemainder = exact.map((x, i) => ({ i, rest: x - Math.floor(x) })).sort((a, b) => b.rest - a.rest || a.i - b.i);
  for (let k = 0; k < requests - counts.reduce((sum, c) => sum + c, 0); k++) counts[byRemainder[k].i]++;
  const placed = plans.flatMap((plan, i) =>
    counts[i] === 0
      ? []
      : fc
          .sample(recipeOf(plan), { seed: streamSeed(seed, plan.name), numRuns: counts[i] })
          .map((recipe, n) => ({ recipe, at: (n + 0.5) / counts[i], i })),
  );
  return placed.sort((a, b) => a.at - b.at || a.i - b.i).map((p) => p.recipe);
}

/** A 32-bit seed for one function's stream (FNV-1a over the run's seed and the function's name). */
function streamSeed(seed: number, name: string): number {
  let hash = 0x811c9dc5;
  for (const ch of `${seed}:${name}`) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return hash | 0;
}

/** An answer of the resource API that its OpenAPI document (GET /v1/openapi.json) does not list for the route. */
function openApiProblems(o: Outcome, openApi: DocumentedOperations): string[] {
  const r = o.recipe;
  if (r.fn !== "resource-api" || r.suffix !== "") return [];
  const problem = openApi.problemOf(r.method, `/v1${r.route.path}`, o.status, o.code);
  return problem ? [problem] : [];
}

function summary(o: Outcome): string {
  const r = o.recipe;
  const body =
    r.body.kind === "json"
      ? JSON.stringify(r.body.value, (_k, v) => (v?.constructor?.name === "RawJson" ? `<raw ${v.text.length}>` : v))
      : r.body.kind;
  return `${r.method} ${r.fn}${r.route.path}${r.suffix} key=${JSON.stringify(r.key)} hostile=[${r.hostile.join(",")}] body=${(body ?? "").slice(0, 300)}`;
}

/** The figures docs/benchmarks.md records for `npm run fuzz`. */
function report(outcomes: Outcome[], seconds: number, setupSeconds: number) {
  const count = (key: (o: Outcome) => string) => {
    const counts = new Map<string, number>();
    for (const o of outcomes) if (key(o)) counts.set(key(o), (counts.get(key(o)) ?? 0) + 1);
    return Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b)));
  };
  const hostile = new Map<string, number>();
  for (const o of outcomes) for (const label of new Set(o.recipe.hostile)) hostile.set(label, (hostile.get(label) ?? 0) + 1);
  const figures = {
    seed: SEED,
    requests: outcomes.length,
    seconds: Math.round(seconds * 10) / 10,
    of_which_fixtures: Math.round(setupSeconds * 10) / 10,
    requests_per_second: Math.round(outcomes.length / seconds),
    as_a_client_means_them: outcomes.filter((o) => o.recipe.hostile.length === 0).length,
    by_function: count((o) => o.recipe.fn),
    mcp_tool_calls: count((o) => (o.tool ? o.tool.name : "")),
    statuses: count((o) => String(o.status)),
    answers: count((o) => `${o.recipe.fn} ${o.status} ${o.code}`.trim()),
    tool_answers: count((o) => (o.tool ? `${o.tool.name} ${o.tool.status} ${o.tool.code}`.trim() : "")),
    hostile: Object.fromEntries([...hostile].sort(([a], [b]) => a.localeCompare(b))),
    slowest_ms: Math.round(Math.max(...outcomes.map((o) => o.ms))),
  };
  console.log(`fuzz figures ${JSON.stringify(figures, null, 2)}`);
}
