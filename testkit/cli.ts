// The harness that runs the REAL Claude Code CLI offline against the scripted
// model server (model-server.ts). Plain Node, async/await.

import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { type CliSupport, parseCliVersion, supportOf } from "../cli-version.ts"
import { PROTOCOL_ARGS } from "../session/launch.ts"

export type Frame = Record<string, unknown> & { type?: string; subtype?: string }

const here = dirname(fileURLToPath(import.meta.url))
const repoRoot = resolve(here, "..")

/**
 * Which Claude Code CLI the tests drive: `CVG_TEST_CLI` names a version (one
 * installed as the `claude-code-<version>` npm alias devDependency, or the
 * pinned package's own) or a path to a `claude` binary (`npm run compat`
 * installs one elsewhere). Unset: the pinned `@anthropic-ai/claude-code`.
 */
export const TEST_CLI_VARIABLE = "CVG_TEST_CLI"

/** The pinned package's version (package.json of @anthropic-ai/claude-code). */
export function pinnedCliVersion(): string {
  const req = createRequire(import.meta.url)
  return (req("@anthropic-ai/claude-code/package.json") as { version: string }).version
}

/** The version the tests drive: CVG_TEST_CLI's, else the pinned one (read from the binary for a path). */
export function testCliVersion(): string {
  const chosen = process.env[TEST_CLI_VARIABLE]?.trim()
  if (!chosen) return pinnedCliVersion()
  if (!chosen.includes("/")) return chosen
  const printed = execFileSync(chosen, ["--version"], { encoding: "utf8", timeout: 20_000 })
  const match = /\d+\.\d+\.\d+/.exec(printed)
  if (!match) throw new Error(`${chosen} --version printed no version: ${printed.trim()}`)
  return match[0]
}

let support: CliSupport | undefined
/** What the plugin's capability table says the CLI under test has. */
export function testCliSupport(): CliSupport {
  support ??= supportOf(parseCliVersion(testCliVersion()))
  return support
}

/** Path of the native `claude` binary of the CLI under test. */
export function claudeBinary(): string {
  const chosen = process.env[TEST_CLI_VARIABLE]?.trim()
  if (chosen?.includes("/")) {
    if (!existsSync(chosen)) throw new Error(`${TEST_CLI_VARIABLE}=${chosen}: no such file`)
    return chosen
  }
  if (chosen && chosen !== pinnedCliVersion()) {
    // An alias package carries its own native binary in bin/ (its postinstall copies it there).
    const alias = join(repoRoot, `node_modules/claude-code-${chosen}/bin/claude.exe`)
    if (!existsSync(alias))
      throw new Error(
        `${TEST_CLI_VARIABLE}=${chosen}: ${alias} is missing; add the devDependency ` +
          `"claude-code-${chosen}": "npm:@anthropic-ai/claude-code@${chosen}" or give a path`,
      )
    return alias
  }
  const candidates = [
    join(repoRoot, "node_modules/@anthropic-ai/claude-code/bin/claude.exe"),
    join(repoRoot, `node_modules/@anthropic-ai/claude-code-${process.platform}-${process.arch}/claude`),
    join(repoRoot, `node_modules/@anthropic-ai/claude-code-${process.platform}-${process.arch}/claude.exe`),
  ]
  try {
    const req = createRequire(import.meta.url)
    const pkg = req.resolve(`@anthropic-ai/claude-code-${process.platform}-${process.arch}/package.json`)
    candidates.push(join(dirname(pkg), "claude"), join(dirname(pkg), "claude.exe"))
  } catch {}
  for (const c of candidates) if (existsSync(c)) return c
  throw new Error(`claude binary not found; looked at:\n${candidates.join("\n")}`)
}

// ---------------------------------------------------------------------------
// Sandbox

export interface Sandbox {
  /** Real path of the sandbox root (temp dir). */
  readonly root: string
  /** HOME of the CLI. Transcripts land in home/.claude/projects. */
  readonly home: string
  /** Workspace: the CLI's cwd. */
  readonly ws: string
  /** Temp dir; CLAUDE_CODE_TMPDIR points here. */
  readonly tmp: string
  /** Holds a `claude` symlink to the binary. */
  readonly bin: string
  /** home/.claude/projects */
  readonly projects: string
  /** Remove the whole sandbox. */
  cleanup(): void
}

