import { defineConfig } from "vitest/config";
import LongRunningFirst from "./tests/harness/sequencer";

export default defineConfig({
  test: {
    // Two test files at a time (vitest's default is one fewer than the cores: one here). Most files
    // wait on the service's workers and Postgres, in other processes, so a second one fills the wait.
    // The browser project's files run two at a time beside them, in a pool of their own (D-760, D-804).
    maxWorkers: 2,
    // Files tagged @long-running start first, so that a clean clone's run does not end on one of
    // them alone (tests/harness/sequencer.ts, D-806).
    sequence: { sequencer: LongRunningFirst },
    projects: [
      {
        test: {
          name: "unit",
          include: ["tests/unit/**/*.test.ts"],
          // Pure but CPU-bound (the engine's simulations, the oracle bound): on a loaded 2-core machine
          // a few take seconds, so the timeout only guards against a hang.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          // Domain operations called directly, operation(deps, tenant, body), against the migrated
          // database (no service, no workers): the rules, with time as the `now` each call passes.
          name: "domain",
          include: ["tests/domain/**/*.test.ts"],
          globalSetup: ["tests/harness/domain-setup.ts"],
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "http",
          include: [
            "tests/functions/**/*.test.ts",
            "tests/concurrency/**/*.test.ts",
            "tests/platform/**/*.test.ts",
            "tests/sql/**/*.test.ts",
          ],
          globalSetup: ["tests/harness/global-setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          // Real Chromium on the fake camera and microphone (tests/browser/chromium.ts), two files at a
          // time (D-804): their length is captures in real time, not CPU. From the start of the run,
          // beside the other projects' files (D-760): its own pool, `threads`, because vitest runs a
          // pool's single-fork files only after that pool's other files. Chromium keeps time on the
          // busy machine by its CPU cgroup, with the real-time time its audio threads ask for
          // (tests/browser/launch.ts, D-803), which the test files beside it are not in.
          name: "browser",
          include: ["tests/browser/**/*.test.ts"],
          globalSetup: ["tests/harness/global-setup.ts", "tests/browser/media-setup.ts"],
          pool: "threads",
          testTimeout: 60_000,
          hookTimeout: 180_000,
          // One more try for a browser test that fails: real Chromium on a fake camera on two cores
          // times out now and then (one clean run in four hung 60 s in "a session token opened
          // twice", D-344). A test that fails twice still fails the run.
          retry: 1,
        },
      },
    ],
  },
});
