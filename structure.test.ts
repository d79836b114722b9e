/**
 * The structure the plugin keeps, checked where it can fail:
 * - the import rules of .dependency-cruiser.mjs (no cycles; the plugin
 *   imports only sdk/ and itself) catch what they promise, shown on a scratch
 *   layout (`npm run depcheck` applies them to this repository in `npm test`);
 * - no plugin source file over ~450 lines and no function over ~150 lines,
 *   except what size-allowances.json lists, each with its reason;
 * - the same caps for the source files of host/, testkit/ and sdk/, with no
 *   allowance at all: the host and its bench are read as often as the plugin.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import ts from "typescript"
import { afterAll, describe, expect, it } from "vitest"
import { isTestFile, pluginSourceFiles } from "./scripts/plugin-files.ts"
import allowances from "./scripts/size-allowances.json" with { type: "json" }

const MAX_FILE_LINES = 450
const MAX_FUNCTION_LINES = 150

// --- the import rules -------------------------------------------------------

const fixture = mkdtempSync(join(tmpdir(), "structure-"))
afterAll(() => rmSync(fixture, { recursive: true, force: true }))
const write = (path: string, text: string) => {
  mkdirSync(join(fixture, path, ".."), { recursive: true })
  writeFileSync(join(fixture, path), text)
}

interface Violation {
  readonly from: string
  readonly to: string
  readonly rule: { readonly name: string }
}

/** The rule violations dependency-cruiser reports for the scratch layout, as `rule from → to`. */
const cruiseFixture = (): string[] => {
  const bin = resolve("node_modules/dependency-cruiser/bin/dependency-cruise.mjs")
  let out: string
  try {
    out = execFileSync(
      process.execPath,
      [bin, "--config", resolve(".dependency-cruiser.mjs"), "--output-type", "json", "."],
      { cwd: fixture, encoding: "utf8" },
    )
  } catch (error) {
    // Exit code 1 is "violations found"; the JSON is on stdout either way.
    out = String((error as { stdout?: unknown }).stdout ?? "")
  }
  const violations = (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations
  return violations.map((v) => `${v.rule.name} ${v.from} → ${v.to}`).sort()
}

describe("import rules", () => {
  write("tsconfig.json", readFileSync("tsconfig.json", "utf8"))
  write(
    "main.ts",
    'import { a } from "./future/a.ts"\nimport { api } from "./sdk/api.ts"\nexport const m = [a, api]\n',
  )
  write("future/a.ts", 'import { b } from "./deep/b.ts"\nexport const a = 1\nexport const c = b\n')
  write("future/deep/b.ts", 'import { a } from "../a.ts"\nexport const b = a\n')
  write("future/deep/io.ts", 'import { readFileSync } from "node:fs"\nexport const io = readFileSync\n')
  write("future/deep/host-use.ts", 'import { h } from "../../host/h.ts"\nexport const x = h\n')
  write(
    "future/deep/io.test.ts",
    'import { readFileSync } from "node:fs"\nimport { io } from "./io.ts"\nexport const t = [io, readFileSync]\n',
  )
  write("sdk/api.ts", "export const api = 1\n")
  write("sdk/bad.ts", 'import { m } from "../main.ts"\nexport const s = m\n')
  write(
    "host/h.ts",
    'import { readFileSync } from "node:fs"\nimport { m } from "../main.ts"\nexport const h = [m, readFileSync]\n',
  )

  it("finds cycles, a nested plugin file importing node: or host/, and sdk/ importing the plugin", () => {
    expect(cruiseFixture()).toEqual([
      "no-cycles future/a.ts → future/deep/b.ts",
      "plugin-imports-sdk-and-itself-only future/deep/host-use.ts → host/h.ts",
      "plugin-imports-sdk-and-itself-only future/deep/io.ts → fs",
      "plugin-never-imports-host-testkit-bench future/deep/host-use.ts → host/h.ts",
      "sdk-never-imports-plugin-or-host sdk/bad.ts → main.ts",
    ])
  })
})

// --- sizes ------------------------------------------------------------------

interface Sized {
  readonly name: string
  readonly lines: number
}

const lineOf = (source: ts.SourceFile, pos: number) => source.getLineAndCharacterOfPosition(pos).line

/** The name a function is known by: its own, its variable's or property's; else the enclosing one's. */
const nameOf = (node: ts.Node, outer: string): string => {
  const parent = node.parent
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name)
    return node.name.getText()
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)))
    return parent.name.getText()
  return outer
}

