/** The media generator's file formats (scripts/media/formats.ts): what Chromium's fake devices read. */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { decodePng, decodeWav, encodeWav, y4mFrame, y4mHeader } from "../../../scripts/media/formats";
import { PHOTO } from "../../../scripts/media/generate";

describe("test media formats", () => {
  it("writes 16-bit PCM WAV that reads back to the same samples", () => {
    const samples = Float32Array.from({ length: 480 }, (_, i) => 0.5 * Math.sin(i / 7));
    const back = decodeWav(encodeWav({ sampleRate: 48000, samples }));
    expect(back.sampleRate).toBe(48000);
    expect(back.samples).toHaveLength(480);
    for (let i = 0; i < 480; i++) expect(back.samples[i]).toBeCloseTo(samples[i]!, 4);
  });

  it("writes 4:2:0 y4m frames with BT.601 video-range levels, dithered so a fraction of a level survives on average", () => {
    expect(y4mHeader(640, 480, 15)).toBe("YUV4MPEG2 W640 H480 F15:1 Ip A1:1 C420jpeg\n");
    const grey = (level: number) => y4mFrame({ width: 64, height: 64, rgb: new Float32Array(64 * 64 * 3).fill(level) });
    const frame = grey(128.25);
    expect(frame).toHaveLength(6 + 64 * 64 * 1.5);
    expect(new TextDecoder().decode(frame.subarray(0, 6))).toBe("FRAME\n");
    const luma = frame.subarray(6, 6 + 64 * 64);
    const mean = luma.reduce((sum, y) => sum + y, 0) / luma.length;
    expect(mean).toBeCloseTo(16 + (219 * 128.25) / 255, 1);
    expect(
      grey(255)
        .subarray(6, 6 + 64 * 64)
        .every((y) => y === 235),
    ).toBe(true);
    expect(
      grey(0)
        .subarray(6 + 64 * 64)
        .every((c) => c === 128),
    ).toBe(true);
  });

  it.skipIf(!existsSync(PHOTO))("reads the photograph Debian's python3-skimage ships", () => {
    const photo = decodePng(readFileSync(PHOTO));
    expect([photo.width, photo.height]).toEqual([512, 512]);
    expect(photo.rgb).toHaveLength(512 * 512 * 3);
  });
});
