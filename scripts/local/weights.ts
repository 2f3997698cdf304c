/**
 * Model weights for the browser, as the build ships them (scripts/local/build.ts): any TensorFlow.js
 * weights manifest (`<model>-weights_manifest.json` and its shards) rewritten with every float32
 * tensor quantised to 8 bits, affine per tensor (`quantization: {dtype: "uint8", scale, min}`),
 * which TensorFlow.js dequantises to float32 when it loads them (`io.decodeWeights`). Tensors
 * already in 8 bits are copied byte for byte; tensors quantised to 16 bits or stored as float16
 * are dequantised first; tensors of other types (int32, bool) are copied. The result is one shard.
 * D-405.
 */

/** One tensor of a weights manifest (the fields TensorFlow.js reads). */
export interface WeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: { dtype: "uint8" | "uint16" | "float16"; scale?: number; min?: number };
}

/** A weights manifest's group: its shards, in order, and the tensors laid out across them. */
export interface WeightGroup {
  paths: string[];
  weights: WeightSpec[];
}

/** What quantisation did to a model. */
export interface QuantisedWeights {
  manifest: WeightGroup[];
  data: Uint8Array;
  /** Tensors newly quantised (float32, float16 or 16-bit before), and their largest error after dequantisation. */
  quantised: { name: string; from: string; maxError: number }[];
}

const BYTES: Record<string, number> = { float32: 4, int32: 4, bool: 1, uint8: 1, uint16: 2, float16: 2, complex64: 8 };

const elementsOf = (spec: WeightSpec) => spec.shape.reduce((product, size) => product * size, 1);

/** A float16 (IEEE 754 half) as a number. */
function halfToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/** A stored float tensor's values as float32, whatever form it is stored in. */
function floatValues(spec: WeightSpec, bytes: Uint8Array): Float32Array {
  const n = elementsOf(spec);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const values = new Float32Array(n);
  const q = spec.quantization;
  for (let i = 0; i < n; i++) {
    if (!q) values[i] = view.getFloat32(i * 4, true);
    else if (q.dtype === "float16") values[i] = halfToFloat(view.getUint16(i * 2, true));
    else {
      const stored = q.dtype === "uint8" ? view.getUint8(i) : view.getUint16(i * 2, true);
      values[i] = stored * (q.scale ?? 1) + (q.min ?? 0);
    }
  }
  return values;
}

/**
 * `values` in 8 bits: the range [min, max] in 255 steps, nudged so that zero is a step when the
 * range holds it (as TensorFlow.js's converter does: zeros stay exact zeros).
 */
export function quantiseUint8(values: Float32Array): { bytes: Uint8Array; scale: number; min: number } {
  let low = 0;
  let high = 0;
  if (values.length > 0) {
    low = Number.POSITIVE_INFINITY;
    high = Number.NEGATIVE_INFINITY;
    for (const v of values) {
      low = Math.min(low, v);
      high = Math.max(high, v);
    }
  }
  let scale = (high - low) / 255;
  let min = low;
  if (scale === 0) scale = 1;
  else if (low < 0 && high > 0) min = -Math.round(-low / scale) * scale;
  const bytes = new Uint8Array(values.length);
  for (let i = 0; i < values.length; i++) bytes[i] = Math.min(255, Math.max(0, Math.round(((values[i] as number) - min) / scale)));
  return { bytes, scale, min };
}

/**
 * Rewrites a model (its manifest and each group's shards, concatenated in order) with every float
 * tensor in 8 bits, into one shard named `shard`.
 */
export function quantiseWeights(manifest: readonly WeightGroup[], groupData: readonly Uint8Array[], shard: string): QuantisedWeights {
  const weights: WeightSpec[] = [];
  const parts: Uint8Array[] = [];
  const quantised: QuantisedWeights["quantised"] = [];
  manifest.forEach((group, g) => {
    const data = groupData[g];
    if (!data) throw new Error(`no data for weight group ${g}`);
    let offset = 0;
    for (const spec of group.weights) {
      const stored = spec.quantization?.dtype ?? spec.dtype;
      const size = elementsOf(spec) * (BYTES[stored] ?? Number.NaN);
      if (!Number.isFinite(size)) throw new Error(`${spec.name}: weights of type ${stored} are not supported`);
      const bytes = data.subarray(offset, offset + size);
      if (bytes.length !== size) throw new Error(`${spec.name}: the shards end before the tensor does`);
      offset += size;
      if (spec.dtype !== "float32" || spec.quantization?.dtype === "uint8") {
        weights.push(spec);
        parts.push(bytes);
        continue;
      }
      const values = floatValues(spec, bytes);
      const q = quantiseUint8(values);
      let maxError = 0;
      for (let i = 0; i < values.length; i++) {
        maxError = Math.max(maxError, Math.abs((q.bytes[i] as number) * q.scale + q.min - (values[i] as number)));
      }
      weights.push({ name: spec.name, shape: spec.shape, dtype: "float32", quantization: { dtype: "uint8", scale: q.scale, min: q.min } });
      parts.push(q.bytes);
      quantised.push({ name: spec.name, from: spec.quantization?.dtype ?? "float32", maxError });
    }
    if (offset !== data.length) throw new Error(`weight group ${g}: ${data.length - offset} bytes after the last tensor`);
  });
  const data = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let at = 0;
  for (const part of parts) {
    data.set(part, at);
    at += part.length;
  }
  return { manifest: [{ paths: [shard], weights }], data, quantised };
}
