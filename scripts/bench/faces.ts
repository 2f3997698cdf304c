/**
 * `npm run bench:faces`: how close face-api puts distinct real persons, and the same person under
 * other cameras, light and occluders, in the space the service compares (the cosine of the
 * device's L2-normalised embeddings) and in face-api's own (the raw descriptors' Euclidean
 * distance). The faces are scripts/media/faces.ts's: the public-domain portraits with their
 * variants, and face-api's group photographs (distinct persons within each; faces of different
 * photographs are never paired, they may be the same person). The held-out portrait is reported
 * apart. Prints what docs/benchmarks.md, "Face matching on real faces", quotes (D-385). With
 * `--impostors DIR` (a public set of portraits, one person each, kept outside the project), the
 * false-match rate at the service's gate is counted on every pair of them, not fitted (D-807).
 */
import { readdirSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { FACE_COSINE_AT_GATE, NEAR_MISS_COSINE_GAP } from "../../shared/identity/face-match";
import { bestScoring, describeFaces, type FaceDescriptor, GROUP_PHOTOS, type OtherModels, PORTRAITS, VARIANTS } from "../media/faces";
import { flag, hasFlag, loadNow, median, quantile, runConditions, textFlag, wilson } from "./common";

interface Face extends FaceDescriptor {
  person: string;
  photo: number;
}
interface Pair {
  cosine: number;
  euclidean: number;
  a: Face;
  b: Face;
}

const norm = (v: readonly number[]) => Math.hypot(...v);
const cosine = (a: readonly number[], b: readonly number[]) => a.reduce((s, x, i) => s + x * (b[i] as number), 0) / (norm(a) * norm(b));
const euclidean = (a: readonly number[], b: readonly number[]) => Math.hypot(...a.map((x, i) => x - (b[i] as number)));

/** Each face named by its person: a portrait's best-scoring face per variant; a group face by the plain face nearest it. */
function label(found: FaceDescriptor[]): Face[] {
  const portraits = PORTRAITS.length;
  const faces: Face[] = [];
  for (const [i, portrait] of PORTRAITS.entries()) {
    for (const f of bestScoring(
      found.filter((f) => Number(f.image) === i),
      (f) => f.variant,
    ))
      faces.push({ ...f, person: portrait.id, photo: i });
  }
  for (const f of found.filter((f) => Number(f.image) >= portraits)) {
    const plain = found.filter((p) => p.image === f.image && p.variant === "plain");
    const nearest = plain.reduce((best, p) => (Math.abs(p.x - f.x) < Math.abs(best.x - f.x) ? p : best), plain[0] as FaceDescriptor);
    faces.push({ ...f, person: `photo${Number(f.image) - portraits + 1}@${nearest.x}`, photo: Number(f.image) });
  }
  return faces;
}

/** The share of distinct-person comparisons whose excess the tail fit is made on. */
const TAIL_SHARE = 0.05;

const fixed = (x: number, digits = 3) => x.toFixed(digits);
const spread = (xs: number[]) => [0, 0.05, 0.5, 0.95, 1].map((p) => fixed(quantile(xs, p))).join(" / ");

/** The resolution of the gates sought. */
const GATE_STEP = 0.0005;

/** The rate per comparison the stricter gates are sought for (the issue's goal). */
const TARGET_FMR = 1e-4;

/** Mean and sample standard deviation. */
function meanSd(xs: readonly number[]): [number, number] {
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  return [mean, Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (xs.length - 1))];
}

/**
 * The false-match rate beyond the measured pairs, two ways: a normal fitted to every distinct-person
 * score, and an exponential fitted to the excess of their top 5% (peaks over a threshold: the
 * tail's own slope).
 */
function tailFits(impostor: readonly number[]) {
  const [mean, sd] = meanSd(impostor);
  const tailFrom = quantile(impostor, 1 - TAIL_SHARE);
  const excess = impostor.filter((c) => c > tailFrom).map((c) => c - tailFrom);
  const meanExcess = excess.reduce((s, x) => s + x, 0) / Math.max(1, excess.length);
  return {
    mean,
    sd,
    tailFrom,
    meanExcess,
    normal: (gate: number) => normalTail((gate - mean) / sd),
    tail: (gate: number) => TAIL_SHARE * Math.exp(-(gate - tailFrom) / meanExcess),
    /** The lowest gate on the grid of GATE_STEP, from `from` up, whose rate is at most `rate`. */
    gateFor: (fmr: (gate: number) => number, rate: number, from: number) => {
      let step = Math.floor(from / GATE_STEP);
      while (step * GATE_STEP < 1 && fmr(step * GATE_STEP) > rate) step++;
      return step * GATE_STEP;
    },
  };
}

