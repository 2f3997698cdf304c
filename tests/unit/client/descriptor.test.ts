/**
 * The on-device descriptor computation (client/descriptor/) on synthetic frames and signals: POS
 * recovers a known pulse rate that an intensity flicker would hide from one colour channel, the
 * skin region keeps skin only, the mouth and voice series measure what they should, and a
 * descriptor built from a synthetic reader is judged by the same engine as the simulator's:
 * accepted when genuine, refused with its reason when the pulse is missing or the sound is shifted.
 */
import { describe, expect, it } from "vitest";
import {
  backgroundBands,
  buildDescriptor,
  type FaceObservation,
  gridTimes,
  type LitSample,
  meanBackgroundRgb,
  meanSkinRgb,
  mouthOpening,
  type PixelBox,
  type Point,
  PREFLIGHT,
  posPulse,
  preflightDepth,
  regionMask,
  skinMask,
  summariseFace,
  VoiceMeter,
  validMask,
} from "../../../client/descriptor";
import {
  breathPauses,
  heartPhase,
  meanBpm,
  mouthFromEnvelope,
  pulseWave,
  RESTING_HEART,
  rmsEnvelope,
  syntheticSpeech,
} from "../../../scripts/media/reading";
import { evaluatePresence, lightSequence, parseDescriptor, presenceConfig } from "../../../shared/engine";
import { checkPulse } from "../../../shared/engine/checks";
import { finishPulse } from "../../../shared/engine/dsp";
import { lightOver } from "../../../shared/engine/light";
import { createRng } from "../../../shared/engine/rng";

/** The normalised blood-volume pulse signature of skin (de Haan and van Leest 2014): green strongest. */
const PBV = { r: 0.33, g: 0.77, b: 0.53 };

function ellipse(cx: number, cy: number, rx: number, ry: number, from: number, to: number, count: number): Point[] {
  return Array.from({ length: count }, (_, k) => {
    const angle = from + ((to - from) * k) / (count - 1);
    return { x: cx + rx * Math.cos(angle), y: cy + ry * Math.sin(angle) };
  });
}

/**
 * 68 landmarks (iBUG numbering) of a synthetic frontal face centred at (cx, cy), `w` wide, with the
 * inner lips `gap` pixels apart.
 */
function syntheticLandmarks(cx: number, cy: number, w: number, gap = 2): Point[] {
  const h = 1.25 * w;
  const jaw = ellipse(cx, cy, w, h, Math.PI, 0, 17); // left ear, chin, right ear
  const leftBrow = ellipse(cx - 0.45 * w, cy - 0.4 * h, 0.35 * w, 0.08 * h, Math.PI, 2 * Math.PI, 5);
  const rightBrow = ellipse(cx + 0.45 * w, cy - 0.4 * h, 0.35 * w, 0.08 * h, Math.PI, 2 * Math.PI, 5);
  const nose = Array.from({ length: 9 }, (_, k) => ({ x: cx + (k - 4) * 0.03 * w, y: cy - 0.1 * h + 0.04 * h * k }));
  const eye = (ex: number): Point[] => ellipse(ex, cy - 0.22 * h, 0.16 * w, 0.05 * h, Math.PI, 3 * Math.PI - (2 * Math.PI) / 6, 6);
  const leftEye = eye(cx - 0.42 * w); // 36 outer (left) corner first
  const rightEye = eye(cx + 0.42 * w); // 42 inner corner first, 45 outer (right)
  const my = cy + 0.5 * h;
  const outer = ellipse(cx, my, 0.32 * w, 0.07 * h + gap / 2, Math.PI, 3 * Math.PI - Math.PI / 6, 12); // 48 left corner
  const inner: Point[] = [
    { x: cx - 0.25 * w, y: my },
    { x: cx - 0.12 * w, y: my - gap / 2 },
    { x: cx, y: my - gap / 2 },
    { x: cx + 0.12 * w, y: my - gap / 2 },
    { x: cx + 0.25 * w, y: my },
    { x: cx + 0.12 * w, y: my + gap / 2 },
    { x: cx, y: my + gap / 2 },
    { x: cx - 0.12 * w, y: my + gap / 2 },
  ];
  return [...jaw, ...leftBrow, ...rightBrow, ...nose, ...leftEye, ...rightEye, ...outer, ...inner];
}

/** The regions of 68 landmarks as the skin region draws them: the face's outline (jaw, then the brows back), the eyes, the outer lips. */
function partsOf(landmarks: readonly Point[]) {
  return {
    outline: [...landmarks.slice(0, 17), ...landmarks.slice(17, 27).reverse()],
    eyes: [landmarks.slice(36, 42), landmarks.slice(42, 48)],
    lips: landmarks.slice(48, 60),
  };
}

