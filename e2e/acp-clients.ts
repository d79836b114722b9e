/**
 * The ACP test clients of an e2e file: each one `connectClient` makes is
 * closed after the test that made it (closeClientsAfterEach), so no
 * connection outlives its test. And acpx, the real client no one here wrote,
 * run as a command line (`runAcpx`) with what it prints parsed.
 */
import { execFileSync, spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { AgentApp } from "@agentclientprotocol/sdk/unstable"
import { afterEach } from "vitest"
import { makeTestClient, type TestClient } from "../host/acp/testing.ts"
import { repoRoot } from "./harness.ts"

const clientsOfThisTest = new Set<TestClient>()

/** A recording client (host/acp/testing.ts) on `app`, closed after this test. */
export const connectClient = (app: AgentApp): TestClient => {
  const client = makeTestClient(app)
  clientsOfThisTest.add(client)
  return client
}

export const closeClientsAfterEach = (): void => {
  afterEach(() => {
    for (const client of clientsOfThisTest) client.close()
    clientsOfThisTest.clear()
  })
}

/** One line of acpx's `--format json` output: an ACP message it sent or received. */
export type AcpxLine = {
  method?: string
  id?: number
  result?: { stopReason?: string; sessions?: Array<{ sessionId: string }> } & Record<string, unknown>
  params?: Record<string, unknown>
  error?: { message?: string }
}

export interface AcpxRun {
  readonly status: number | null
  readonly lines: AcpxLine[]
  readonly stdout: string
  readonly stderr: string
}

export interface AcpxSetup {
  /** Node >= 22 (scripts/current-node.mjs). */
  readonly node: string
  /** The agent's command line, as an editor would start it. */
  readonly agent: string
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  /** Seconds acpx's queue owner stays after its last command. */
  readonly ttl?: number
}

/** A Node >= 22 for acpx: scripts/current-node.mjs (the pinned Node 24, installed into .cache/ when missing). */
export const acpxNode = (): string =>
  execFileSync(process.execPath, [join(repoRoot, "scripts/current-node.mjs")], { encoding: "utf8" }).trim()

/** Build the bundled agent (dist/acp/) when it is missing or older than a source, as `npm run acp` does. */
export const buildBundledAgent = (): void => {
  execFileSync(process.execPath, [join(repoRoot, "scripts/build-acp.mjs"), "--if-stale"], { stdio: "pipe" })
}

/** The bundled agent's command line, as an editor names it, keeping its data in `dataDir`. */
export const bundledAgent = (dataDir: string): string =>
  `${process.execPath} ${join(repoRoot, "dist/acp/main.mjs")} --data ${dataDir}`

/** One acpx command, run asynchronously (the scripted model answers from this very process). */
export const runAcpx = async (setup: AcpxSetup, ...args: string[]): Promise<AcpxRun> => {
  const child = spawn(
    setup.node,
    [
      join(repoRoot, "node_modules/acpx/dist/cli.js"),
      "--agent",
      setup.agent,
      "--format",
      "json",
      "--ttl",
      String(setup.ttl ?? 1),
      "--timeout",
      "100",
      ...args,
    ],
    { cwd: setup.cwd, env: setup.env, stdio: ["ignore", "pipe", "pipe"] },
  )
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (d) => (stdout += String(d)))
  child.stderr.on("data", (d) => (stderr += String(d)))
  const status = await new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
  const lines = stdout
    .split("\n")
    .filter((l) => l.trim().startsWith("{"))
    .map((l) => JSON.parse(l) as AcpxLine)
  return { status, lines, stdout, stderr }
}

/** The agent's chat text in an acpx run. */
export const agentText = (lines: AcpxLine[]): string =>
  lines
    .filter((l) => l.method === "session/update")
    .map((l) => l.params?.update as { sessionUpdate: string; content?: { text?: string } })
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content?.text ?? "")
    .join("")

/** The prompt's stop reason in an acpx run. */
export const stopReasonOf = (lines: AcpxLine[]): string | undefined =>
  lines.find((l) => l.result?.stopReason)?.result?.stopReason

/** Processes whose command line matches, running with this HOME. */
export const runningWithHome = (command: RegExp, home: string): string[] =>
  readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((pid) => {
      try {
        const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")
        return command.test(readFileSync(`/proc/${pid}/cmdline`, "utf8")) && env.includes(`HOME=${home}`)
      } catch {
        return false
      }
    })

/** Wait until `done` holds or `ms` pass. */
export const waitFor = async (done: () => boolean, ms = 20_000): Promise<void> => {
  const deadline = Date.now() + ms
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
}

/**
 * Remove an acpx test's sandbox: acpx's queue owner and the agent may still
 * be exiting (and writing into HOME) after the test, so retry a moment.
 */
export const removeAcpxSandbox = async (sandbox: { cleanup: () => void } | undefined): Promise<void> => {
  for (let attempt = 0; ; attempt++) {
    try {
      sandbox?.cleanup()
      return
    } catch (error) {
      if (attempt >= 25) throw error
      await new Promise((r) => setTimeout(r, 200))
    }
  }
}
