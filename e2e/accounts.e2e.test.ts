/**
 * Accounts side by side end to end: the plugin inside host/ with two stored
 * accounts beside the default one, each driving the real CLI (the one under test) against
 * its own scripted model, offline, in one temporary HOME.
 *
 * - `claude` (default): `~/.claude`, the login's model server.
 * - `claude:work`: `configDir` `~/.claude/accounts/work` (inside the plugin's
 *   `~/.claude/**` read grant, so its history is readable) and its own
 *   `ANTHROPIC_BASE_URL` in the account's `env` (a proxy account): a second server.
 * - `claude:elsewhere`: `configDir` `~/.claude-elsewhere`, outside every read
 *   grant. It runs and prompts normally, but its history cannot be listed: the
 *   documented gap (NOTES: accounts outside `~/.claude`), shown here as such.
 *   Its unreadable transcripts are not missing ones: after its CLI dies the
 *   conversation resumes, and one the CLI never stored starts anew.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { storageFile } from "../host/broker/broker.ts"
import { type Host, startHost } from "../host/core/host.ts"
import type { AgentEvent, AgentInfo } from "../sdk/protocol.ts"
import { cliEnv, encodeProjectPath, makeSandbox, type Sandbox } from "../testkit/cli.ts"
import {
  hang,
  type ModelServer,
  type RequestView,
  type Scenario,
  startModelServer,
  text,
} from "../testkit/model-server.ts"
import { repoRoot } from "./harness.ts"

interface Accounts {
  readonly sandbox: Sandbox
  readonly host: Host
  /** The login's model server (default account) and the work account's own. */
  readonly servers: { readonly login: ModelServer; readonly work: ModelServer }
  readonly close: () => Promise<void>
}

const sandboxes: string[] = []
let world: Accounts | undefined

const WORK_DIR = "~/.claude/accounts/work"
const ELSEWHERE_DIR = "~/.claude-elsewhere"

/** A host whose plugin storage already lists the two extra accounts (read once, at activate). */
const startAccounts = async (
  loginScript: Scenario = { main: [[text("default answer")], [text("elsewhere answer")]] },
): Promise<Accounts> => {
  const sandbox = makeSandbox("cvg-e2e-acct-")
  sandboxes.push(sandbox.root)
  const login = await startModelServer(loginScript)
  const work = await startModelServer({ main: [[text("work answer")]] })
  const dataDir = join(sandbox.root, "data")
  const manifest = JSON.parse(readFileSync(join(repoRoot, "plugin.manifest.json"), "utf8")) as { id: string }
  const file = storageFile(dataDir, manifest.id)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(
    file,
    JSON.stringify({
      instances: [
        { id: "work", name: "Work", configDir: WORK_DIR, env: { ANTHROPIC_BASE_URL: work.url } },
        { id: "elsewhere", name: "Elsewhere", configDir: ELSEWHERE_DIR },
      ],
    }),
  )
  let host: Host
  try {
    host = await startHost({
      pluginDir: repoRoot,
      home: sandbox.home,
      dataDir,
      env: cliEnv(sandbox, login),
      workspaces: [sandbox.ws],
      killGraceMs: 1_000,
    })
  } catch (error) {
    await Promise.all([login.close(), work.close()])
    sandbox.cleanup()
    throw error
  }
  return {
    sandbox,
    host,
    servers: { login, work },
    close: async () => {
      try {
        await host.close()
      } finally {
        await Promise.all([login.close(), work.close()])
        sandbox.cleanup()
      }
    },
  }
}