const SIZE = 160;
const LANDMARKS = syntheticLandmarks(80, 72, 48);
/**
 * What each pixel of the synthetic frame shows: 0 background, 1 skin, 2 eye, 3 lips; drawn with
 * the client's own region function, without the skin region's inward margin.
 */
function labelsOf(landmarks: readonly Point[], width: number, height: number): Uint8Array {
  const labels = new Uint8Array(width * height);
  const { outline, eyes, lips } = partsOf(landmarks);
  const regions: Array<[number, ReturnType<typeof regionMask>]> = [
    [1, regionMask(outline, [...eyes, lips], width, height, 0)],
    ...eyes.map((eye): [number, ReturnType<typeof regionMask>] => [2, regionMask(eye, [], width, height, 0)]),
    [3, regionMask(lips, [], width, height, 0)],
  ];
  for (const [label, { box, mask }] of regions) {
    for (let row = 0; row < box.height; row++) {
      for (let column = 0; column < box.width; column++) {
        if (mask[row * box.width + column]) labels[(box.y + row) * width + box.x + column] = label;
      }
    }
  }
  return labels;
}
const LABELS = labelsOf(LANDMARKS, SIZE, SIZE);
const COLOURS = [
  [60, 80, 120], // a blue wall: not skin chroma
  [190, 140, 115],
  [30, 30, 40],
  [170, 40, 80],
];

/**
 * The pixels of `box` in one RGBA frame of the synthetic face (as getImageData reads them): skin
 * tinted by the pulse along the blood-volume signature, every pixel scaled by `light`, uniform
 * sensor noise of +-`noise` levels, quantised to bytes.
 */
function renderBox(
  box: { x: number; y: number; width: number; height: number },
  pulse: number,
  light: number,
  noise: number,
  rng: ReturnType<typeof createRng>,
  screen: readonly number[] = [0, 0, 0],
): Uint8ClampedArray {
  const rgba = new Uint8ClampedArray(box.width * box.height * 4);
  // The face (skin, eyes, lips) also reflects the screen's light; the far wall does not.
  const tinted = COLOURS.map(([r, g, b], label) => {
    const tint = label === 1 ? pulse : 0;
    const lit = label === 0 ? [1, 1, 1] : screen.map((x) => 1 + x);
    return [
      r! * (1 + tint * PBV.r) * light * lit[0]!,
      g! * (1 + tint * PBV.g) * light * lit[1]!,
      b! * (1 + tint * PBV.b) * light * lit[2]!,
    ];
  });
  for (let row = 0; row < box.height; row++) {
    for (let column = 0; column < box.width; column++) {
      const p = row * box.width + column;
      const [r, g, b] = tinted[LABELS[(box.y + row) * SIZE + box.x + column]!]!;
      rgba[4 * p] = r! + noise * (2 * rng.next() - 1);
      rgba[4 * p + 1] = g! + noise * (2 * rng.next() - 1);
      rgba[4 * p + 2] = b! + noise * (2 * rng.next() - 1);
      rgba[4 * p + 3] = 255;
    }
  }
  return rgba;
}

