/**
 * The vitest filter of a run against a CLI other than the pinned one (the
 * suite's second release, and the compat canary): every end-to-end file but
 * the terminal front end's, whose `npm start` always runs the pinned CLI
 * (node_modules/.bin first on PATH), so it would only repeat the first pass.
 */
export const COMPAT_FILTER: ReadonlyArray<string> = [".e2e.test.ts", "--exclude", "e2e/tui.e2e.test.ts"]
