/**
 * Installed like the peer: `npm pack` (its prepack builds both front ends),
 * `npm install -g --prefix <tmp> <tarball> --offline` with an empty npm
 * cache (the bundles are self-contained: the package has no runtime
 * dependencies, so nothing is fetched), then acpx drives the installed
 * `cvg-acp` with a stub `claude` first on
 * PATH, which logs its calls and hands over to the pinned CLI: the agent runs
 * the user's `claude`, not one of its own, and needs no dev toolchain.
 */
import { execFileSync, spawn } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { claudeBinary, cliEnv, makeSandbox, type Sandbox } from "../testkit/cli.ts"
import { type ModelServer, startModelServer, text } from "../testkit/model-server.ts"
import { acpxNode, removeAcpxSandbox } from "./acp-clients.ts"
import { repoRoot } from "./harness.ts"

let node24 = ""
let work = ""
let prefix = ""
let stubLog = ""
let stubDir = ""
let sandbox: Sandbox
let server: ModelServer

const npm = (args: string[], cwd = repoRoot) =>
  execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

beforeAll(async () => {
  node24 = acpxNode()
  work = mkdtempSync(join(tmpdir(), "cvg-install-"))
  const tarball = join(work, npm(["pack", "--pack-destination", work]).trim().split("\n").at(-1)!)
  prefix = join(work, "prefix")
  // A fresh cache and --offline: the install must need nothing but the tarball.
  npm(["install", "-g", "--prefix", prefix, tarball, "--offline", "--cache", join(work, "empty-cache")], work)
  // The user's `claude`: a stub first on PATH that logs each call and runs the pinned CLI.
  stubDir = join(work, "user-bin")
  stubLog = join(work, "claude-calls.log")
  mkdirSync(stubDir, { recursive: true })
  writeFileSync(
    join(stubDir, "claude"),
    `#!/bin/sh\necho "$@" >> ${JSON.stringify(stubLog)}\nexec ${JSON.stringify(claudeBinary())} "$@"\n`,
  )
  chmodSync(join(stubDir, "claude"), 0o755)
  sandbox = makeSandbox("cvg-install-")
  server = await startModelServer({ main: [[text("Hello from the installed agent.")]] })
}, 300_000)

afterAll(async () => {
  await server?.close()
  await removeAcpxSandbox(sandbox)
  if (work) rmSync(work, { recursive: true, force: true })
})

describe("the packed package, installed into a fresh prefix", () => {
  it("puts cvg and cvg-acp on PATH; acpx drives cvg-acp, which runs the user's claude", async () => {
    expect(existsSync(join(prefix, "bin", "cvg"))).toBe(true)
    expect(existsSync(join(prefix, "bin", "cvg-acp"))).toBe(true)
    // No dependencies at all in the package (no esbuild or TypeScript: the plugin process is prebuilt).
    const installed = join(prefix, "lib/node_modules/convergence-claude")
    expect(existsSync(join(installed, "node_modules"))).toBe(false)
    expect(
      (JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { dependencies?: object })
        .dependencies ?? {},
    ).toEqual({})
    const env = {
      ...cliEnv(sandbox, server),
      // The stub first, then the package's bin; the sandbox's own claude is left out.
      PATH: `${stubDir}:${join(prefix, "bin")}:/usr/bin:/bin`,
    }
    const child = spawn(
      node24,
      [
        join(repoRoot, "node_modules/acpx/dist/cli.js"),
        "--agent",
        `cvg-acp --data ${join(sandbox.root, "data")}`,
        "--format",
        "json",
        "--ttl",
        "1",
        "--timeout",
        "100",
        "exec",
        "Say hello",
      ],
      { cwd: sandbox.ws, env, stdio: ["ignore", "pipe", "pipe"] },
    )
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += String(d)))
    child.stderr.on("data", (d) => (stderr += String(d)))
    const status = await new Promise<number | null>((resolve) => child.on("close", resolve))
    expect(status, stderr).toBe(0)
    const said = stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map(
        (l) =>
          JSON.parse(l) as { params?: { update?: { sessionUpdate?: string; content?: { text?: string } } } },
      )
      .filter((l) => l.params?.update?.sessionUpdate === "agent_message_chunk")
      .map((l) => l.params?.update?.content?.text ?? "")
      .join("")
    expect(said).toBe("Hello from the installed agent.")
    // The session's CLI was the user's: the stub saw the stream-json launch.
    expect(readFileSync(stubLog, "utf8")).toContain("--output-format stream-json")
  }, 300_000)
})