describe("skin region", () => {
  const skin = skinMask(LANDMARKS, SIZE, SIZE);

  it("marks exactly the pixels the per-pixel definition does, row by row: landmarks moved, turned, clipped by the frame, holes and margins", () => {
    // The definition (docs/presence-descriptor.md 3.2, step 1), pixel by pixel: inside the polygon by
    // the even-odd rule, outside every hole, no nearer than `margin` to any boundary, centres at +0.5.
    const inside = (polygon: readonly Point[], x: number, y: number) => {
      let result = false;
      for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
        const a = polygon[i]!;
        const b = polygon[j]!;
        if (a.y > y !== b.y > y && x < ((b.x - a.x) * (y - a.y)) / (b.y - a.y) + a.x) result = !result;
      }
      return result;
    };
    const near = (polygon: readonly Point[], x: number, y: number, margin: number) =>
      polygon.some((a, i) => {
        const b = polygon[(i + polygon.length - 1) % polygon.length]!;
        const [dx, dy] = [b.x - a.x, b.y - a.y];
        const length2 = dx * dx + dy * dy;
        const t = length2 > 0 ? Math.max(0, Math.min(1, ((x - a.x) * dx + (y - a.y) * dy) / length2)) : 0;
        return (x - (a.x + t * dx)) ** 2 + (y - (a.y + t * dy)) ** 2 < margin * margin;
      });
    const rng = createRng(20261128);
    let compared = 0;
    const compare = (trial: number | string, polygon: readonly Point[], holes: readonly (readonly Point[])[], margin: number) => {
      const { box, mask, pixels } = regionMask(polygon, holes, 160, 120, margin);
      let counted = 0;
      for (let row = 0; row < box.height; row++) {
        for (let column = 0; column < box.width; column++) {
          const [x, y] = [box.x + column + 0.5, box.y + row + 0.5];
          const expected =
            inside(polygon, x, y) &&
            !(margin > 0 && near(polygon, x, y, margin)) &&
            !holes.some((hole) => inside(hole, x, y) || (margin > 0 && near(hole, x, y, margin)));
          if (mask[row * box.width + column] !== (expected ? 1 : 0)) {
            throw new Error(`${trial}: pixel (${column}, ${row}) of ${JSON.stringify(box)} is ${mask[row * box.width + column]}`);
          }
          counted += expected ? 1 : 0;
          compared++;
        }
      }
      expect(pixels).toBe(counted);
    };
    // Boundaries through pixel centres and at exactly the margin from them: the ties of both rules.
    const square = (x0: number, y0: number, x1: number, y1: number) => [
      { x: x0, y: y0 },
      { x: x1, y: y0 },
      { x: x1, y: y1 },
      { x: x0, y: y1 },
    ];
    compare("centres", square(2.5, 3.5, 40.5, 30.5), [square(10.5, 10.5, 20.5, 20.5)], 0);
    compare("centres, margin 2", square(2.5, 3.5, 40.5, 30.5), [square(10.5, 10.5, 20.5, 20.5)], 2);
    compare(
      "a diamond on centres",
      [
        { x: 30.5, y: 5.5 },
        { x: 50.5, y: 25.5 },
        { x: 30.5, y: 45.5 },
        { x: 10.5, y: 25.5 },
      ],
      [],
      1,
    );
    for (let trial = 0; trial < 60; trial++) {
      // A face somewhere in (or partly out of) a 160 x 120 frame, turned, each landmark jittered.
      const [cx, cy, w] = [10 + 140 * rng.next(), 10 + 100 * rng.next(), 12 + 40 * rng.next()];
      const angle = (rng.next() - 0.5) * 1.2;
      const landmarks = syntheticLandmarks(cx, cy, w, 1 + 4 * rng.next()).map((p) => {
        const [x, y] = [p.x - cx, p.y - cy];
        return {
          x: cx + x * Math.cos(angle) - y * Math.sin(angle) + 2 * (rng.next() - 0.5),
          y: cy + x * Math.sin(angle) + y * Math.cos(angle) + 2 * (rng.next() - 0.5),
        };
      });
      const { outline: polygon, eyes, lips } = partsOf(landmarks);
      const holes = [...eyes, lips];
      const margin = trial % 4 === 0 ? 0 : 0.5 + 5 * rng.next();
      compare(`trial ${trial}`, polygon, holes, margin);
    }
    expect(compared).toBeGreaterThan(50_000);
  });

  it("keeps face skin and leaves out the eyes, the lips and the background", () => {
    expect(skin.pixels).toBeGreaterThan(2000);
    for (let row = 0; row < skin.box.height; row++) {
      for (let column = 0; column < skin.box.width; column++) {
        if (!skin.mask[row * skin.box.width + column]) continue;
        expect(LABELS[(skin.box.y + row) * SIZE + skin.box.x + column]).toBe(1);
      }
    }
  });

  it("shrinks the region by 5% of the inter-ocular distance, so no kept pixel touches another region", () => {
    const margin = 0.05 * 0.84 * 48; // the eye centres are 0.84 w apart
    for (let row = 0; row < skin.box.height; row++) {
      for (let column = 0; column < skin.box.width; column++) {
        if (!skin.mask[row * skin.box.width + column]) continue;
        const [x, y] = [skin.box.x + column, skin.box.y + row];
        for (const [dx, dy] of [
          [Math.ceil(margin) - 1, 0],
          [0, Math.ceil(margin) - 1],
        ]) {
          expect(LABELS[(y + dy!) * SIZE + x + dx!]).toBe(1);
        }
      }
    }
  });

  it("averages only skin-coloured pixels", () => {
    const box = { ...skin.box };
    const everything = { box, mask: new Uint8Array(box.width * box.height).fill(1), pixels: box.width * box.height };
    const mean = meanSkinRgb(renderBox(box, 0, 1, 0, createRng(1)), everything)!;
    // The blue wall, the dark eyes and the red lips are filtered out by chroma; skin remains.
    expect(mean.r).toBeCloseTo(190, 0);
    expect(mean.g).toBeCloseTo(140, 0);
    expect(mean.b).toBeCloseTo(115, 0);
    expect(meanSkinRgb(new Uint8ClampedArray(box.width * box.height * 4), everything)).toBeNull();
  });
});

