import { defineConfig } from "vitest/config"

// Unit and FakePeer tests run in parallel; the end-to-end files (*.e2e.test.ts)
// each start real `claude` processes, so they get long timeouts.
export default defineConfig({
  test: {
    include: [
      "*.test.ts",
      "sdk/**/*.test.ts",
      "host/**/*.test.ts",
      "testkit/**/*.test.ts",
      "bench/**/*.test.ts",
      "e2e/**/*.test.ts",
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // CI also writes a JSON report (scripts/test-all.ts names one per pass),
    // from which .ci/run prints one closing "N passed, N failed" line.
    reporters: process.env.CI
      ? ["default", ["json", { outputFile: process.env.VITEST_JSON_REPORT ?? ".tmp/vitest-report.json" }]]
      : ["default"],
    maxWorkers: 2,
  },
})
