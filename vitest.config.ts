import { configDefaults, defineConfig } from "vitest/config"

// Every *.test.ts anywhere in the repository (the plugin's folders too: a test
// in a new folder runs without touching this file), except installed and
// generated trees. Unit and FakePeer tests run in parallel; the end-to-end
// files (*.e2e.test.ts) each start real `claude` processes, so they get long
// timeouts.
export default defineConfig({
  test: {
    include: ["**/*.test.ts"],
    exclude: [...configDefaults.exclude, "testdata/**", ".cache/**", ".tmp/**", "bench/corpus/**"],
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