describe("pulse by POS", () => {
  const fs = 30;
  const seconds = 20;
  const pulseHz = 72 / 60;
  const flickerHz = 1.5; // 90 bpm: a light that pulses, five times stronger than the blood volume

  function skinSeries(pulseAmplitude: number): { r: number[]; g: number[]; b: number[] } {
    const skin = skinMask(LANDMARKS, SIZE, SIZE);
    const rng = createRng(7);
    const series = { r: [] as number[], g: [] as number[], b: [] as number[] };
    for (let i = 0; i < fs * seconds; i++) {
      const t = i / fs;
      const light = 1 + 0.02 * Math.sin(2 * Math.PI * flickerHz * t) + 0.05 * (t / seconds);
      const mean = meanSkinRgb(renderBox(skin.box, pulseAmplitude * Math.sin(2 * Math.PI * pulseHz * t), light, 4, rng), skin)!;
      series.r.push(mean.r);
      series.g.push(mean.g);
      series.b.push(mean.b);
    }
    return series;
  }

  it("recovers 72 bpm from rendered frames under a stronger flicker at 90 bpm", () => {
    const series = skinSeries(0.004);
    const pulse = finishPulse(posPulse(series, fs), fs);
    const check = checkPulse(pulse, fs, presenceConfig);
    expect(check.passed).toBe(true);
    expect(Math.abs(check.heart_rate_bpm - 72)).toBeLessThan(1.5);
    // The green channel alone sees the flicker: the projection is what removes it.
    const greenOnly = checkPulse(finishPulse(series.g, fs), fs, presenceConfig);
    expect(Math.abs(greenOnly.heart_rate_bpm - 90)).toBeLessThan(1.5);
  });

  it("finds no pulse in a still photograph under the same light", () => {
    const pulse = finishPulse(posPulse(skinSeries(0), fs), fs);
    const check = checkPulse(pulse, fs, presenceConfig);
    expect(Math.abs(check.heart_rate_bpm - 72)).toBeGreaterThan(3);
  });

  it("is zero for a constant colour, and for a capture shorter than one window", () => {
    const flat = { r: new Array(100).fill(150), g: new Array(100).fill(110), b: new Array(100).fill(90) };
    expect([...posPulse(flat, fs)].every((x) => x === 0)).toBe(true);
    expect(finishPulse(posPulse(flat, fs), fs).every((x) => x === 0)).toBe(true);
    expect([...posPulse({ r: [1, 2], g: [1, 2], b: [1, 2] }, fs)]).toEqual([0, 0]);
  });
});

describe("mouth", () => {
  it("is the inner-lip gap over the outer-eye-corner distance, clipped to [0, 1]", () => {
    const eyes = 2 * 0.42 * 48 + 2 * 0.16 * 48; // outer corners of the synthetic eyes
    expect(mouthOpening(syntheticLandmarks(80, 72, 48, 12))).toBeCloseTo(12 / eyes, 6);
    expect(mouthOpening(syntheticLandmarks(80, 72, 48, 0))).toBe(0);
    expect(mouthOpening(syntheticLandmarks(80, 72, 48, 400))).toBe(1);
  });
});

describe("voice", () => {
  const grid = { t0: 10, sampleRateHz: 20, samples: 40 };

  it("maps the RMS level from [-60, 0] dBFS to [0, 1] on the grid, by capture time", () => {
    const rate = 16000;
    const meter = new VoiceMeter(grid, rate);
    // Silence from t = 10 to 11, a -20 dBFS-peak tone of 1 kHz from 11 to 12 (RMS -23 dBFS).
    const audio = Float32Array.from({ length: 2 * rate }, (_, k) => (k < rate ? 0 : 0.1 * Math.sin((2 * Math.PI * 1000 * k) / rate)));
    for (let k = 0; k < audio.length; k += 128) meter.push(audio.subarray(k, k + 128), grid.t0 + k / rate);
    const voice = meter.envelope();
    expect(voice.slice(0, 19).every((x) => x === 0)).toBe(true);
    const expected = (20 * Math.log10(0.1 / Math.SQRT2) + 60) / 60;
    for (const x of voice.slice(21, 39)) expect(x).toBeCloseTo(expected, 2);
  });

  it("high-passes at 80 Hz: a slow offset does not count as sound", () => {
    const meter = new VoiceMeter(grid, 8000);
    meter.push(new Float32Array(16000).fill(0.5), grid.t0);
    expect(
      meter
        .envelope()
        .slice(4)
        .every((x) => x < 0.05),
    ).toBe(true);
  });

  it("leaves samples before the grid and after it out", () => {
    const meter = new VoiceMeter(grid, 8000);
    meter.push(new Float32Array(8000).fill(0.5), grid.t0 - 1.5);
    meter.push(new Float32Array(8000).fill(0.5), grid.t0 + 2.5);
    expect(meter.envelope().every((x) => x === 0)).toBe(true);
  });
});

