/**
 * The light challenge (`signals.light.sequence: "light-v1"`, descriptor v2): the colours the
 * screen lights the face with while the person reads, derived from the capture nonce alone.
 * Deterministic, so the client, the engine and the tests compute the same sequence; unpredictable
 * before the nonce exists (SHA-256 of the nonce), so a capture made for another nonce reflects
 * another sequence. docs/presence-descriptor.md, section 11, specifies it exactly.
 *
 * @example
 * const chips = lightSequence('n_7f3a9c21e4', 20); // 40 chips of 0.5 s
 * LIGHT_PALETTE[chips[0]!].hex // '#ff2626'
 */

/** The sequence identifier a v2 descriptor declares in `signals.light.sequence`. */
export const LIGHT_SEQUENCE_V1 = "light-v1";

/** How long each colour is shown, seconds: two changes a second, below WCAG 2.3.1's three flashes. */
export const LIGHT_CHIP_SECONDS = 0.5;

/**
 * The colours, as the screen shows them (sRGB), and their linear-light intensity per channel
 * (what lights the face). Every colour differs from every other in at least two channels.
 */
export const LIGHT_PALETTE: ReadonlyArray<{ name: string; hex: string; linear: readonly [number, number, number] }> = [
  { name: "red", hex: "#ff2626", linear: [1, 0.019, 0.019] },
  { name: "green", hex: "#26ff26", linear: [0.019, 1, 0.019] },
  { name: "blue", hex: "#2626ff", linear: [0.019, 0.019, 1] },
  { name: "yellow", hex: "#ffff26", linear: [1, 1, 0.019] },
  { name: "cyan", hex: "#26ffff", linear: [0.019, 1, 1] },
].map((c) => Object.freeze({ ...c, linear: Object.freeze(c.linear) as readonly [number, number, number] }));

// ---------------------------------------------------------------------------
// SHA-256 (FIPS 180-4), synchronous: the engine is pure and runs where WebCrypto is async only.
// ---------------------------------------------------------------------------

const K = Uint32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 of `bytes`. */
export function sha256(bytes: Uint8Array): Uint8Array {
  const bitLength = bytes.length * 8;
  const padded = new Uint8Array(Math.ceil((bytes.length + 9) / 64) * 64);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bitLength / 2 ** 32));
  view.setUint32(padded.length - 4, bitLength >>> 0);
  const h = Uint32Array.from([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64);
  const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n));
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(block + 4 * i);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15] as number;
      const b = w[i - 2] as number;
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[i] = ((w[i - 16] as number) + s0 + (w[i - 7] as number) + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, hh] = h as unknown as number[];
    for (let i = 0; i < 64; i++) {
      const t1 = ((hh as number) + (rotr(e!, 6) ^ rotr(e!, 11) ^ rotr(e!, 25)) + ((e! & f!) ^ (~e! & g!)) + K[i]! + w[i]!) >>> 0;
      const t2 = ((rotr(a!, 2) ^ rotr(a!, 13) ^ rotr(a!, 22)) + ((a! & b!) ^ (a! & c!) ^ (b! & c!))) >>> 0;
      hh = g;
      g = f;
      f = e;
      e = (d! + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    const out = [a, b, c, d, e, f, g, hh] as number[];
    for (let i = 0; i < 8; i++) h[i] = ((h[i] as number) + (out[i] as number)) >>> 0;
  }
  const digest = new Uint8Array(32);
  const dv = new DataView(digest.buffer);
  for (let i = 0; i < 8; i++) dv.setUint32(4 * i, h[i] as number);
  return digest;
}

function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (ch) => ch.charCodeAt(0) & 0xff);
}

/**
 * The palette indices of the chips covering `seconds` from the capture's start (chip k is shown
 * from k * 0.5 s to (k + 1) * 0.5 s on the capture clock). Byte j of the stream
 * SHA-256("light-v1:" + nonce + ":" + block) (block = 0, 1, ... as decimal, 32 bytes each) steps
 * chip j from chip j - 1 by 1 + (byte mod 4) places round the palette of 5, so that every chip
 * differs from the one before; chip 0 steps from index 0. Prefix-stable: a longer capture has the
 * same first chips.
 */
export function lightSequence(nonce: string, seconds: number): number[] {
  const count = Math.max(1, Math.ceil(seconds / LIGHT_CHIP_SECONDS - 1e-9));
  const chips: number[] = [];
  let previous = 0;
  for (let block = 0; chips.length < count; block++) {
    const bytes = sha256(ascii(`${LIGHT_SEQUENCE_V1}:${nonce}:${block}`));
    for (let j = 0; j < bytes.length && chips.length < count; j++) {
      previous = (previous + 1 + ((bytes[j] as number) % 4)) % LIGHT_PALETTE.length;
      chips.push(previous);
    }
  }
  return chips;
}

/**
 * The screen's light per channel (linear, 0 to 1) averaged over [a, b) seconds of the capture
 * clock; before the first chip the first colour, after the last the last.
 */
export function lightOver(chips: readonly number[], a: number, b: number): [number, number, number] {
  const colourAt = (k: number) => LIGHT_PALETTE[chips[Math.min(chips.length - 1, Math.max(0, k))] as number]!.linear;
  const out: [number, number, number] = [0, 0, 0];
  const span = b - a;
  if (!(span > 0)) return [...colourAt(Math.floor(a / LIGHT_CHIP_SECONDS))];
  let k = Math.floor(a / LIGHT_CHIP_SECONDS);
  let from = a;
  while (from < b) {
    const to = Math.min(b, (k + 1) * LIGHT_CHIP_SECONDS);
    const c = colourAt(k);
    for (let ch = 0; ch < 3; ch++) out[ch] += (c[ch]! * (to - from)) / span;
    from = to;
    k++;
  }
  return out;
}

/**
 * The light on the face that each camera sample sees, per channel: the sequence shown `lagS`
 * earlier, averaged over one sample period centred on the sample (a frame's exposure straddling
 * a change sees part of each colour). `out[c][i]` for channel c (R, G, B) and sample i at i / fs.
 */
export function expectedLight(
  chips: readonly number[],
  fs: number,
  samples: number,
  lagS: number,
): [Float64Array, Float64Array, Float64Array] {
  const out: [Float64Array, Float64Array, Float64Array] = [new Float64Array(samples), new Float64Array(samples), new Float64Array(samples)];
  const half = 0.5 / fs;
  for (let i = 0; i < samples; i++) {
    const c = lightOver(chips, i / fs - lagS - half, i / fs - lagS + half);
    for (let ch = 0; ch < 3; ch++) out[ch]![i] = c[ch]!;
  }
  return out;
}