afterEach(async () => {
  const closing = world
  world = undefined
  await closing?.close()
  expect(closing?.host.processes() ?? []).toEqual([])
})
afterAll(() => {
  // No process from these sandboxes outlives the suite (their `claude` link names the sandbox).
  const stray = readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .flatMap((pid) => {
      try {
        return [readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ")]
      } catch {
        return []
      }
    })
    .filter((cmd) => sandboxes.some((root) => cmd.includes(`${root}/bin/claude`)))
  expect(stray).toEqual([])
  for (const root of sandboxes) rmSync(root, { recursive: true, force: true })
})

const runEnded = (host: Host, agentId: string, runId: string) =>
  host.events.waitFor(
    (e) =>
      e.kind === "agent_event" &&
      e.agentId === agentId &&
      e.event.type === "RunEnded" &&
      e.event.run_id === runId,
  ) as Promise<{ event: Extract<AgentEvent, { type: "RunEnded" }> }>

/** Open a chat on an agent, prompt once, wait for the run's end. */
const chat = async (w: Accounts, agentId: string, prompt: string, options?: Record<string, string>) => {
  const { session_id } = await w.host.call(agentId, "createSession", {
    cwd: w.sandbox.ws,
    ...(options ? { options } : {}),
  })
  const run = await w.host.call(agentId, "prompt", { sessionId: session_id, text: prompt })
  const { event } = await runEnded(w.host, agentId, run.run_id)
  expect(event.outcome).toBe("Completed")
  return session_id
}

/** initialize, wait for the catalog probe to report, and initialize again. */
const probed = async (host: Host, agentId: string): Promise<AgentInfo> => {
  const changed = host.events.waitFor((e) => e.kind === "info_changed" && e.agentId === agentId)
  const first = await host.call(agentId, "initialize")
  expect(first.status).toBe("Ready")
  await changed
  return host.call(agentId, "initialize")
}

describe("accounts side by side against the real CLI", () => {
  it("each account keeps its own sessions, catalog and model; options reach the CLI", async () => {
    world = await startAccounts()
    const w = world
    const home = w.sandbox.home
    expect([...w.host.agents.keys()].sort()).toEqual(["claude", "claude:elsewhere", "claude:work"])

    // The catalog probe of each account: the CLI's picker values become aliases of versioned models.
    const [mine, work] = await Promise.all([probed(w.host, "claude"), probed(w.host, "claude:work")])
    for (const info of [mine, work]) {
      expect(info.models.length).toBeGreaterThan(0)
      // 2.1.332's picker has `opus`; 2.1.282's offers `opus[1m]` and resolves `sonnet` to Sonnet 5.
      const opus = info.models.find((m) => m.aliases?.some((a) => a === "opus" || a === "opus[1m]"))
      const sonnet = info.models.find((m) => m.aliases?.includes("sonnet"))
      expect(opus?.value).toMatch(/^claude-opus-\d/)
      expect(sonnet?.value).toMatch(/^claude-sonnet-5(-\d+)?$/)
      expect(info.models.some((m) => m.label === "Default" || m.value === "default")).toBe(false)
    }
    // Each account continues only chats of its own configuration directory.
    expect(mine.continuationKey).toBe(join(home, ".claude"))
    expect(work.continuationKey).toBe(join(home, ".claude/accounts/work"))
    // The probes asked no model anything.
    expect(w.servers.login.requests.filter((r) => r.conversation === "main")).toEqual([])
    expect(w.servers.work.requests.filter((r) => r.conversation === "main")).toEqual([])

    // One chat each. The work chat picks a model by the CLI's alias and an effort.
    const [mineId, workId] = await Promise.all([
      chat(w, "claude", "hello from the default account"),
      chat(w, "claude:work", "hello from work", { model: "sonnet", effort: "high" }),
    ])
    const workProc = w.host.processes().find((p) => p.args.includes(workId))
    // The alias was resolved through the work account's catalog.
    const sonnetValue = work.models.find((m) => m.aliases?.includes("sonnet"))?.value
    expect(workProc?.args[workProc.args.indexOf("--model") + 1]).toBe(sonnetValue)
    // What the work account's model server received: its own requests, with that model and effort.
    const workReqs = w.servers.work.requests.filter((r) => r.conversation === "main")
    expect(workReqs).toHaveLength(1)
    expect(workReqs[0]).toMatchObject({ model: sonnetValue, effort: "high" })
    const mineReqs = w.servers.login.requests.filter((r) => r.conversation === "main")
    expect(mineReqs).toHaveLength(1)
    // The default account's chat ran on the CLI's default model (the catalog's `default` alias).
    const defaultValue = mine.models.find((m) => m.aliases?.includes("default"))?.value
    expect(mineReqs[0]?.model).toBe(defaultValue)
    // No effort chosen there: its process got no --effort (its request has the CLI's default, which is `high` on older releases).
    const mineProc = w.host.processes().find((p) => p.args.includes(mineId))
    expect(mineProc?.args).not.toContain("--effort")

    // The CLI filed each chat under its account's directory.
    const projects = (configDir: string) => join(configDir, "projects")
    const files = (dir: string) =>
      existsSync(dir)
        ? readdirSync(dir, { recursive: true })
            .map(String)
            .filter((f) => f.endsWith(".jsonl"))
        : []
    expect(files(projects(join(home, ".claude"))).some((f) => f.endsWith(`${mineId}.jsonl`))).toBe(true)
    expect(
      files(projects(join(home, ".claude/accounts/work"))).some((f) => f.endsWith(`${workId}.jsonl`)),
    ).toBe(true)

    // Each agent lists only its own sessions, with or without the workspace filter.
    for (const params of [{ cwd: w.sandbox.ws }, {}]) {
      const listedMine = await w.host.call("claude", "listSessions", params)
      const listedWork = await w.host.call("claude:work", "listSessions", params)
      expect(listedMine.sessions.map((s) => s.session_id)).toEqual([mineId])
      expect(listedWork.sessions.map((s) => s.session_id)).toEqual([workId])
    }
    // And reads back only its own.
    const read = await w.host.call("claude:work", "readSession", { sessionId: workId, cwd: w.sandbox.ws })
    expect(read.items.filter((i) => i.type === "user").map((i) => (i.type === "user" ? i.text : ""))).toEqual(
      ["hello from work"],
    )
    await expect(
      w.host.call("claude", "readSession", { sessionId: workId, cwd: w.sandbox.ws }),
    ).rejects.toThrow(workId)

    // The documented gap: an account outside ~/.claude runs, but its history is not readable.
    const elsewhereId = await chat(w, "claude:elsewhere", "hello from elsewhere")
    expect(
      files(projects(join(home, ".claude-elsewhere"))).some((f) => f.endsWith(`${elsewhereId}.jsonl`)),
    ).toBe(true)
    expect((await w.host.call("claude:elsewhere", "listSessions", { cwd: w.sandbox.ws })).sessions).toEqual(
      [],
    )
    // Nor does it leak into the others' lists.
    expect((await w.host.call("claude", "listSessions", {})).sessions.map((s) => s.session_id)).toEqual([
      mineId,
    ])
  })
})

describe("an account outside ~/.claude after its CLI dies", () => {
  const userTexts = (req: RequestView) =>
    req.messages
      .filter((m) => m.role === "user")
      .flatMap((m) =>
        typeof m.content === "string"
          ? [m.content]
          : (m.content as Array<{ type: string; text?: string }>).flatMap((b) =>
              b.type === "text" && b.text !== undefined ? [b.text] : [],
            ),
      )
      .filter((t) => !t.startsWith("<system-reminder>"))
  const events = (host: Host, sessionId: string) =>
    host.events.agentEvents("claude:elsewhere").filter((e) => e.session_id === sessionId) as AgentEvent[]
  const killClaude = (host: Host, sessionId: string) => {
    const proc = host.processes().find((p) => p.command === "claude" && p.args.includes(sessionId))
    expect(proc).toBeDefined()
    process.kill(proc?.pid as number, "SIGKILL")
  }
  const prompt = async (w: Accounts, sessionId: string, text: string) => {
    const run = await w.host.call("claude:elsewhere", "prompt", { sessionId, text })
    return (await runEnded(w.host, "claude:elsewhere", run.run_id)).event
  }

  it("resumes the conversation it cannot read, and one the CLI never stored starts anew, said once", async () => {
    const seen: string[][] = []
    // Every turn answers, but the one for "unstored" never does (its CLI is killed first).
    const answer = (req: RequestView) => {
      const texts = userTexts(req)
      seen.push(texts)
      return texts.at(-1) === "unstored" ? hang() : [text("ok")]
    }
    world = await startAccounts({ main: Array.from({ length: 6 }, () => answer) })
    const w = world
    const project = join(w.sandbox.home, ".claude-elsewhere", "projects", encodeProjectPath(w.sandbox.ws))
    const { session_id } = await w.host.call("claude:elsewhere", "createSession", { cwd: w.sandbox.ws })
    expect((await prompt(w, session_id, "first")).outcome).toBe("Completed")
    // The CLI dies between turns: the next prompt resumes what it stored (the plugin cannot read it).
    killClaude(w.host, session_id)
    await w.host.events.waitFor(
      (e) => e.kind === "agent_event" && e.event.session_id === session_id && e.event.type === "Notice",
    )
    const second = await prompt(w, session_id, "second")
    expect(second.outcome).toBe("Completed")
    expect(seen.at(-1)).toEqual(["first", "second"])
    // Only the exit's own notice: nothing says the conversation was lost.
    const lostNotices = (id: string) =>
      events(w.host, id).filter((e) => e.type === "Notice" && /stored|anew|lost/.test(e.text))
    expect(lostNotices(session_id)).toEqual([])

    // A new chat whose CLI dies before it stores the first prompt (the model never answers).
    const lost = (await w.host.call("claude:elsewhere", "createSession", { cwd: w.sandbox.ws })).session_id
    const run = await w.host.call("claude:elsewhere", "prompt", { sessionId: lost, text: "unstored" })
    killClaude(w.host, lost)
    const stored = existsSync(join(project, `${lost}.jsonl`))
    await runEnded(w.host, "claude:elsewhere", run.run_id)
    expect((await prompt(w, lost, "again")).outcome).toBe("Completed")
    const said = events(w.host, lost).filter((e) => e.type === "Notice" && e.text.includes("anew"))
    if (stored) {
      // The kill came after the CLI wrote the prompt: resumed with it.
      expect(said).toEqual([])
      expect(seen.at(-1)).toEqual(["unstored", "again"])
    } else {
      // The CLI refused --resume (nothing stored): the same id anew, said once.
      expect(said).toHaveLength(1)
      expect(seen.at(-1)).toEqual(["again"])
      expect(existsSync(join(project, `${lost}.jsonl`))).toBe(true)
    }
  })
})