describe("valid and face", () => {
  it("marks samples that stand on real frames: a frame within half a period, or between two frames of the camera's cadence", () => {
    const grid = { t0: 0, sampleRateHz: 10, samples: 10 };
    // 0.02 is near t_0, 0.14 near t_1; t_2 is 0.06 and 0.07 from the frames around it, 0.13 apart;
    // 0.27 is near t_3; 0.27 to 0.5 is a gap (t_4 is 0.1 from 0.5); 0.54 to 0.96 another (0.96 is 0.06 from t_9).
    expect(validMask([0.02, 0.14, 0.27, 0.5, 0.54, 0.96], grid)).toEqual([1, 1, 1, 1, 0, 1, 0, 0, 0, 0]);
    expect(gridTimes(grid)[3]).toBeCloseTo(0.3, 12);
  });

  /** A camera at the grid's rate: frames `phase` periods off the grid, each with up to 5 ms of timestamp jitter. */
  function cadence(phase: number, seconds: number, fs: number, dropped: number[] = []): number[] {
    const rng = createRng(11);
    const frames: number[] = [];
    for (let k = -fs; k < (seconds + 1) * fs; k++) {
      if (!dropped.includes(k)) frames.push((k + phase) / fs + rng.uniform(-0.005, 0.005));
    }
    return frames;
  }

  it("counts every sample of a camera at the grid's rate whatever its phase and jitter, and each dropped frame's sample", () => {
    const grid = { t0: 0, sampleRateHz: 15, samples: 225 };
    for (const phase of [0, 0.25, 0.5, 0.75]) {
      expect(
        validMask(cadence(phase, 15, 15), grid).every((v) => v === 1),
        `phase ${phase}`,
      ).toBe(true);
    }
    // Frames on the grid: one dropped frame leaves its sample without one, two in a row leave two.
    const valid = validMask(cadence(0, 15, 15, [40, 100, 101]), grid);
    expect(valid.flatMap((v, i) => (v === 0 ? [i] : []))).toEqual([40, 100, 101]);
  });

  it("counts every sample of a 25 fps camera on the 30 Hz grid the capture takes from 25 fps up", () => {
    // Within half a period of a frame, only about 5 samples in 6 would count: near the 80% the engine asks.
    const valid = validMask(cadence(0.3, 15, 25), { t0: 0, sampleRateHz: 30, samples: 450 });
    expect(valid.every((v) => v === 1)).toBe(true);
  });

  it("averages the descriptors of the 5 best detections, L2-normalised, with their mean score as quality", () => {
    const unit = (k: number) => Array.from({ length: 128 }, (_, i) => (i === k ? 1 : 0));
    const observations: FaceObservation[] = [0.9, 0.8, 0.95, 0.3, 0.85, 0.7, 0.2].map((score, k) => ({ score, descriptor: unit(k) }));
    const face = summariseFace(observations)!;
    expect(face.model).toBe("face-api/resnet128");
    expect(face.quality).toBeCloseTo((0.95 + 0.9 + 0.85 + 0.8 + 0.7) / 5, 3);
    const expected = 1 / Math.sqrt(5);
    expect(face.embedding.slice(0, 7)).toEqual(
      [expected, expected, expected, 0, expected, expected, 0].map((x) => Math.round(x * 1e6) / 1e6),
    );
    expect(summariseFace([])).toBeNull();
  });
});

