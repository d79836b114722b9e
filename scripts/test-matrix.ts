/**
 * The vitest projects of a run (vitest.config.ts): which files, on which
 * Node and CLI, in which kind of worker.
 *
 * Kinds: `e2e` (*.e2e.test.ts: they start real `claude` processes and
 * count what is left of them; a worker keeps its loaded modules from file
 * to file, each file's worlds closed and checked by its own hooks), `solo` (unit files
 * that replace a module with `vi.mock`, found by reading them: a fresh
 * process per file, so the replacement reaches no other file) and `unit`
 * (every other file; a worker keeps its loaded modules from file to file,
 * which saves the per-file process and import that were half their CPU).
 * The plugin process's own tests run solo too (SOLO_FOLDERS).
 *
 * Legs: always this Node and the pinned CLI. `npm test` (test-all.ts) adds,
 * by environment, a second CLI for the e2e files but the terminal's (whose
 * `npm start` always runs the pinned CLI) and a second Node for every file:
 * its workers run on that binary (node-pool.ts) with it first on PATH, while
 * vitest itself stays on this one. One run, one pool: a leg's files fill the
 * cores while another's wait.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { configDefaults, type TestProjectInlineConfiguration } from "vitest/config"
import { nodePool } from "./node-pool.ts"

/** Set by test-all.ts: the second CLI's version (a `claude-code-<version>` devDependency). */
export const SECOND_CLI_VARIABLE = "CVG_TEST_SECOND_CLI"
/** Set by test-all.ts: the second Node's binary (scripts/current-node.mjs). */
export const SECOND_NODE_VARIABLE = "CVG_TEST_SECOND_NODE"

const root = join(import.meta.dirname, "..")
/** Installed and generated trees: never tests. */
export const EXCLUDE = [...configDefaults.exclude, "testdata/**", ".cache/**", ".tmp/**", "bench/corpus/**"]
const E2E = "**/*.e2e.test.ts"
/** The e2e file a second CLI does not run (compat-filter.ts says why). */
const PINNED_CLI_ONLY = "e2e/tui.e2e.test.ts"
/** Folders no test lives in (vitest.config.ts excludes them too). */
const NOT_SOURCE = new Set(["node_modules", ".git", ".cache", ".tmp", "testdata", "dist", "corpus"])
/** A file that replaces a module for its own tests. */
const REPLACES_MODULE = /\bvi\.(?:mock|doMock)\(/
/**
 * Folders whose tests start plugin processes and hold them to bounds (a
 * heap that must not grow, an answer within a second) set for a worker of
 * their own; a shared one is larger and slower to fork from.
 */
const SOLO_FOLDERS = ["host/plugin-process/"]

/** Every unit test file (repository-relative) that runs in a process of its own. */
export const soloFiles = (dir = root): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return NOT_SOURCE.has(entry.name) ? [] : soloFiles(path)
    if (!entry.name.endsWith(".test.ts") || entry.name.endsWith(".e2e.test.ts")) return []
    const file = relative(root, path)
    const solo =
      SOLO_FOLDERS.some((folder) => file.startsWith(folder)) ||
      REPLACES_MODULE.test(readFileSync(path, "utf8"))
    return solo ? [file] : []
  })

interface Leg {
  /** Appended to each project's name ("" for the first leg). */
  readonly suffix: string
  readonly env: Record<string, string>
  readonly pool?: ReturnType<typeof nodePool>
  readonly e2eOnly?: boolean
}

const projectsOf = (leg: Leg, solo: ReadonlyArray<string>): TestProjectInlineConfiguration[] => {
  const common = { env: leg.env, ...(leg.pool ? { pool: leg.pool } : {}) }
  const e2e: TestProjectInlineConfiguration = {
    extends: true,
    test: {
      ...common,
      name: `e2e${leg.suffix}`,
      include: [E2E],
      exclude: leg.e2eOnly ? [...EXCLUDE, PINNED_CLI_ONLY] : EXCLUDE,
      isolate: false,
    },
  }
  if (leg.e2eOnly) return [e2e]
  return [
    e2e,
    {
      extends: true,
      test: { ...common, name: `solo${leg.suffix}`, include: [...solo], exclude: EXCLUDE, isolate: true },
    },
    {
      extends: true,
      test: {
        ...common,
        name: `unit${leg.suffix}`,
        include: ["**/*.test.ts"],
        exclude: [...EXCLUDE, E2E, ...solo],
        isolate: false,
      },
    },
  ]
}

/** The projects of this run: the first leg, and those test-all.ts asked for. */
export const testMatrix = (env: NodeJS.ProcessEnv = process.env): TestProjectInlineConfiguration[] => {
  const solo = soloFiles()
  const legs: Leg[] = [{ suffix: "", env: {} }]
  const cli = env[SECOND_CLI_VARIABLE]
  if (cli) legs.push({ suffix: `/cli-${cli}`, env: { CVG_TEST_CLI: cli }, e2eOnly: true })
  const node = env[SECOND_NODE_VARIABLE]
  if (node) {
    const pool = nodePool(node)
    legs.push({ suffix: `/node-${pool.version}`, env: { PATH: pool.path }, pool })
  }
  return legs.flatMap((leg) => projectsOf(leg, solo))
}