/** Same-person scores of all faces, of the portraits and of the held-out portrait, and distinct-person scores. */
interface Scores {
  genuine: number[];
  portraits: number[];
  heldOut: number[];
  impostor: number[];
  /** Every pair of `--impostors`' portraits (distinct persons, none of them tuned on), when given. */
  measured?: number[];
}

/** Cosines of every pair of vectors, computed on unit vectors once (a few hundred thousand pairs). */
function allPairCosines(vectors: readonly number[][]): number[] {
  const units = vectors.map((v) => {
    const n = norm(v);
    return Float64Array.from(v, (x) => x / n);
  });
  const out: number[] = [];
  for (let i = 0; i < units.length; i++) {
    const a = units[i] as Float64Array;
    for (let j = i + 1; j < units.length; j++) {
      const b = units[j] as Float64Array;
      let dot = 0;
      for (let k = 0; k < a.length; k++) dot += (a[k] as number) * (b[k] as number);
      out.push(dot);
    }
  }
  return out;
}

/**
 * How well one embedding separates the persons, in terms that compare across networks whose
 * cosines live on different scales: d', the equal error rate, what the gate just above the closest
 * distinct pair refuses, and what the gate for 1 in 10,000 (by each fit) refuses.
 */
function separation(name: string, { genuine, portraits, heldOut, impostor, measured }: Scores, inService: number[] = []): void {
  const [gm, gs] = meanSd(genuine);
  const [im, is] = meanSd(impostor);
  const refused = (set: number[], gate: number) => `${set.filter((c) => c < gate).length} / ${set.length}`;
  const refusals = (gate: number) =>
    `${refused(genuine, gate)} all, ${refused(portraits, gate)} portraits, ${refused(heldOut, gate)} held out`;
  let eer = { gap: 2, gate: 0, rate: 0 };
  for (let step = -1 / GATE_STEP; step <= 1 / GATE_STEP; step++) {
    const gate = step * GATE_STEP;
    const fmr = impostor.filter((c) => c >= gate).length / impostor.length;
    const fnmr = genuine.filter((c) => c < gate).length / genuine.length;
    if (Math.abs(fmr - fnmr) < eer.gap) eer = { gap: Math.abs(fmr - fnmr), gate, rate: (fmr + fnmr) / 2 };
  }
  const closest = Math.max(...impostor);
  const fits = tailFits(impostor);
  console.log(`
${name}: d' ${fixed((gm - im) / Math.sqrt((gs * gs + is * is) / 2), 2)}; equal error rate ${fixed(100 * eer.rate, 2)}% at cosine ${fixed(eer.gate)}`);
  console.log(`  gate just above the closest distinct pair (${fixed(closest)}): same person refused ${refusals(closest + 1e-9)}`);
  console.log(
    `  distinct persons: normal mean ${fixed(fits.mean, 4)}, sd ${fixed(fits.sd, 4)}; top ${100 * TAIL_SHARE}% above ${fixed(fits.tailFrom)}, mean excess ${fixed(fits.meanExcess, 4)}`,
  );
  for (const [fit, fmr] of [
    ["normal", fits.normal],
    ["tail", fits.tail],
  ] as const) {
    const gate = fits.gateFor(fmr, TARGET_FMR, im);
    console.log(`  gate for 1 in 10,000 (${fit} fit): ${fixed(gate, 4)}, same person refused ${refusals(gate)}`);
  }
  if (!measured) return;
  // Counted, not fitted: the portraits of --impostors are persons these gates were never set on.
  // Sorted once, highest first: the pairs at or above a gate are a prefix, found by bisection.
  const descending = Float64Array.from(measured).sort().reverse();
  const falseMatches = (gate: number) => {
    let [low, high] = [0, descending.length];
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((descending[mid] as number) >= gate) low = mid + 1;
      else high = mid;
    }
    return low;
  };
  const upperBound = (gate: number) => wilson(falseMatches(gate), measured.length)[1] as number;
  const rate = (gate: number) => {
    const k = falseMatches(gate);
    const [low, high] = wilson(k, measured.length);
    return `${k} / ${measured.length} (${(k / measured.length).toExponential(1)}, 95% ${low.toExponential(1)} to ${high.toExponential(1)})`;
  };
  console.log(`  --impostors, ${measured.length} pairs of distinct persons: cosine ${spread(measured)}`);
  for (const gate of inService) {
    console.log(`    false matches at the service's gate ${fixed(gate, 4)}: ${rate(gate)}`);
    // A 1:N search compares the live face with every enrolled one: its false candidates grow with the gallery.
    const bound = upperBound(gate);
    for (const gallery of [1_000, 100_000, 10_000_000])
      console.log(
        `      1:N at ${gallery.toLocaleString("en")}: at most ${(bound * gallery).toPrecision(2)} false candidates expected (the 95% bound)`,
      );
  }
  for (const [fit, fmr] of [
    ["normal", fits.normal],
    ["tail", fits.tail],
  ] as const)
    console.log(`    false matches at the ${fit} fit's gate for 1 in 10,000: ${rate(fits.gateFor(fmr, TARGET_FMR, im))}`);
  console.log(`    false matches just above the closest distinct pair of the faces at hand: ${rate(closest + 1e-9)}`);
  // The lowest gate whose measured rate, and then whose interval's upper end, is at most 1 in 10,000.
  const lowestGate = (within: (gate: number) => boolean) => {
    let step = Math.floor((descending[descending.length - 1] ?? 1) / GATE_STEP);
    while (step * GATE_STEP < 1 && !within(step * GATE_STEP)) step++;
    return step * GATE_STEP;
  };
  const counted = lowestGate((gate) => falseMatches(gate) / measured.length <= TARGET_FMR);
  const bounded = lowestGate((gate) => upperBound(gate) <= TARGET_FMR);
  console.log(`    gate counted at 1 in 10,000: ${fixed(counted, 4)}, ${rate(counted)}; same person refused ${refusals(counted)}`);
  console.log(
    `    gate whose 95% bound is 1 in 10,000: ${bounded < 1 ? `${fixed(bounded, 4)}, ${rate(bounded)}; same person refused ${refusals(bounded)}` : `none (${measured.length} pairs cannot bound it)`}`,
  );
}

