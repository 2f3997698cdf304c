import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["tests/unit/**/*.test.ts"],
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
    ],
  },
});