describe("a descriptor of a synthetic reader, judged by the service's engine", () => {
  const fs = 30;
  const audioRate = 16000;
  const lines = [
    { speakS: 2.8, pauseS: 1.2 },
    { speakS: 2.2, pauseS: 1.0 },
    { speakS: 3.0, pauseS: 1.3 },
    { speakS: 2.4, pauseS: 1.1 },
    { speakS: 2.6, pauseS: 1.2 },
    { speakS: 2.0, pauseS: 1.2 },
  ];
  const speech = syntheticSpeech(lines, audioRate);
  const fineRate = 100;
  const envelope = rmsEnvelope(speech.audio, audioRate, fineRate);
  const phase = heartPhase(breathPauses(envelope, fineRate), fineRate, RESTING_HEART);
  const mouthFine = mouthFromEnvelope(envelope, fineRate);
  const at = (series: Float64Array, t: number) => series[Math.min(series.length - 1, Math.round(t * fineRate))]!;

  /**
   * A capture of the reader: a camera at 30 fps with 2 ms of jitter, landmarks at 10 Hz. With
   * `light`, the screen shows lightSequence(light.nonce) and the face reflects it (`depth` of the
   * ambient at full screen light, 60 ms of display latency) while auto-exposure swings both the
   * face and the background by 20%: a descriptor v2. Each frame is exposed for the whole frame
   * period, or for 1 ms with `shortShutter` (a frame sees one colour where the colour changes).
   * With `crosstalk` each channel also sees that share of the screen's other channels (a camera's
   * overlapping colour filters and colour matrix), so a channel reflects two colours that light it
   * alike differently.
   */
  function capture(options: {
    pulse: boolean;
    audioShiftS?: number;
    light?: { nonce: string; depth: number; shortShutter?: boolean; crosstalk?: number };
  }) {
    const rng = createRng(3);
    const seconds = Math.floor(speech.seconds);
    const grid = { t0: 100, sampleRateHz: fs, samples: seconds * fs };
    const skin = [];
    const background = [];
    const mouth = [];
    const chips = options.light ? lightSequence(options.light.nonce, seconds + 1) : [];
    for (let k = 0; k < seconds * 30; k++) {
      const t = k / 30 + 0.002 * rng.normal();
      const bvp = options.pulse ? 0.004 * pulseWave(at(phase, t)) : 0;
      const noise = () => 0.03 * rng.normal();
      const exposure = options.light ? 1 + 0.2 * Math.sin(t / 3) : 1;
      const exposed = options.light?.shortShutter ? 0.0005 : 1 / 60;
      const screen = options.light
        ? lightOver(chips, t - 0.06 - exposed, t - 0.06 + exposed).map(
            (x, ch, all) =>
              1 + options.light!.depth * (x + (options.light!.crosstalk ?? 0) * (all[(ch + 1) % 3]! + 2 * all[(ch + 2) % 3]!)),
          )
        : [1, 1, 1];
      skin.push({
        t: grid.t0 + t,
        r: exposure * screen[0]! * 150 * (1 + bvp * PBV.r) + noise(),
        g: exposure * screen[1]! * 110 * (1 + bvp * PBV.g) + noise(),
        b: exposure * screen[2]! * 90 * (1 + bvp * PBV.b) + noise(),
      });
      background.push({ t: grid.t0 + t, r: exposure * 60 + noise(), g: exposure * 80 + noise(), b: exposure * 120 + noise() });
      if (k % 3 === 0) mouth.push({ t: grid.t0 + t, opening: at(mouthFine, t) + 0.003 * rng.normal() });
    }
    const meter = new VoiceMeter(grid, audioRate);
    for (let k = 0; k < speech.audio.length; k += 128) {
      meter.push(speech.audio.subarray(k, k + 128), grid.t0 + k / audioRate + (options.audioShiftS ?? 0));
    }
    const face = Array.from({ length: 128 }, (_, i) => Math.sin(i + 1));
    const faces = Array.from({ length: 8 }, (_, k) => ({ score: 0.8 + 0.01 * k, descriptor: face.map((x) => x + 0.05 * rng.normal()) }));
    return buildDescriptor({
      nonce: "n_synthetic_reader",
      capturedAt: "2026-05-01T12:00:00.000Z",
      grid,
      skin,
      mouth,
      voice: meter.envelope(),
      faces,
      ...(options.light ? { background } : {}),
    });
  }

  it("is a valid descriptor v1 that the engine accepts, with the reader's heart rate", () => {
    const descriptor = capture({ pulse: true });
    const parsed = parseDescriptor(descriptor);
    expect(parsed.ok).toBe(true);
    const result = evaluatePresence(descriptor);
    expect(result.liveness.checks).toMatchObject({
      quality: { passed: true },
      speech: { passed: true },
      pulse: { passed: true },
      av_sync: { passed: true },
      pulse_speech_coupling: { passed: true },
    });
    expect(result.accepted).toBe(true);
    expect(Math.abs(result.heart_rate_bpm! - meanBpm(phase, fineRate))).toBeLessThan(2);
    expect(Math.abs(meanBpm(phase, fineRate) - 72)).toBeLessThan(2);
  });

  it("is refused for no pulse when the face is a photograph", () => {
    expect(evaluatePresence(capture({ pulse: false })).reason).toBe("no_pulse");
  });

  it("is refused for audio and video out of step when the sound is shifted by 400 ms", () => {
    expect(evaluatePresence(capture({ pulse: true, audioShiftS: 0.4 })).reason).toBe("av_desync");
  });

  it("with the light challenge, is a descriptor v2 whose reflection the engine finds, with the pulse kept", () => {
    const descriptor = capture({ pulse: true, light: { nonce: "n_synthetic_reader", depth: 0.25 } });
    expect(descriptor.version).toBe(2);
    expect(parseDescriptor(descriptor).ok).toBe(true);
    expect(descriptor.signals.light?.skin).toHaveLength(descriptor.signals.pulse.length);
    const result = evaluatePresence(descriptor);
    expect(result.liveness.checks.light, JSON.stringify(result.liveness.checks)).toMatchObject({ passed: true });
    expect(Math.abs(result.liveness.checks.light!.lag_ms - 60)).toBeLessThanOrEqual(20);
    expect(result.reason, JSON.stringify(result.liveness.checks.pulse)).toBeNull();
    // The reflection, 60 times the pulse's swing, was taken out before POS.
    expect(Math.abs(result.heart_rate_bpm! - meanBpm(phase, fineRate))).toBeLessThan(2);
  });

  it("with the light challenge and a short shutter, still keeps the pulse: the samples at the changes of colour are bridged", () => {
    const descriptor = capture({ pulse: true, light: { nonce: "n_synthetic_reader", depth: 0.25, shortShutter: true } });
    const result = evaluatePresence(descriptor);
    expect(result.reason, JSON.stringify(result.liveness.checks)).toBeNull();
    expect(Math.abs(result.heart_rate_bpm! - meanBpm(phase, fineRate))).toBeLessThan(2);
  });

  it("with the light challenge, refuses a photograph for no pulse when the camera mixes the screen's colours, and keeps a face's pulse (D-498)", () => {
    // What the division by a channel's own share of the light leaves, one level per colour, must
    // not read as a pulse: the still is refused for its pulse, the reflection being followed.
    const still = evaluatePresence(capture({ pulse: false, light: { nonce: "n_synthetic_reader", depth: 0.25, crosstalk: 0.1 } }));
    expect(still.liveness.checks.light?.passed).toBe(true);
    expect(still.reason, JSON.stringify(still.liveness.checks.pulse)).toBe("no_pulse");
    const face = evaluatePresence(capture({ pulse: true, light: { nonce: "n_synthetic_reader", depth: 0.25, crosstalk: 0.1 } }));
    expect(face.reason, JSON.stringify(face.liveness.checks)).toBeNull();
    expect(Math.abs(face.heart_rate_bpm! - meanBpm(phase, fineRate))).toBeLessThan(2);
  });

  it("with the light challenge, is refused when the face reflected another nonce's sequence", () => {
    const descriptor = capture({ pulse: true, light: { nonce: "n_another_capture", depth: 0.25 } });
    const result = evaluatePresence(descriptor);
    expect(result.liveness.checks.light?.passed).toBe(false);
    // The reflection of the other sequence also stays in the skin colour and drowns the pulse.
    expect(["light_not_followed", "no_pulse"]).toContain(result.reason);
  });

  it("with the light challenge, is refused when nothing reflects the screen (video injected into the camera)", () => {
    const descriptor = capture({ pulse: true, light: { nonce: "n_synthetic_reader", depth: 0 } });
    expect(evaluatePresence(descriptor).reason).toBe("light_not_followed");
  });
});