export function makeSandbox(prefix = "cvg-tk-"): Sandbox {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  const home = join(root, "home")
  const ws = join(root, "ws")
  const tmp = join(root, "tmp")
  const bin = join(root, "bin")
  for (const d of [home, ws, tmp, bin]) mkdirSync(d, { recursive: true })
  symlinkSync(claudeBinary(), join(bin, "claude"))
  return {
    root,
    home,
    ws,
    tmp,
    bin,
    projects: join(home, ".claude", "projects"),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  }
}

/** The CLI's project folder name for a cwd: every char not [A-Za-z0-9-] becomes "-". */
export function encodeProjectPath(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9-]/g, "-")
}

export interface ServerLike {
  readonly url: string
}

/** The clean environment the CLI runs with: offline, no login, temp HOME. */
export function cliEnv(
  sandbox: Sandbox,
  server: ServerLike,
  extra: Record<string, string | undefined> = {},
): Record<string, string> {
  const env: Record<string, string | undefined> = {
    PATH: `${sandbox.bin}:/usr/bin:/bin`,
    HOME: sandbox.home,
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: "sk-ant-mock-testkit",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_TMPDIR: sandbox.tmp,
    IS_SANDBOX: "1",
    ...extra,
  }
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v
  return out
}

export interface StandardArgsOptions {
  readonly sessionId?: string
  readonly resume?: string
  readonly resumeSessionAt?: string
  readonly forkSession?: boolean
  readonly permissionMode?: string
  readonly model?: string
  readonly effort?: string
  readonly extra?: readonly string[]
}

/** The stream-json flags every headless session uses, plus session selection. */
export function standardArgs(o: StandardArgsOptions = {}): string[] {
  // The same protocol head the plugin launches with (session/launch.ts), and the flag only where the CLI has it.
  const a = [
    ...PROTOCOL_ARGS,
    ...(testCliSupport().has("forwardSubagentText") ? ["--forward-subagent-text"] : []),
  ]
  if (o.resume) a.push("--resume", o.resume)
  if (o.resumeSessionAt) a.push("--resume-session-at", o.resumeSessionAt)
  if (o.forkSession) a.push("--fork-session")
  if (o.sessionId) a.push("--session-id", o.sessionId)
  if (o.permissionMode) a.push("--permission-mode", o.permissionMode)
  if (o.model) a.push("--model", o.model)
  if (o.effort) a.push("--effort", o.effort)
  if (o.extra) a.push(...o.extra)
  return a
}

// ---------------------------------------------------------------------------
// Frames and control protocol helpers

export function userMessage(
  text: string,
  opts: { uuid?: string; parentToolUseId?: string | null; sessionId?: string } = {},
): Frame {
  return {
    type: "user",
    message: { role: "user", content: [{ type: "text", text }] },
    parent_tool_use_id: opts.parentToolUseId ?? null,
    uuid: opts.uuid ?? randomUUID(),
    session_id: opts.sessionId ?? "",
  }
}

export function controlRequest(requestId: string, request: Record<string, unknown>): Frame {
  return { type: "control_request", request_id: requestId, request }
}

export function controlSuccess(requestId: string, response?: unknown): Frame {
  return {
    type: "control_response",
    response:
      response === undefined
        ? { subtype: "success", request_id: requestId }
        : { subtype: "success", request_id: requestId, response },
  }
}

export function controlError(requestId: string, error: string): Frame {
  return { type: "control_response", response: { subtype: "error", request_id: requestId, error } }
}

export const isType =
  (type: string, subtype?: string) =>
  (f: Frame): boolean =>
    f.type === type && (subtype === undefined || f.subtype === subtype)

export const isResult = isType("result")

export const isControlRequest =
  (subtype?: string) =>
  (f: Frame): boolean =>
    f.type === "control_request" &&
    (subtype === undefined || (f.request as Record<string, unknown> | undefined)?.subtype === subtype)

