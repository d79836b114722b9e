/**
 * Where the CLI runs in a test: a temporary sandbox (HOME, workspace, tmp and
 * a `claude` link), the offline environment it gets, and the stream-json
 * arguments every headless session starts with.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PROTOCOL_ARGS } from "../session/launch.ts"
import { claudeBinary, testCliSupport } from "./cli-binary.ts"

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