describe("the light challenge's colours, on rendered frames", () => {
  it("the skin's mean colour carries the screen's light, channel by channel", () => {
    const skin = skinMask(LANDMARKS, SIZE, SIZE);
    const dark = meanSkinRgb(renderBox(skin.box, 0, 1, 0, createRng(1)), skin, { chromaGate: false })!;
    for (const screen of [
      [0.3, 0.006, 0.006],
      [0.006, 0.3, 0.3],
    ]) {
      const lit = meanSkinRgb(renderBox(skin.box, 0, 1, 0, createRng(1), screen), skin, { chromaGate: false })!;
      expect(lit.r / dark.r).toBeCloseTo(1 + screen[0]!, 2);
      expect(lit.g / dark.g).toBeCloseTo(1 + screen[1]!, 2);
      expect(lit.b / dark.b).toBeCloseTo(1 + screen[2]!, 2);
    }
  });

  /** The pixels of `box` out of a whole frame `frameWidth` wide, as VideoFrame.copyTo gives them. */
  function cut(frame: Uint8ClampedArray, frameWidth: number, box: PixelBox): Uint8ClampedArray {
    const out = new Uint8ClampedArray(box.width * box.height * 4);
    for (let row = 0; row < box.height; row++) {
      const from = ((box.y + row) * frameWidth + box.x) * 4;
      out.set(frame.subarray(from, from + box.width * 4), row * box.width * 4);
    }
    return out;
  }

  /** The background's mean as the frame's own copy of the bands gives it. */
  function background(frame: Uint8ClampedArray, width: number, height: number, landmarks: Point[]) {
    const bands = backgroundBands(landmarks, width, height);
    return meanBackgroundRgb(bands.map((box) => ({ box, rgba: cut(frame, width, box) })));
  }

  it("the background is the frame beside and above the head, down to the chin, every 4th pixel", () => {
    const [width, height] = [320, 160];
    const landmarks = syntheticLandmarks(160, 72, 48); // head from x = 112 to 208, chin at y = 132
    const rgba = new Uint8ClampedArray(width * height * 4);
    for (let p = 0; p < width * height; p++) {
      const [x, y] = [p % width, Math.floor(p / width)];
      // The wall; the head and the space beside it (x 64..256); the shoulders below the chin.
      const colour = y >= 132 ? [20, 200, 20] : x >= 64 && x < 256 ? [190, 140, 115] : [60, 80, 120];
      rgba.set([...colour, 255], 4 * p);
    }
    expect(backgroundBands(landmarks, width, height), "only the bands are copied out of the frame").toEqual([
      { x: 0, y: 0, width: 64, height: 132 },
      { x: 256, y: 0, width: 64, height: 132 },
    ]);
    const mean = background(rgba, width, height, landmarks)!;
    expect(mean).toMatchObject({ r: 60, g: 80, b: 120 });
    expect(mean.pixels).toBe(16 * 33 * 2);
    expect(backgroundBands(syntheticLandmarks(100, 40, 90), 200, 100), "a face filling the frame").toEqual([]);
    expect(background(rgba, 200, 100, syntheticLandmarks(100, 40, 90))).toBeNull();
  });

  it("samples the same pixels of the frame wherever the bands start: the frame's every 4th column and row", () => {
    const [width, height] = [321, 163];
    const rng = createRng(5);
    const rgba = Uint8ClampedArray.from({ length: width * height * 4 }, () => rng.int(0, 255));
    for (const [cx, cy, size] of [
      [160.3, 72.7, 48],
      [101.9, 70.2, 37.5],
      [230.6, 90.1, 41.25],
    ] as const) {
      const landmarks = syntheticLandmarks(cx, cy, size);
      // The definition read over the whole frame: every 4th pixel outside the widened head, above the chin.
      const outline = landmarks.slice(0, 27);
      const [left, right] = [Math.min(...outline.map((p) => p.x)), Math.max(...outline.map((p) => p.x))];
      const chin = Math.max(...outline.map((p) => p.y));
      const half = (right - left) / 2;
      let [r, count] = [0, 0];
      for (let y = 0; y < Math.min(height, chin); y += 4) {
        for (let x = 0; x < width; x += 4) {
          if (x + 0.5 >= left - half && x + 0.5 <= right + half) continue;
          r += rgba[4 * (y * width + x)]!;
          count++;
        }
      }
      const mean = background(rgba, width, height, landmarks)!;
      expect(mean.pixels).toBe(count);
      expect(mean.r).toBeCloseTo(r / count, 9);
    }
  });
});

