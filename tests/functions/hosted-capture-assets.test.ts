/**
 * The hosted screen's assets over HTTP (D-406): the pages name the folder of the current version;
 * its files are kept for good (`immutable`), sent as the build compressed them (Brotli or gzip, as
 * the client accepts, else plain), and decompress to the plain file; another version is not found;
 * a plain name is the current file, revalidated. The model weights served are the build's 8-bit ones.
 */
import { get } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { resultOf } from "../harness/http";
import { serviceUnderTest } from "../harness/service";

const SCREEN = "/functions/v1/hosted-capture";

/** A GET as a browser sends it, the body as it came over the wire (node:http decodes nothing). */
function raw(path: string, acceptEncoding?: string): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers = acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding };
    get(new URL(path, serviceUnderTest().baseUrl), { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers as Record<string, string>, body: Buffer.concat(chunks) }),
      );
      response.on("error", reject);
    }).on("error", reject);
  });
}

/** A body as the client reads it. */
function decode(answer: { headers: Record<string, string>; body: Buffer }): Buffer {
  const encoding = answer.headers["content-encoding"];
  return encoding === "br" ? brotliDecompressSync(answer.body) : encoding === "gzip" ? gunzipSync(answer.body) : answer.body;
}

/** The folder of the current version, as the hosted screen's page names it. */
async function currentAssets(page = "session"): Promise<string> {
  const answer = await resultOf(await fetch(new URL(`${SCREEN}/${page}`, serviceUnderTest().baseUrl)), "GET");
  expect(answer.status, answer.text).toBe(200);
  const script = /<script type="module" src="(assets\/[0-9a-f]{16}\/)(session|check)\.js"><\/script>/.exec(answer.text);
  expect(script, "the page loads its script from a versioned folder").not.toBeNull();
  expect(answer.text).toContain(`<link rel="stylesheet" href="${script![1]}screen.css">`);
  return `${SCREEN}/${script![1]}`;
}

describe("hosted-capture assets", () => {
  it("both pages name the same versioned folder; its files are immutable, and sent compressed as the client accepts", async () => {
    const assets = await currentAssets("session");
    expect(await currentAssets("check")).toBe(assets);
    for (const [file, type] of [
      ["session.js", /^text\/javascript/],
      ["face-worker.js", /^text\/javascript/],
      ["screen.css", /^text\/css/],
      ["wasm/tfjs-backend-wasm-simd.wasm", /^application\/wasm$/],
      ["models/face_recognition_model.bin", /^application\/octet-stream$/],
      ["models/tiny_face_detector_model-weights_manifest.json", /^application\/json/],
    ] as const) {
      const plain = await raw(`${assets}${file}`, "identity");
      expect(plain.status, file).toBe(200);
      expect(plain.headers["content-type"], file).toMatch(type);
      expect(plain.headers["cache-control"], file).toBe("public, max-age=31536000, immutable");
      expect(plain.headers.vary, file).toBe("accept-encoding");
      expect(plain.headers["content-encoding"], file).toBeUndefined();
      expect(plain.headers["content-security-policy"], `${file}: the screen's headers on every asset`).toContain("default-src 'none'");

      // Scripts, styles, JSON and .wasm as the edge compresses them; the weights as the service does (Brotli first).
      for (const accepted of ["gzip, deflate, br, zstd", "gzip, deflate", "br"]) {
        const encoded = await raw(`${assets}${file}`, accepted);
        const encoding = encoded.headers["content-encoding"];
        expect(accepted.split(", "), `${file} for ${accepted}`).toContain(encoding);
        expect(encoded.headers["cache-control"], file).toBe("public, max-age=31536000, immutable");
        expect(decode(encoded).equals(plain.body), `${file}: ${encoding} decodes to the file`).toBe(true);
        expect(encoded.body.length, `${file}: compressed is smaller`).toBeLessThan(plain.body.length);
      }
      if (file.endsWith(".bin")) {
        expect((await raw(`${assets}${file}`, "gzip, deflate, br, zstd")).headers["content-encoding"]).toBe("br");
        expect((await raw(`${assets}${file}`, "br;q=0, gzip")).headers["content-encoding"], `${file}: br refused`).toBe("gzip");
      }
    }
  });

  it("the model weights are the build's 8-bit ones: every float tensor quantised to uint8", async () => {
    const assets = await currentAssets();
    for (const model of ["tiny_face_detector_model", "face_landmark_68_model", "face_recognition_model"]) {
      const manifest = JSON.parse((await raw(`${assets}models/${model}-weights_manifest.json`, "identity")).body.toString()) as {
        paths: string[];
        weights: { dtype: string; shape: number[]; quantization?: { dtype: string } }[];
      }[];
      expect(manifest.map((group) => group.paths)).toEqual([[`${model}.bin`]]);
      const weights = manifest[0]!.weights;
      expect(weights.filter((w) => w.dtype === "float32" && w.quantization?.dtype !== "uint8").map((w) => w.shape)).toEqual([]);
      const bin = await raw(`${assets}models/${model}.bin`, "identity");
      expect(bin.body.length, model).toBe(weights.reduce((n, w) => n + w.shape.reduce((a, b) => a * b, 1), 0));
    }
  });

  it("another version is not found; a plain name is the current file, revalidated before each use", async () => {
    const assets = await currentAssets();
    const other = await raw(`${SCREEN}/assets/0123456789abcdef/session.js`, "identity");
    expect(other.status).toBe(404);
    expect(JSON.parse(other.body.toString())).toMatchObject({ code: "ROUTE_NOT_FOUND" });
    const plain = await raw(`${SCREEN}/assets/session.js`, "identity");
    expect(plain.status).toBe(200);
    expect(plain.headers["cache-control"]).toBe("no-cache");
    expect(plain.body.equals((await raw(`${assets}session.js`, "identity")).body)).toBe(true);
    expect((await raw(`${assets}no-such-file.js`, "identity")).status).toBe(404);
    expect((await raw(`${assets}../version.json`, "identity")).status).toBe(404);
  });
});
