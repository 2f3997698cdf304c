/**
 * The build's 8-bit weights (scripts/local/weights.ts), read back by TensorFlow.js itself
 * (`io.decodeWeights`, as face-api loads a manifest): every float tensor comes back within half a
 * step of its value, zeros stay zeros, tensors already in 8 bits and int32 tensors come back
 * unchanged, and the model the hosted screen ships goes through whole.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import "@tensorflow/tfjs-backend-cpu";
import * as tf from "@tensorflow/tfjs-core";
import { describe, expect, it } from "vitest";
import { quantiseUint8, quantiseWeights, type WeightGroup, type WeightSpec } from "../../scripts/local/weights";

/** What TensorFlow.js makes of a manifest and its data: each tensor's values. */
function decoded(manifest: WeightGroup[], data: Uint8Array): Record<string, Float32Array | Int32Array> {
  const buffer = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer;
  const tensors = tf.io.decodeWeights(buffer, manifest.flatMap((group) => group.weights) as tf.io.WeightsManifestEntry[]);
  return Object.fromEntries(Object.entries(tensors).map(([name, tensor]) => [name, tensor.dataSync() as Float32Array | Int32Array]));
}

function bytesOf(array: Float32Array | Int32Array | Uint8Array): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

describe("8-bit weights", () => {
  it("round trip: float32 tensors come back within half a step, zeros exact; 8-bit and int32 tensors unchanged", () => {
    const filters = Float32Array.from({ length: 3 * 3 * 4 * 8 }, (_, i) => Math.sin(i * 1.7) * 0.4 - 0.05);
    filters[5] = 0;
    const bias = Float32Array.from([0.5, 0.25, 0.125, 1.5]);
    const constant = new Float32Array([2.5, 2.5, 2.5]);
    const counts = Int32Array.from([3, -7, 11]);
    const already = Uint8Array.from([0, 17, 255, 128]);
    const specs: WeightSpec[] = [
      { name: "conv/filters", shape: [3, 3, 4, 8], dtype: "float32" },
      { name: "conv/bias", shape: [4], dtype: "float32" },
      { name: "constant", shape: [3], dtype: "float32" },
      { name: "counts", shape: [3], dtype: "int32" },
      { name: "scaled", shape: [4], dtype: "float32", quantization: { dtype: "uint8", scale: 0.01, min: -1 } },
    ];
    // Two groups, the first in two shards: the rewrite reads across both.
    const manifest: WeightGroup[] = [
      { paths: ["a-1.bin", "a-2.bin"], weights: specs.slice(0, 3) },
      { paths: ["b.bin"], weights: specs.slice(3) },
    ];
    const groupData = [concat(bytesOf(filters), bytesOf(bias), bytesOf(constant)), concat(bytesOf(counts), already)];
    const before = decoded(manifest, concat(...groupData));

    const result = quantiseWeights(manifest, groupData, "model.bin");
    expect(result.manifest).toHaveLength(1);
    expect(result.manifest[0]!.paths).toEqual(["model.bin"]);
    expect(result.data.length, "one byte per float, int32 and 8-bit data as they were").toBe(filters.length + 4 + 3 + 12 + 4);
    expect(result.quantised.map((q) => q.name)).toEqual(["conv/filters", "conv/bias", "constant"]);
    const after = decoded(result.manifest, result.data);

    for (const [name, values] of [
      ["conv/filters", filters],
      ["conv/bias", bias],
      ["constant", constant],
    ] as const) {
      const spec = result.manifest[0]!.weights.find((w) => w.name === name)!;
      expect(spec.quantization?.dtype).toBe("uint8");
      const step = spec.quantization!.scale!;
      for (let i = 0; i < values.length; i++)
        expect(Math.abs(after[name]![i]! - values[i]!), `${name}[${i}]`).toBeLessThanOrEqual(step / 2 + 1e-6);
    }
    expect(after["conv/filters"]![5], "zero stays an exact zero").toBe(0);
    expect(Array.from(after.constant!)).toEqual([2.5, 2.5, 2.5]);
    expect(Array.from(after.counts!)).toEqual([3, -7, 11]);
    expect(Array.from(after.scaled!)).toEqual(Array.from(before.scaled!));
    expect(result.manifest[0]!.weights.find((w) => w.name === "scaled")).toEqual(specs[4]);
  });

  it("16-bit and float16 tensors are brought to 8 bits from their dequantised values", () => {
    const halves = Uint16Array.from([0x3c00, 0xbc00, 0x3800, 0x0000]); // 1, -1, 0.5, 0
    const wide = Uint16Array.from([0, 1000, 65535]);
    const manifest: WeightGroup[] = [
      {
        paths: ["x.bin"],
        weights: [
          { name: "h", shape: [4], dtype: "float32", quantization: { dtype: "float16" } },
          { name: "w", shape: [3], dtype: "float32", quantization: { dtype: "uint16", scale: 0.001, min: -2 } },
        ],
      },
    ];
    const data = concat(new Uint8Array(halves.buffer), new Uint8Array(wide.buffer));
    const result = quantiseWeights(manifest, [data], "x.bin");
    const after = decoded(result.manifest, result.data);
    const close = (values: Float32Array | Int32Array, expected: number[], step: number) => {
      for (const [i, v] of expected.entries()) expect(Math.abs(values[i]! - v)).toBeLessThanOrEqual(step / 2 + 1e-6);
    };
    close(after.h!, [1, -1, 0.5, 0], 2 / 255);
    close(after.w!, [-2, -1, 63.535], 65.535 / 255);
  });

  it("refuses shards that end inside a tensor, and bytes after the last one", () => {
    const manifest: WeightGroup[] = [{ paths: ["x.bin"], weights: [{ name: "v", shape: [4], dtype: "float32" }] }];
    expect(() => quantiseWeights(manifest, [new Uint8Array(12)], "x.bin")).toThrow(/end before/);
    expect(() => quantiseWeights(manifest, [new Uint8Array(20)], "x.bin")).toThrow(/4 bytes after/);
  });

  it("an empty or constant tensor has a valid step", () => {
    expect(quantiseUint8(new Float32Array([])).scale).toBe(1);
    expect(quantiseUint8(new Float32Array([-3, -3])).scale).toBe(1);
  });

  it("the hosted screen's recognition model goes through whole: its 8-bit tensors unchanged, the rest within half a step", () => {
    const models = join(process.cwd(), "node_modules", "@vladmandic", "face-api", "model");
    const manifest = JSON.parse(readFileSync(join(models, "face_recognition_model-weights_manifest.json"), "utf8")) as WeightGroup[];
    const groupData = manifest.map((group) => concat(...group.paths.map((path) => new Uint8Array(readFileSync(join(models, path))))));
    const result = quantiseWeights(manifest, groupData, "face_recognition_model.bin");
    expect(result.data.length).toBeLessThan(groupData.reduce((n, d) => n + d.length, 0));
    const before = decoded(manifest, concat(...groupData));
    const after = decoded(result.manifest, result.data);
    const original = new Map(manifest.flatMap((g) => g.weights).map((w) => [w.name, w]));
    for (const spec of result.manifest[0]!.weights) {
      const a = after[spec.name]!;
      const b = before[spec.name]!;
      let worst = 0;
      for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
      if (original.get(spec.name)!.quantization) expect(worst, spec.name).toBe(0);
      else expect(worst, spec.name).toBeLessThanOrEqual(spec.quantization!.scale! / 2 + 1e-6);
    }
  });
});
