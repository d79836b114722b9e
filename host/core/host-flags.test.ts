/**
 * The terminal front end's host process starts with HOST_NODE_FLAGS
 * (package.json's `start`). V8 reads the flag only from Node's command line,
 * so a launch that drops it runs the host with V8's default young generation
 * (host-flags.ts says what that costs an isolated host).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { HOST_NODE_FLAGS } from "./host-flags.ts"

const repoRoot = join(import.meta.dirname, "../..")
const scripts = (
  JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { scripts: Record<string, string> }
).scripts

describe("the terminal front end's host process", () => {
  it("npm start runs node with HOST_NODE_FLAGS", () => {
    const node = (scripts.start ?? "")
      .split("&&")
      .map((c) => c.trim())
      .find((c) => c.endsWith("host/tui/main.ts"))
    expect(node, "a node command that runs host/tui/main.ts").toBeDefined()
    for (const flag of HOST_NODE_FLAGS) expect(node?.split(" ").slice(1), flag).toContain(flag)
  })
})
