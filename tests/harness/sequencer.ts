import { readFileSync } from "node:fs";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The tag a test file's opening comment carries when the file runs long for its size. */
const LONG_RUNNING_TAG = "@long-running";

/**
 * The order test files start in. vitest starts the files it has timed before longest first, but a
 * clean clone (CI's checkout) has no timings, and then the largest files go first. A small file
 * that runs long (it starts the service as a newcomer would, and waits on it) then starts last, and
 * the run ends on it alone while the other worker has nothing left to do. A file whose opening
 * comment has a line beginning `@long-running` starts before the rest; the others keep vitest's order (D-806).
 * Tag only a file that mostly waits on processes it starts: the run's first minutes are its busiest
 * (Chromium and workerd starting), and a file that must finish work inside a clock window (the rate
 * limits' minute) missed it there in a clean run.
 */
export default class LongRunningFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const long = sorted.filter((file) => isLongRunning(file.moduleId));
    return [...long, ...sorted.filter((file) => !long.includes(file))];
  }
}

/** A line of the file's opening comment that begins with the tag (a mention elsewhere is not one). */
const TAG_LINE = new RegExp(`^\\s*\\*\\s*${LONG_RUNNING_TAG}\\b`, "m");

export function isLongRunning(path: string): boolean {
  return TAG_LINE.test(readFileSync(path, "utf8").slice(0, 4_000));
}
