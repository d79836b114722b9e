import { defineConfig } from "vitest/config"
import { EXCLUDE, testMatrix } from "./scripts/test-matrix.ts"
import { MatrixSequencer } from "./scripts/test-order.ts"

// Every *.test.ts anywhere in the repository (the plugin's folders too: a test
// in a new folder runs without touching this file), except installed and
// generated trees, in three kinds of project (scripts/test-matrix.ts):
// - e2e: the *.e2e.test.ts files: they start real `claude` processes, so
//   they get long timeouts; their workers keep loaded modules from file to
//   file (each file closes and checks what it started);
// - unit: every other file, sharing their workers' loaded modules (no
//   per-file process and import: about half their CPU);
// - solo: the unit files that replace a module (`vi.mock`), each in a fresh
//   process as before, since a replaced module must not leak to other files.
// `vitest run` runs these on this Node and the pinned CLI; `npm test`
// (scripts/test-all.ts) adds the same on Node 24 and the e2e files on the
// second CLI, all in one run.
export default defineConfig({
  test: {
    exclude: EXCLUDE,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    projects: testMatrix(),
    sequence: { sequencer: MatrixSequencer },
    maxWorkers: 2,
  },
})