export const isControlResponseFor =
  (requestId: string) =>
  (f: Frame): boolean =>
    f.type === "control_response" &&
    (f.response as Record<string, unknown> | undefined)?.request_id === requestId

/** The text of every tool_result in a `user` frame. */
export function toolResultTexts(f: Frame): string[] {
  if (f.type !== "user") return []
  const content = (f.message as { content?: unknown } | undefined)?.content
  if (!Array.isArray(content)) return []
  const out: string[] = []
  for (const c of content as Array<Record<string, unknown>>) {
    if (c?.type !== "tool_result") continue
    const v = c.content
    if (typeof v === "string") out.push(v)
    else if (Array.isArray(v))
      out.push(
        (v as Array<Record<string, unknown>>)
          .filter((x) => x.type === "text")
          .map((x) => String(x.text))
          .join("\n"),
      )
  }
  return out
}

// ---------------------------------------------------------------------------
// Process handle

/** Answers a control request from the CLI; return undefined to leave it unanswered. */
export type ControlHandler = (
  request: Record<string, unknown>,
  frame: Frame,
) => unknown | undefined | Promise<unknown | undefined>

export interface ClaudeProcess {
  readonly pid: number
  readonly label: string
  /** The CLI arguments. */
  readonly args: readonly string[]
  readonly child: ChildProcess
  /** Every stdout frame so far, in order (non-JSON lines as {type:"_raw",text}). */
  readonly frames: Frame[]
  /** Every line written to stdin (as objects). */
  readonly sent: Frame[]
  /** ms since spawn at which each frame arrived (parallel to `frames`). */
  readonly times: number[]
  readonly startedAt: number
  /** stderr so far. */
  stderr(): string
  /** Write one JSON line to stdin. */
  send(frame: Frame): void
  sendUser(text: string, opts?: { uuid?: string }): Frame
  /** Next frame (after the read cursor) matching pred; moves the cursor past it. */
  next(pred?: (f: Frame) => boolean, timeoutMs?: number): Promise<Frame>
  /** First frame since index `from` (default 0) matching pred, without moving the cursor. */
  waitFor(pred: (f: Frame) => boolean, timeoutMs?: number, from?: number): Promise<Frame>
  /** Async iteration over frames from the cursor on (ends at exit). */
  [Symbol.asyncIterator](): AsyncIterator<Frame>
  /** Send a control request and wait for its control_response; returns `response.response` or throws on error. */
  request(request: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>>
  /** Register an auto-responder for control requests from the CLI (e.g. mcp_message, can_use_tool). */
  onControlRequest(subtype: string, handler: ControlHandler): void
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  readonly exitCode: number | null | undefined
  isAlive(): boolean
  /** End stdin, wait for exit (graceMs), then SIGTERM, then SIGKILL after 3 s. */
  close(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** SIGTERM now (then SIGKILL after 3 s) and wait for exit. */
  kill(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

export interface SpawnOptions {
  readonly sandbox: Sandbox
  readonly server: ServerLike
  readonly env?: Record<string, string | undefined>
  readonly cwd?: string
  readonly label?: string
  /** Print frames and stderr to the test's stderr. */
  readonly debug?: boolean
}

const registry = new Set<ClaudeProcess>()

// The CLI runs detached (its own process group); if the test process itself
// exits without cleanup, take every tracked group down with it.
process.once("exit", () => {
  for (const p of registry) if (p.isAlive()) signalGroup(p.pid, "SIGKILL")
})

/** Tracked processes that have not exited yet. */
export function liveProcesses(): ClaudeProcess[] {
  return [...registry].filter((p) => p.isAlive())
}

/** Close every tracked process and wait for all of them to exit. */
export async function killAll(): Promise<void> {
  await Promise.all([...registry].map((p) => p.kill()))
}

export function spawnClaude(args: readonly string[], opts: SpawnOptions): ClaudeProcess {
  const startedAt = Date.now()
  const child = spawn(claudeBinary(), [...args], {
    cwd: opts.cwd ?? opts.sandbox.ws,
    env: cliEnv(opts.sandbox, opts.server, opts.env),
    stdio: ["pipe", "pipe", "pipe"],
    detached: true, // own process group, so kill reaches the CLI's children (bash, sleep)
  })
  if (child.pid === undefined) throw new Error("failed to spawn claude")
  const pid = child.pid
  const label = opts.label ?? "main"
  const frames: Frame[] = []
  const times: number[] = []
  const sent: Frame[] = []
  let stderrText = ""
  let cursor = 0
  let requestCounter = 0
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined
  const waiters = new Set<() => void>()
  const handlers = new Map<string, ControlHandler>()
  const wake = () => {
    for (const w of [...waiters]) w()
  }

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    child.on("exit", (code, signal) => {
      exitInfo = { code, signal }
      res(exitInfo)
      wake()
    })
  })

  let buf = ""
  child.stdout!.setEncoding("utf8")
  child.stdout!.on("data", (d: string) => {
    buf += d
    let nl = buf.indexOf("\n")
    while (nl >= 0) {
      const line = buf.slice(0, nl)
      buf = buf.slice(nl + 1)
      if (line.trim()) onLine(line)
      nl = buf.indexOf("\n")
    }
  })
  child.stderr!.setEncoding("utf8")
  child.stderr!.on("data", (d: string) => {
    stderrText += d
    if (opts.debug) process.stderr.write(`[claude ${label} stderr] ${d}`)
  })
  child.stdin!.on("error", () => {}) // EPIPE after exit

  const onLine = (line: string) => {
    let f: Frame
    try {
      f = JSON.parse(line) as Frame
    } catch {
      f = { type: "_raw", text: line }
    }
    frames.push(f)
    times.push(Date.now() - startedAt)
    if (opts.debug) process.stderr.write(`[claude ${label}] ${line.slice(0, 300)}\n`)
    if (f.type === "control_request") {
      const request = (f.request ?? {}) as Record<string, unknown>
      const h = handlers.get(String(request.subtype)) ?? handlers.get("*")
      const id = String(f.request_id)
      if (h) {
        void Promise.resolve()
          .then(() => h(request, f))
          .then(
            (r) => {
              if (r !== undefined) send(controlSuccess(id, r))
            },
            (e: unknown) => send(controlError(id, String(e))),
          )
      }
    }
    wake()
  }

  const send = (frame: Frame) => {
    sent.push(frame)
    if (child.stdin!.writable) child.stdin!.write(`${JSON.stringify(frame)}\n`)
  }

  const waitUntil = <T>(find: () => T | undefined, timeoutMs: number, what: string): Promise<T> =>
    new Promise<T>((resolveP, rejectP) => {
      const check = () => {
        const v = find()
        if (v !== undefined) {
          done()
          resolveP(v)
        } else if (exitInfo) {
          done()
          rejectP(
            new Error(
              `claude ${label} exited (${exitInfo.code ?? exitInfo.signal}) while waiting for ${what}; stderr: ${stderrText.slice(-2000)}`,
            ),
          )
        }
      }
      const timer = setTimeout(() => {
        done()
        rejectP(
          new Error(
            `timeout ${timeoutMs} ms waiting for ${what} (claude ${label}, ${frames.length} frames; last: ${JSON.stringify(frames.at(-1))?.slice(0, 400)})`,
          ),
        )
      }, timeoutMs)
      const done = () => {
        clearTimeout(timer)
        waiters.delete(check)
      }
      waiters.add(check)
      check()
    })

  const handle: ClaudeProcess = {
    pid,
    label,
    args: [...args],
    child,
    frames,
    sent,
    times,
    startedAt,
    stderr: () => stderrText,
    send,
    sendUser(text, o = {}) {
      const f = userMessage(text, o)
      send(f)
      return f
    },
    next(pred = () => true, timeoutMs = 20_000) {
      return waitUntil(
        () => {
          for (let i = cursor; i < frames.length; i++) {
            const f = frames[i]!
            if (pred(f)) {
              cursor = i + 1
              return f
            }
          }
          return undefined
        },
        timeoutMs,
        `next frame matching ${pred.toString().slice(0, 120)}`,
      )
    },
    waitFor(pred, timeoutMs = 20_000, from = 0) {
      return waitUntil(
        () => {
          for (let i = from; i < frames.length; i++) if (pred(frames[i]!)) return frames[i]!
          return undefined
        },
        timeoutMs,
        `frame matching ${pred.toString().slice(0, 120)}`,
      )
    },
    [Symbol.asyncIterator]() {
      return {
        next: async () => {
          try {
            const f = await waitUntil(
              () => (cursor < frames.length ? frames[cursor++] : undefined),
              2 ** 31 - 1,
              "frame",
            )
            return { value: f, done: false }
          } catch {
            return { value: undefined, done: true }
          }
        },
      }
    },
    async request(request, timeoutMs = 20_000) {
      // deterministic per process: initialize_1, interrupt_2, ...
      const id = `${String(request.subtype ?? "req")}_${++requestCounter}`
      send(controlRequest(id, request))
      const f = await waitUntil(
        () => frames.find(isControlResponseFor(id)),
        timeoutMs,
        `control_response to ${String(request.subtype)}`,
      )
      const r = f.response as Record<string, unknown>
      if (r.subtype !== "success")
        throw new Error(`control request ${String(request.subtype)} failed: ${String(r.error)}`)
      return (r.response ?? {}) as Record<string, unknown>
    },
    onControlRequest(subtype, handler) {
      handlers.set(subtype, handler)
      // answer requests that already arrived
      for (const f of frames) {
        if (!isControlRequest(subtype === "*" ? undefined : subtype)(f)) continue
        const id = String(f.request_id)
        if (
          sent.some(
            (s) => s.type === "control_response" && (s.response as { request_id?: string }).request_id === id,
          )
        )
          continue
        void Promise.resolve(handler((f.request ?? {}) as Record<string, unknown>, f)).then((r) => {
          if (r !== undefined) send(controlSuccess(id, r))
        })
      }
    },
    exited,
    get exitCode() {
      return exitInfo ? exitInfo.code : undefined
    },
    isAlive: () => exitInfo === undefined,
    async close(graceMs = 5_000) {
      if (!exitInfo) {
        child.stdin!.end()
        const t = await Promise.race([exited, sleep(graceMs).then(() => undefined)])
        if (t) return t
      }
      return handle.kill()
    },
    async kill() {
      if (exitInfo) return exitInfo
      signalGroup(pid, "SIGTERM")
      const t = await Promise.race([exited, sleep(3_000).then(() => undefined)])
      if (t) return t
      signalGroup(pid, "SIGKILL")
      return exited
    },
  }
  registry.add(handle)
  void exited.then(() => {
    // Kill whatever the CLI left in its process group (e.g. a background sleep).
    signalGroup(pid, "SIGKILL")
  })
  return handle
}

function signalGroup(pid: number, sig: NodeJS.Signals) {
  try {
    process.kill(-pid, sig)
  } catch {
    try {
      process.kill(pid, sig)
    } catch {}
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

// ---------------------------------------------------------------------------
// Session helpers

export interface InitializeOptions {
  readonly sdkMcpServers?: readonly string[]
  readonly extra?: Record<string, unknown>
  readonly timeoutMs?: number
}

/** Send `initialize` and wait for its control_response; returns the response body. */
export async function initialize(
  p: ClaudeProcess,
  o: InitializeOptions = {},
): Promise<Record<string, unknown>> {
  const req: Record<string, unknown> = { subtype: "initialize", ...o.extra }
  if (o.sdkMcpServers) req.sdkMcpServers = [...o.sdkMcpServers]
  return p.request(req, o.timeoutMs ?? 20_000)
}

/** Wait for the next `result` frame after the cursor. */
export function nextResult(p: ClaudeProcess, timeoutMs = 30_000): Promise<Frame> {
  return p.next(isResult, timeoutMs)
}

/** Permission answers for can_use_tool. */
export const allow = (input: unknown) => ({ behavior: "allow", updatedInput: input })
export const deny = (message: string) => ({ behavior: "deny", message })
