// The harness that runs the REAL Claude Code CLI offline against the scripted
// model server (model-server.ts). Plain Node, async/await.

import { type ChildProcess, spawn } from "node:child_process"
import { claudeBinary } from "./cli-binary.ts"
import {
  controlError,
  controlRequest,
  controlSuccess,
  type Frame,
  isControlRequest,
  isControlResponseFor,
  isResult,
  userMessage,
} from "./frames.ts"
import { cliEnv, type Sandbox, type ServerLike } from "./sandbox.ts"

// The CLI's choice, the sandbox and the frames live apart; tests import them all from here.
export * from "./cli-binary.ts"
export * from "./frames.ts"
export * from "./sandbox.ts"

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

type ExitInfo = { code: number | null; signal: NodeJS.Signals | null }

/** What is known of one running CLI: its frames so far, what was sent, stderr, exit; waiters wake on each. */
interface Session {
  readonly label: string
  readonly frames: Frame[]
  readonly sent: Frame[]
  stderr: string
  /** Where `next` reads on from. */
  cursor: number
  exit: ExitInfo | undefined
  readonly waiters: Set<() => void>
}

const wake = (s: Session) => {
  for (const w of [...s.waiters]) w()
}

/** Resolve with what `find` finds, waking at each frame; reject at the exit or after `timeoutMs`. */
const waitUntil = <T>(s: Session, find: () => T | undefined, timeoutMs: number, what: string): Promise<T> =>
  new Promise<T>((resolveP, rejectP) => {
    const { label, frames } = s
    const check = () => {
      const v = find()
      if (v !== undefined) {
        done()
        resolveP(v)
      } else if (s.exit) {
        done()
        rejectP(
          new Error(
            `claude ${label} exited (${s.exit.code ?? s.exit.signal}) while waiting for ${what}; stderr: ${s.stderr.slice(-2000)}`,
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
      s.waiters.delete(check)
    }
    s.waiters.add(check)
    check()
  })

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
  const times: number[] = []
  const s: Session = {
    label,
    frames: [],
    sent: [],
    stderr: "",
    cursor: 0,
    exit: undefined,
    waiters: new Set(),
  }
  const handlers = new Map<string, ControlHandler>()

  const exited = new Promise<ExitInfo>((res) => {
    child.on("exit", (code, signal) => {
      s.exit = { code, signal }
      res(s.exit)
      wake(s)
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
    s.stderr += d
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
    s.frames.push(f)
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
    wake(s)
  }

  const send = (frame: Frame) => {
    s.sent.push(frame)
    if (child.stdin!.writable) child.stdin!.write(`${JSON.stringify(frame)}\n`)
  }

  const handle = processHandle({ pid, args, child, times, startedAt, exited, handlers, send }, s)
  registry.add(handle)
  void exited.then(() => {
    // Kill whatever the CLI left in its process group (e.g. a background sleep).
    signalGroup(pid, "SIGKILL")
  })
  return handle
}

/** The handle a test drives: frame queries, control requests and answers, and the end of the process. */
const processHandle = (
  p: {
    readonly pid: number
    readonly args: readonly string[]
    readonly child: ChildProcess
    readonly times: number[]
    readonly startedAt: number
    readonly exited: Promise<ExitInfo>
    readonly handlers: Map<string, ControlHandler>
    readonly send: (frame: Frame) => void
  },
  s: Session,
): ClaudeProcess => {
  const { pid, child, exited, handlers, send } = p
  const { frames, sent } = s
  let requestCounter = 0
  const handle: ClaudeProcess = {
    pid,
    label: s.label,
    args: [...p.args],
    child,
    frames,
    sent,
    times: p.times,
    startedAt: p.startedAt,
    stderr: () => s.stderr,
    send,
    sendUser(text, o = {}) {
      const f = userMessage(text, o)
      send(f)
      return f
    },
    next(pred = () => true, timeoutMs = 20_000) {
      return waitUntil(
        s,
        () => {
          for (let i = s.cursor; i < frames.length; i++) {
            const f = frames[i]!
            if (pred(f)) {
              s.cursor = i + 1
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
        s,
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
              s,
              () => (s.cursor < frames.length ? frames[s.cursor++] : undefined),
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
        s,
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
            (out) =>
              out.type === "control_response" && (out.response as { request_id?: string }).request_id === id,
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
      return s.exit ? s.exit.code : undefined
    },
    isAlive: () => s.exit === undefined,
    async close(graceMs = 5_000) {
      if (!s.exit) {
        child.stdin!.end()
        const t = await Promise.race([exited, sleep(graceMs).then(() => undefined)])
        if (t) return t
      }
      return handle.kill()
    },
    async kill() {
      if (s.exit) return s.exit
      signalGroup(pid, "SIGTERM")
      const t = await Promise.race([exited, sleep(3_000).then(() => undefined)])
      if (t) return t
      signalGroup(pid, "SIGKILL")
      return exited
    },
  }
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
