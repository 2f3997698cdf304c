/**
 * The few file formats the media generator reads and writes, in plain Node: PNG in (8-bit RGB or
 * RGBA, not interlaced: enough for the photographs Debian ships), 16-bit PCM WAV in and out, and
 * YUV4MPEG2 (4:2:0) out, the format Chromium's fake camera plays.
 */
import { inflateSync } from "node:zlib";

/** An RGB image, 3 bytes a pixel, row by row. */
export interface RgbImage {
  width: number;
  height: number;
  rgb: Uint8Array;
}

/** Decodes a non-interlaced 8-bit RGB or RGBA PNG (the alpha channel is dropped). */
export function decodePng(file: Uint8Array): RgbImage {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const signature = [137, 80, 78, 71, 13, 10, 26, 10];
  if (!signature.every((byte, i) => file[i] === byte)) throw new Error("not a PNG file");
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Uint8Array[] = [];
  for (let offset = 8; offset < file.length; ) {
    const length = view.getUint32(offset);
    const type = String.fromCharCode(...file.subarray(offset + 4, offset + 8));
    const body = file.subarray(offset + 8, offset + 8 + length);
    if (type === "IHDR") {
      width = view.getUint32(offset + 8);
      height = view.getUint32(offset + 12);
      const [depth, colour, , , interlace] = body.subarray(8, 13);
      channels = colour === 2 ? 3 : colour === 6 ? 4 : 0;
      if (depth !== 8 || channels === 0 || interlace !== 0) throw new Error("only 8-bit RGB or RGBA PNGs without interlacing are read");
    } else if (type === "IDAT") data.push(body);
    else if (type === "IEND") break;
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const pixels = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const left = x >= channels ? (pixels[y * stride + x - channels] as number) : 0;
      const up = y > 0 ? (pixels[(y - 1) * stride + x] as number) : 0;
      const upLeft = y > 0 && x >= channels ? (pixels[(y - 1) * stride + x - channels] as number) : 0;
      let predictor = 0;
      if (filter === 1) predictor = left;
      else if (filter === 2) predictor = up;
      else if (filter === 3) predictor = (left + up) >> 1;
      else if (filter === 4) {
        const p = left + up - upLeft;
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
        predictor = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
      }
      pixels[y * stride + x] = ((line[x] as number) + predictor) & 0xff;
    }
  }
  const rgb = new Uint8Array(width * height * 3);
  for (let p = 0; p < width * height; p++) rgb.set(pixels.subarray(p * channels, p * channels + 3), p * 3);
  return { width, height, rgb };
}

/** Mono audio, samples in [-1, 1]. */
export interface Audio {
  sampleRate: number;
  samples: Float32Array;
}

/** Reads a 16-bit PCM WAV file; several channels are mixed down to one. */
export function decodeWav(file: Uint8Array): Audio {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  let sampleRate = 0;
  let channels = 0;
  for (let offset = 12; offset + 8 <= file.length; ) {
    const id = String.fromCharCode(...file.subarray(offset, offset + 4));
    let size = view.getUint32(offset + 4, true);
    if (id === "fmt ") {
      channels = view.getUint16(offset + 10, true);
      sampleRate = view.getUint32(offset + 12, true);
      if (view.getUint16(offset + 8, true) !== 1 || view.getUint16(offset + 22, true) !== 16)
        throw new Error("only 16-bit PCM WAV is read");
    } else if (id === "data") {
      // A stream written to a pipe leaves the size unset: the data runs to the end of the file.
      if (size === 0xffffffff || offset + 8 + size > file.length) size = file.length - offset - 8;
      const frames = Math.floor(size / 2 / channels);
      const samples = new Float32Array(frames);
      for (let i = 0; i < frames; i++) {
        let sum = 0;
        for (let c = 0; c < channels; c++) sum += view.getInt16(offset + 8 + 2 * (i * channels + c), true);
        samples[i] = sum / channels / 32768;
      }
      return { sampleRate, samples };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error("WAV file without data");
}

/** Writes mono 16-bit PCM WAV. */
export function encodeWav(audio: Audio): Uint8Array {
  const bytes = new Uint8Array(44 + 2 * audio.samples.length);
  const view = new DataView(bytes.buffer);
  const text = (offset: number, value: string) => bytes.set(Buffer.from(value, "ascii"), offset);
  text(0, "RIFF");
  view.setUint32(4, bytes.length - 8, true);
  text(8, "WAVE");
  text(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, audio.sampleRate, true);
  view.setUint32(28, audio.sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  text(36, "data");
  view.setUint32(40, 2 * audio.samples.length, true);
  for (let i = 0; i < audio.samples.length; i++) {
    view.setInt16(44 + 2 * i, Math.round(Math.max(-1, Math.min(1, audio.samples[i] as number)) * 32767), true);
  }
  return bytes;
}

/** The YUV4MPEG2 stream header of 4:2:0 frames. */
export function y4mHeader(width: number, height: number, fps: number): string {
  return `YUV4MPEG2 W${width} H${height} F${fps}:1 Ip A1:1 C420jpeg\n`;
}

const ditherPatterns = new Map<number, Float32Array>();

/** A fixed pseudo-random offset in [0, 1) per pixel, the same in every frame. */
function ditherPattern(size: number): Float32Array {
  const cached = ditherPatterns.get(size);
  if (cached) return cached;
  const pattern = new Float32Array(size);
  let state = 2463534242;
  for (let i = 0; i < size; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    pattern[i] = (state >>> 0) / 2 ** 32;
  }
  ditherPatterns.set(size, pattern);
  return pattern;
}

/**
 * One YUV4MPEG2 frame ("FRAME", then the Y, U and V planes) of an RGB image with channel values in
 * 0..255 (fractions allowed), BT.601 with video (limited) range, the chroma of each 2x2 block
 * averaged. Values are rounded with a fixed dither, so a change smaller than one level still moves
 * the mean of a region by the right amount.
 */
export function y4mFrame(image: { width: number; height: number; rgb: ArrayLike<number> }): Uint8Array {
  const { width, height, rgb } = image;
  const marker = Buffer.from("FRAME\n", "ascii");
  const lumaSize = width * height;
  const chromaWidth = width >> 1;
  const chromaSize = chromaWidth * (height >> 1);
  const frame = new Uint8Array(marker.length + lumaSize + 2 * chromaSize);
  frame.set(marker, 0);
  const y = frame.subarray(marker.length, marker.length + lumaSize);
  const u = frame.subarray(marker.length + lumaSize, marker.length + lumaSize + chromaSize);
  const v = frame.subarray(marker.length + lumaSize + chromaSize);
  const cb = new Float32Array(chromaSize);
  const cr = new Float32Array(chromaSize);
  const dither = ditherPattern(lumaSize);
  for (let p = 0; p < lumaSize; p++) {
    const [r, g, b] = [rgb[3 * p] as number, rgb[3 * p + 1] as number, rgb[3 * p + 2] as number];
    y[p] = Math.floor(16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255 + (dither[p] as number));
    const c = ((p / width) >> 1) * chromaWidth + ((p % width) >> 1);
    cb[c] = (cb[c] as number) + (-37.797 * r - 74.203 * g + 112 * b) / 255 / 4;
    cr[c] = (cr[c] as number) + (112 * r - 93.786 * g - 18.214 * b) / 255 / 4;
  }
  for (let c = 0; c < chromaSize; c++) {
    u[c] = Math.floor(128 + (cb[c] as number) + (dither[c] as number));
    v[c] = Math.floor(128 + (cr[c] as number) + (dither[lumaSize - 1 - c] as number));
  }
  return frame;
}