/** Every function of a file with its length in lines, named as above. */
const functionSizes = (path: string, text: string): Sized[] => {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const found: Sized[] = []
  const visit = (node: ts.Node, outer: string) => {
    let name = outer
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      name = nameOf(node, outer)
      found.push({ name, lines: lineOf(source, node.getEnd()) - lineOf(source, node.getStart()) + 1 })
    }
    ts.forEachChild(node, (child) => visit(child, name))
  }
  visit(source, "<top>")
  return found
}

const allowed = new Set(Object.keys(allowances.allowed))

/** The folders held to the plugin's caps with no allowance. */
const HELD = ["host", "testkit", "sdk"]

/** Every `.ts` source file under `dir` (tests left out), `/`-separated and sorted. */
const sourcesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name).split("\\").join("/"))
    .filter((path) => !isTestFile(path))
    .sort()

/** The files and functions of `files` over the caps, save what `allowed` names. */
const overCaps = (files: ReadonlyArray<string>, allowed: ReadonlySet<string>): string[] => {
  const over: string[] = []
  for (const file of files) {
    const text = readFileSync(file, "utf8")
    const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0)
    if (lines > MAX_FILE_LINES && !allowed.has(file)) over.push(`${file}: ${lines} lines`)
    for (const f of functionSizes(file, text))
      if (f.lines > MAX_FUNCTION_LINES && !allowed.has(`${file}:${f.name}`))
        over.push(`${file}:${f.name}: ${f.lines} lines`)
  }
  return [...new Set(over)]
}

describe("sizes", () => {
  it("measures functions by their own or their holder's name (self-check)", () => {
    const text = [
      "export const outer = () =>",
      "  run(function* () {",
      "    const inner = (x: number) => {",
      "      return x",
      "    }",
      "    return inner(1)",
      "  })",
      "function plain() {}",
    ].join("\n")
    expect(functionSizes("x.ts", text)).toEqual([
      { name: "outer", lines: 7 },
      { name: "outer", lines: 6 },
      { name: "inner", lines: 3 },
      { name: "plain", lines: 1 },
    ])
  })

  it(`no plugin source file over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES}`, () => {
    expect(overCaps(pluginSourceFiles(), allowed)).toEqual([])
  })

  it(`no source file of ${HELD.join("/, ")}/ over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES}, no allowance`, () => {
    const held = HELD.flatMap(sourcesUnder)
    expect(held).toContain("host/core/host.ts")
    expect(held).toContain("host/broker/process-broker.ts")
    expect(held.some(isTestFile)).toBe(false)
    expect(overCaps(held, new Set())).toEqual([])
  })

  it("allowances name plugin files only", () => {
    const files = [...allowed].map((a) => a.split(":")[0] ?? a)
    expect(files.filter((f) => HELD.some((dir) => f.startsWith(`${dir}/`)))).toEqual([])
  })

  it("every allowance is still needed, so the list only shrinks", () => {
    const needed = new Set<string>()
    for (const file of pluginSourceFiles()) {
      const text = readFileSync(file, "utf8")
      if (text.split("\n").length - 1 > MAX_FILE_LINES) needed.add(file)
      for (const f of functionSizes(file, text))
        if (f.lines > MAX_FUNCTION_LINES) needed.add(`${file}:${f.name}`)
    }
    expect([...allowed].filter((a) => !needed.has(a))).toEqual([])
  })
})