/** The mean of equally long vectors. */
function centroid(vectors: readonly number[][]): number[] {
  const sum = new Array<number>(vectors[0]?.length ?? 0).fill(0);
  for (const v of vectors) for (let k = 0; k < sum.length; k++) sum[k] = (sum[k] as number) + (v[k] as number);
  return sum.map((x) => x / vectors.length);
}

/** The upper tail of the standard normal at z (Abramowitz and Stegun 7.1.26). */
function normalTail(z: number): number {
  const t = 1 / (1 + 0.3275911 * (z / Math.SQRT2));
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return z < 0 ? 1 - normalTail(-z) : 0.5 * poly * Math.exp(-(z * z) / 2);
}

/**
 * Other embedding networks to compare on the same faces; none is a dependency of the project, the
 * comparison is run on request (D-805, D-807).
 * - `--onnx FILE --ort DIR`: an ONNX network fed the ArcFace crop, pixels to (x - 127.5) / 128, run
 *   in the page by onnxruntime-web from DIR (its package's `dist/`).
 * - `--tfjs FILE [--crop arcface|box] [--scale S] [--offset O] [--dimension N]`: a TensorFlow.js
 *   graph model (FILE its JSON) fed the ArcFace crop (the default) or face-api's aligned box, its
 *   pixels (0 to 1) times S (1) plus O (0); N picks the embedding among its outputs by length.
 * - `--centre`: the other network's embeddings less their mean over the faces, before the cosine.
 */
function otherModels(): OtherModels | null {
  const onnx = textFlag("onnx");
  const tfjs = textFlag("tfjs");
  if (onnx && tfjs) throw new Error("one of --onnx and --tfjs at a time");
  if (tfjs) {
    const crop = textFlag("crop") ?? "arcface";
    if (crop !== "arcface" && crop !== "box") throw new Error("--crop is arcface or box");
    const name = basename(tfjs).replace(/\.json$/, "");
    const model = { name, file: basename(tfjs), format: "tfjs", crop, scale: flag("scale", 1), offset: flag("offset", 0) } as const;
    return { dir: dirname(resolve(tfjs)), models: [{ ...model, dimension: flag("dimension", 0) }] };
  }
  if (!onnx) return null;
  const ort = textFlag("ort");
  if (!ort) throw new Error("--onnx needs --ort DIR: onnxruntime-web's dist/ directory");
  const name = basename(onnx).replace(/\.onnx$/, "");
  return {
    dir: dirname(resolve(onnx)),
    ort: resolve(ort),
    models: [{ name, file: basename(onnx), format: "onnx", scale: 255 / 128, offset: -127.5 / 128, dimension: 0 }],
  };
}

/**
 * `--impostors DIR`: portraits of distinct persons, one a file (JPEG or PNG), each described as it
 * is (no variants; the best-scoring face of each). They are not part of the project: a public set
 * of many persons is too large to keep, and its persons are ones the gates were never set on.
 */
