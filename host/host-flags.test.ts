/**
 * The front ends' host processes start with HOST_NODE_FLAGS wherever this
 * repository says how to start one: package.json's `start` and `acp`, and
 * every `dist/acp/main.mjs` command line README.md gives an editor. V8 reads
 * the flag only from Node's command line, so a launch that drops it runs
 * the host with V8's default young generation (host-flags.ts says what that
 * costs an isolated host).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { HOST_NODE_FLAGS } from "./host-flags.ts"

const repoRoot = join(import.meta.dirname, "..")
const scripts = (
  JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { scripts: Record<string, string> }
).scripts

describe("the host's Node flags where a front end starts", () => {
  it("npm start and npm run acp run node with them", () => {
    for (const [name, entry] of [
      ["start", "host/cli.ts"],
      ["acp", "host/acp/main.ts"],
    ] as const) {
      const node = (scripts[name] ?? "")
        .split("&&")
        .map((c) => c.trim())
        .find((c) => c.endsWith(entry))
      expect(node, `${name}: a node command that runs ${entry}`).toBeDefined()
      for (const flag of HOST_NODE_FLAGS)
        expect(node?.split(" ").slice(1), `${name}: ${flag}`).toContain(flag)
    }
  })

  it("every command line and args list README gives for the editor bundle puts them before the bundle", () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
    const commands = [...readme.matchAll(/node ([^`"\n]*?)dist\/acp\/main\.mjs/g)].map((m) => m[1] ?? "")
    const argsLists = [...readme.matchAll(/"args": \[([^\]]*)\]/g)]
      .map((m) => m[1] ?? "")
      .filter((a) => a.includes("dist/acp/main.mjs"))
    expect(commands.length + argsLists.length).toBeGreaterThanOrEqual(4)
    for (const before of commands)
      for (const flag of HOST_NODE_FLAGS) expect(before.split(" ")).toContain(flag)
    for (const args of argsLists)
      for (const flag of HOST_NODE_FLAGS) {
        const at = args.indexOf(`"${flag}"`)
        expect(at, args).toBeGreaterThanOrEqual(0)
        expect(at, args).toBeLessThan(args.indexOf("dist/acp/main.mjs"))
      }
  })
})
