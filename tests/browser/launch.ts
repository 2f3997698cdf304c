/**
 * Launching Debian's Chromium (never a downloaded browser) for the browser tests and the screen
 * benchmark (scripts/bench/screen.ts): its flags, the fake camera and microphone, and a CPU cgroup
 * that puts it ahead of the service and the database. Free of vitest, so scripts can use it.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** The launch flags of DESIGN.md section 4; the dead proxy keeps Chromium's own calls on the machine. */
export function chromiumFlags(media?: { video: string; audio: string }): string[] {
  return [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--proxy-server=127.0.0.1:9",
    ...(media
      ? [
          "--use-fake-device-for-media-stream",
          "--use-fake-ui-for-media-stream",
          `--use-file-for-fake-video-capture=${media.video}`,
          `--use-file-for-fake-audio-capture=${media.audio}`,
        ]
      : []),
  ];
}

/** The cgroup v1 `cpu` hierarchy, and the browser's group in it (or in v2's single hierarchy). */
export const CGROUP_V1_CPU = "/sys/fs/cgroup/cpu";
export const BROWSER_GROUP = "hauth-browser";

/** The browser's CPU share against the rest of the machine: eight times a default process's. */
const BROWSER_SHARE = { shares: "8192", weight: "800" };

/**
 * Real-time time the browser's group may use each second under cgroup v1 (`cpu.rt_runtime_us`, of
 * the machine's 950,000): a new group has none, so Chromium's audio threads (the fake microphone,
 * the page's AudioWorklet), which ask for SCHED_RR, silently fell back to nice -10 inside it, and
 * under load the voice slipped against the mouth (docs/benchmarks.md, "Real-time audio in the
 * browser's group"). They use a few percent; the cap only bounds a runaway.
 */
const BROWSER_REALTIME_US = "400000";

/**
 * The processes file of the browser's CPU cgroup, made if missing: under cgroup v1's `cpu`
 * hierarchy (`cpu.shares`), or v2's where the cpu controller is delegated (`cpu.weight`). Null
 * where cgroups cannot be made (not root, or neither is mounted).
 */
function browserCpuGroup(): string | null {
  if (!existsSync("/proc/self/cgroup")) return null;
  const own = readFileSync("/proc/self/cgroup", "utf8").split("\n");
  const layouts = [
    {
      root: CGROUP_V1_CPU,
      line: own.find((l) => l.split(":")[1]?.split(",").includes("cpu")),
      file: "cpu.shares",
      value: BROWSER_SHARE.shares,
      realtime: "cpu.rt_runtime_us",
    },
    // Under v2 the cpu controller budgets no real-time time: there is none to allot.
    { root: "/sys/fs/cgroup", line: own.find((l) => l.startsWith("0::")), file: "cpu.weight", value: BROWSER_SHARE.weight },
  ];
  for (const { root, line, file, value, realtime } of layouts) {
    const dir = join(root, BROWSER_GROUP);
    try {
      if (!line || !existsSync(join(root, "cgroup.procs"))) continue;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, file), value);
      if (realtime) allowRealtime(join(dir, realtime));
      return join(dir, "cgroup.procs");
    } catch {
      // This layout is not mounted, or not ours to change: try the next.
    }
  }
  return null;
}

/** Gives the group its real-time time where the kernel groups it (a kernel without RT group scheduling has no such file). */
function allowRealtime(file: string): void {
  try {
    if (existsSync(file)) writeFileSync(file, BROWSER_REALTIME_US);
  } catch {
    // The machine's real-time time is spoken for elsewhere: the audio threads fall back to nice -10, as before.
  }
}

/**
 * The program to launch: Chromium itself, or where the group exists a two-line shell script that
 * puts itself in the group and then becomes Chromium (exec), so the browser starts inside it.
 */
function executableIn(group: string | null): string {
  if (group === null) return CHROMIUM;
  const script = `#!/bin/sh\necho $$ > '${group}' 2>/dev/null\nexec ${CHROMIUM} "$@"\n`;
  const path = join(tmpdir(), `hauth-chromium-${createHash("sha256").update(script).digest("hex").slice(0, 12)}.sh`);
  if (!existsSync(path)) {
    // Written under another name and renamed, so a launch beside this one never runs half a script.
    writeFileSync(`${path}.${process.pid}`, script, { mode: 0o755 });
    renameSync(`${path}.${process.pid}`, path);
  }
  return path;
}

/**
 * Launches Chromium in a CPU cgroup with a larger share than the test process, the service under
 * test and the database (where the user may make one: root in CI); every process the browser
 * starts later (renderers, the fake camera's capture service) is in it too. Chromium's fake
 * devices read their files on timers that never catch up: when other work on a busy machine delays
 * them, the mouth and the voice drift apart for good, which no real camera and microphone do (the
 * voice fell behind until the group allotted real-time time, D-803). A nice value would not do:
 * Chromium sets its own threads' priorities, and starts renderers and services at the default one. Only the browser enters the group, never
 * the test process: the test files beside it (D-760) run in that process's other threads and
 * children, which must not inherit the browser's share.
 */
export async function launchAhead(media?: { video: string; audio: string }): Promise<Browser> {
  return chromium.launch({ executablePath: executableIn(browserCpuGroup()), args: chromiumFlags(media) });
}