async function impostorFaces(other: OtherModels | null): Promise<FaceDescriptor[] | null> {
  const dir = textFlag("impostors");
  if (!dir) return null;
  const files = readdirSync(dir)
    .filter((f) => /\.(jpe?g|png)$/i.test(f))
    .sort()
    .map((f) => join(resolve(dir), f));
  const best = bestScoring(await describeFaces(files, ["plain"], other), (f) => f.image);
  console.log(`--impostors: ${best.length} of ${files.length} portraits in ${dir} with a face found`);
  return best;
}

async function main() {
  const started = performance.now();
  const loadAtStart = loadNow();
  const files = [...PORTRAITS.map((p) => p.file), ...GROUP_PHOTOS];
  const other = otherModels();
  const faces = label(await describeFaces(files, VARIANTS, other));
  const strangers = await impostorFaces(other);
  const norms = faces.map((f) => norm(f.descriptor));
  const genuine: Pair[] = [];
  const impostor: Pair[] = [];
  for (let i = 0; i < faces.length; i++) {
    for (let j = i + 1; j < faces.length; j++) {
      const [a, b] = [faces[i] as Face, faces[j] as Face];
      const pair = { cosine: cosine(a.descriptor, b.descriptor), euclidean: euclidean(a.descriptor, b.descriptor), a, b };
      if (a.person === b.person) genuine.push(pair);
      else if (a.photo === b.photo || a.photo < PORTRAITS.length || b.photo < PORTRAITS.length) impostor.push(pair);
    }
  }
  const persons = new Set(faces.map((f) => f.person)).size;
  console.log(
    `${faces.length} faces of ${persons} persons (${PORTRAITS.length} portraits x variants, ${GROUP_PHOTOS.length} group photographs)`,
  );
  console.log(`raw descriptor norm: ${spread(norms)} (min / 5% / median / 95% / max)`);
  for (const [name, set] of [
    ["same person", genuine],
    ["distinct persons", impostor],
  ] as const) {
    console.log(
      `${name} (${set.length} pairs): cosine ${spread(set.map((p) => p.cosine))}; raw Euclidean ${spread(set.map((p) => p.euclidean))}`,
    );
  }
  const closest = [...impostor].sort((x, y) => y.cosine - x.cosine)[0];
  if (closest) {
    console.log(
      `closest distinct pair: ${closest.a.person}/${closest.a.variant} ~ ${closest.b.person}/${closest.b.variant} cosine ${fixed(closest.cosine)}, Euclidean ${fixed(closest.euclidean)}`,
    );
  }
  const portraitPair = impostor.find((p) => p.a.photo === 0 && p.b.photo === 1 && p.a.variant === "plain" && p.b.variant === "plain");
  if (portraitPair)
    console.log(
      `${PORTRAITS[0]?.id} ~ ${PORTRAITS[1]?.id}, plain: cosine ${fixed(portraitPair.cosine)}, Euclidean ${fixed(portraitPair.euclidean)}`,
    );

  console.log("\ngate                     false matches      false non-matches (all)   (portraits)");
  const portraitGenuine = genuine.filter((p) => p.a.photo < PORTRAITS.length);
  const row = (name: string, same: (p: Pair) => boolean) =>
    console.log(
      `${name.padEnd(24)} ${`${impostor.filter(same).length} / ${impostor.length}`.padEnd(18)} ${`${genuine.filter((p) => !same(p)).length} / ${genuine.length}`.padEnd(25)} ${portraitGenuine.filter((p) => !same(p)).length} / ${portraitGenuine.length}`,
    );
  for (const t of [0.6, 0.5, 0.45, 0.4]) row(`raw Euclidean < ${t}`, (p) => p.euclidean < t);
  for (const t of [0.75, 0.9, 0.95, 0.96, FACE_COSINE_AT_GATE, 0.975]) row(`cosine >= ${t}`, (p) => p.cosine >= t);
  for (const p of portraitGenuine.filter((p) => p.cosine < FACE_COSINE_AT_GATE)) {
    console.log(`  refused same person: ${p.a.person}/${p.a.variant} ~ ${p.b.variant} cosine ${fixed(p.cosine)}`);
  }

  const { mean, sd, tailFrom, meanExcess, normal: normalFmr, tail: tailFmr } = tailFits(impostor.map((p) => p.cosine));
  const fmr = normalFmr(FACE_COSINE_AT_GATE);
  console.log(
    `\ndistinct persons' cosine: mean ${fixed(mean, 4)}, sd ${fixed(sd, 4)}; normal tail at the gate ${FACE_COSINE_AT_GATE}: ${fmr.toExponential(1)}`,
  );
  console.log(
    `top ${100 * TAIL_SHARE}% (above ${fixed(tailFrom)}): mean excess ${fixed(meanExcess, 4)}; exponential tail at the gate: ${tailFmr(FACE_COSINE_AT_GATE).toExponential(1)}`,
  );
  console.log("\nstricter gates: expected false-match rate per comparison (normal fit; tail fit), and what they refuse of the same person");
  console.log("gate     normal    tail      same person refused (all)  (portraits)  (held-out portrait)");
  const heldOutGenuine = portraitGenuine.filter((p) => PORTRAITS[p.a.photo]?.heldOut);
  /** Scores of the pairs, and of every pair of --impostors' portraits by the same network's vectors. */
  const scores = (score: (p: Pair) => number, vector: (f: FaceDescriptor) => number[]): Scores => ({
    genuine: genuine.map(score),
    portraits: portraitGenuine.map(score),
    heldOut: heldOutGenuine.map(score),
    impostor: impostor.map(score),
    ...(strangers ? { measured: allPairCosines(strangers.map(vector)) } : {}),
  });
  for (const gate of [FACE_COSINE_AT_GATE, 0.97, 0.975, 0.98, 0.985, 0.99]) {
    const refused = (set: Pair[]) => `${set.filter((p) => p.cosine < gate).length} / ${set.length}`;
    console.log(
      `${fixed(gate)}    ${normalFmr(gate).toExponential(1)}   ${tailFmr(gate).toExponential(1)}   ${refused(genuine).padEnd(26)} ${refused(portraitGenuine).padEnd(12)} ${refused(heldOutGenuine)}`,
    );
  }
  for (const gallery of [1_000, 100_000, 10_000_000]) {
    const any = 1 - (1 - fmr) ** gallery;
    console.log(
      `1:N at ${gallery.toLocaleString("en")}: ${(fmr * gallery).toPrecision(2)} false candidates expected, P(at least one) ${(100 * any).toFixed(1)}%`,
    );
  }
  const gaps = genuine
    .filter((p) => p.a.variant === "plain" || p.b.variant === "plain")
    .map((p) => {
      const probe = p.a.variant === "plain" ? p.b : p.a;
      const others = impostor.filter((q) => q.a === probe || q.b === probe).map((q) => q.cosine);
      return p.cosine - Math.max(...others);
    });
  console.log(`gap of a genuine match over the best distinct person: ${spread(gaps)} (near miss below ${NEAR_MISS_COSINE_GAP})`);
  separation(
    "face-api's recognition net (cosine)",
    scores(
      (p) => p.cosine,
      (f) => f.descriptor,
    ),
    [FACE_COSINE_AT_GATE],
  );
  for (const model of other?.models ?? []) {
    const raw = (f: FaceDescriptor) => f.others?.[model.name] as number[];
    // `--centre`: each embedding less the mean of every face's, for a network whose outputs share a
    // large common part (its mean is taken over these same faces, so the figures flatter it a little).
    const mean = hasFlag("centre") ? centroid(faces.map(raw)) : null;
    const centre = (v: number[]) => (mean ? v.map((x, k) => x - (mean[k] as number)) : v);
    const centred = new Map(faces.map((f) => [f, centre(raw(f))]));
    const embedding = (f: Face) => centred.get(f) as number[];
    const ms = faces.map((f) => f.others?.[`${model.name}Ms`] as number);
    const faceApiMs = faces.map((f) => f.others?.faceApiMs as number);
    const score = (p: Pair) => cosine(embedding(p.a), embedding(p.b));
    const scored = scores(score, (f) => centre(raw(f)));
    const { genuine: same, impostor: distinct } = scored;
    console.log(
      `\n${model.name} (${model.file}, ${embedding(faces[0] as Face).length} numbers, ${fixed(median(ms), 0)} ms a face in the page, median; face-api's recognition net ${fixed(median(faceApiMs), 0)} ms in the same page)`,
    );
    console.log(
      `same person (${same.length} pairs): cosine ${spread(same)}; distinct persons (${distinct.length}): cosine ${spread(distinct)}`,
    );
    const closest = impostor[distinct.indexOf(Math.max(...distinct))] as Pair;
    console.log(
      `closest distinct pair: ${closest.a.person}/${closest.a.variant} ~ ${closest.b.person}/${closest.b.variant} cosine ${fixed(score(closest))} (face-api ${fixed(closest.cosine)})`,
    );
    separation(model.name, scored);
  }
  console.log(`\n${runConditions(started, loadAtStart)}`);
}

await main();
