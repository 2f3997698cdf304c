/**
 * Chromium keeps, inside the browser's CPU group (tests/browser/launch.ts), the real-time priority
 * its audio threads ask for (D-803). A new cgroup v1 group has no real-time time, so the fake
 * microphone's thread fell back to nice -10, and under load the voice slipped behind the mouth
 * until bona fide captures were refused for mouth-voice sync (docs/benchmarks.md, "Real-time audio
 * in the browser's group"). Only where the machine groups real-time time (root, cgroup v1).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { serviceUnderTest } from "../harness/service";
import { type GuardedBrowser, openBrowser } from "./chromium";
import { BROWSER_GROUP, CGROUP_V1_CPU } from "./launch";

const GROUP = `${CGROUP_V1_CPU}/${BROWSER_GROUP}`;
const SCHED_RR = 2;

/** Every thread of the group named `name`, with its scheduling policy (`/proc/<tid>/stat`, field 41). */
function threadsNamed(name: string): { tid: string; policy: number; nice: number }[] {
  const tids = readFileSync(`${GROUP}/tasks`, "utf8").split("\n").filter(Boolean);
  const found = [];
  for (const tid of tids) {
    try {
      if (readFileSync(`/proc/${tid}/comm`, "utf8").trim() !== name) continue;
      // The fields after the command's closing parenthesis, numbered from field 3.
      const fields = readFileSync(`/proc/${tid}/stat`, "utf8").split(") ")[1]!.split(" ");
      found.push({ tid, policy: Number(fields[41 - 3]), nice: Number(fields[19 - 3]) });
    } catch {
      // The thread ended between the two reads.
    }
  }
  return found;
}

const groupsRealtime = process.getuid?.() === 0 && existsSync(`${CGROUP_V1_CPU}/cpu.rt_runtime_us`);

describe.skipIf(!groupsRealtime)("Chromium in its CPU group", () => {
  const media = inject("media");
  let browser: GuardedBrowser;

  beforeAll(async () => {
    browser = await openBrowser(serviceUnderTest().baseUrl, { media: media.reading });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it("gives the fake microphone's thread the real-time priority it asks for", async () => {
    expect(readdirSync(GROUP)).toContain("cpu.rt_runtime_us");
    await browser.page.goto(serviceUnderTest().baseUrl);
    await browser.page.evaluate(async () => {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      (globalThis as { held?: MediaStream }).held = stream;
    });
    await expect.poll(() => threadsNamed("FakeAudioInput").length, { timeout: 10_000 }).toBeGreaterThan(0);
    // Every browser of the run is in the group; each one's microphone thread must be real-time.
    const threads = threadsNamed("FakeAudioInput");
    expect(
      threads.filter((t) => t.policy !== SCHED_RR),
      JSON.stringify(threads),
    ).toEqual([]);
  });
});