describe("the light challenge's preflight", () => {
  /**
   * Frames at 15 Hz from `start - 0.2` to the preflight's end: the skin reflects the white step at
   * `depth` (its log ratio to the background rises by ln(1 + depth)) from `lagS` after it starts,
   * under a camera whose exposure swings every frame (a common gain on skin and background).
   */
  function flash(start: number, depth: number, lagS: number): LitSample[] {
    const frames: LitSample[] = [];
    for (let t = start - 0.2; t < start + 1.2; t += 1 / 15) {
      const white = t - lagS >= start && t - lagS < start + PREFLIGHT.stepSeconds;
      const exposure = 1 + 0.3 * Math.sin(7 * t);
      const skin = (v: number) => (1 + v) * (white ? 1 + depth : 1) * exposure - 1;
      const wall = (v: number) => (1 + v) * exposure - 1;
      frames.push({ t, skin: { r: skin(170), g: skin(120), b: skin(100) }, background: { r: wall(90), g: wall(95), b: wall(100) } });
    }
    return frames;
  }

  it("measures the reflection's depth as the engine does: the log colour ratio, exposure cancelled, the display's latency left out", () => {
    for (const depth of [0.02, 0.1, 0.3]) {
      expect(preflightDepth(flash(100, depth, 0.12), 100)).toBeCloseTo(Math.log1p(depth), 6);
    }
    expect(preflightDepth(flash(100, 0, 0.05), 100)).toBeCloseTo(0, 6);
  });

  it("passes a strong reflection and stops a weak one at PREFLIGHT.minDepth; no frames in a step, no answer", () => {
    expect(preflightDepth(flash(5, 0.08, 0.05), 5)!).toBeGreaterThanOrEqual(PREFLIGHT.minDepth);
    expect(preflightDepth(flash(5, 0.02, 0.05), 5)!).toBeLessThan(PREFLIGHT.minDepth);
    expect(
      preflightDepth(
        flash(5, 0.3, 0.05).filter((s) => s.t < 5.5),
        5,
      ),
    ).toBeNull();
    expect(preflightDepth([], 5)).toBeNull();
  });
});
