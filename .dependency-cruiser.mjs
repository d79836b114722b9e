/**
 * The import rules that hold the repository's structure, checked by
 * `npm run depcheck` (part of `npm test`):
 * - no import cycle anywhere (type-only imports count: a cycle of types is
 *   still two files that cannot be understood apart);
 * - the plugin (root files and every plugin folder, scripts/plugin-layout.json)
 *   imports only sdk/, itself and its npm dependencies: no Node module, and
 *   never host/, testkit/ or bench/;
 * - sdk/ (the contract) never imports the plugin or a host.
 * Tests may import what they need (the Node file system, bench/ fixtures).
 */
import layout from "./scripts/plugin-layout.json" with { type: "json" }

const others = layout.notPlugin.join("|")
/** A plugin file: at the root, or in a folder that is no other part and not hidden (a Node module is neither). */
const PLUGIN = `^(?!(?:${others})/)(?!\\.)[^:]*\\.(?:ts|json)$`
const SOURCE_NOT = ["\\.test\\.ts$", "^vitest\\.config\\.ts$"]
const PLUGIN_PACKAGES = `^node_modules/(?:${layout.pluginDependencies.join("|")})/`

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-cycles",
      comment: "Two files that import each other (through any path) cannot be read or changed apart.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "plugin-imports-sdk-and-itself-only",
      comment:
        "The plugin runs sandboxed: it reaches the world through the broker (sdk/plugin-api.ts), so it imports only sdk/, its own files and effect, zod, diff, shell-quote, yaml.",
      severity: "error",
      from: { path: PLUGIN, pathNot: SOURCE_NOT },
      to: { pathNot: [PLUGIN, "^sdk/(?!testing/)", PLUGIN_PACKAGES] },
    },
    {
      name: "plugin-never-imports-host-testkit-bench",
      comment: "host/, testkit/ and bench/ run on Node; the plugin never sees them (its tests may).",
      severity: "error",
      from: { path: PLUGIN, pathNot: SOURCE_NOT },
      to: { path: "^(?:host|testkit|bench)/" },
    },
    {
      name: "sdk-never-imports-plugin-or-host",
      comment: "sdk/ is the contract both sides import; it depends on neither.",
      severity: "error",
      from: { path: "^sdk/", pathNot: SOURCE_NOT },
      to: { path: [PLUGIN, "^(?:host|testkit|bench)/"], pathNot: "^node_modules/" },
    },
    {
      name: "no-unresolvable",
      comment: "An import that resolves to nothing is a typo or a missing dependency.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "^node_modules/" },
    exclude: { path: "^(?:node_modules|testdata|\\.cache|\\.tmp|bench/corpus)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
  },
}
