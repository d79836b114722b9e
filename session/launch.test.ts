import { describe, expect, it } from "vitest"
import { appendSystemPrompt, initializeRequest, launchArgs, PROTOCOL_ARGS, startArgs } from "./launch.ts"

describe("start modes", () => {
  it("new, resume, resume at and fork", () => {
    expect(startArgs({ kind: "new", cliId: "A" })).toEqual(["--session-id", "A"])
    expect(startArgs({ kind: "resume", cliId: "A" })).toEqual(["--resume", "A"])
    expect(startArgs({ kind: "resumeAt", cliId: "A", at: "U" })).toEqual([
      "--resume",
      "A",
      "--resume-session-at",
      "U",
    ])
    // --session-id goes with --resume only together with --fork-session.
    expect(startArgs({ kind: "fork", origin: "O", cliId: "N" })).toEqual([
      "--resume",
      "O",
      "--fork-session",
      "--session-id",
      "N",
    ])
    // A fork cut at a message (a rewind in a fork not yet stored).
    expect(startArgs({ kind: "fork", origin: "O", cliId: "N", at: "M" })).toEqual([
      "--resume",
      "O",
      "--resume-session-at",
      "M",
      "--fork-session",
      "--session-id",
      "N",
    ])
  })
})

describe("launchArgs", () => {
  const args = launchArgs({
    start: { kind: "new", cliId: "A" },
    workspace: "/ws",
    optionFlags: ["--model", "claude-opus-5-5", "--permission-mode", "default"],
    knobFlags: ["--mcp-config", "/m.json", "--strict-mcp-config"],
    addDirs: ["/extra one", "/ws", "/two"],
    extraArgs: ["--debug"],
  })

  it("keeps the notes' order: protocol, start, subagent text, options, knobs, dirs, user arguments", () => {
    expect(args).toEqual([
      ...PROTOCOL_ARGS,
      "--session-id",
      "A",
      "--forward-subagent-text",
      "--model",
      "claude-opus-5-5",
      "--permission-mode",
      "default",
      "--mcp-config",
      "/m.json",
      "--strict-mcp-config",
      "--add-dir",
      "/ws",
      "--add-dir",
      "/extra one",
      "--add-dir",
      "/two",
      "--debug",
    ])
  })

  it("gives every directory its own flag, the workspace first and once", () => {
    const dirs = args.flatMap((arg, i) => (arg === "--add-dir" ? [args[i + 1]] : []))
    expect(dirs).toEqual(["/ws", "/extra one", "/two"])
  })
})

describe("initialize", () => {
  it("sends the MCP server and the appended prompt only when they have content", () => {
    expect(initializeRequest({ hasTools: false, appendSystemPrompt: undefined })).toEqual({
      subtype: "initialize",
    })
    expect(initializeRequest({ hasTools: true, appendSystemPrompt: "rules" })).toEqual({
      subtype: "initialize",
      sdkMcpServers: ["convergence"],
      sdkMcpServerConfigs: { convergence: { timeout: 3_600_000 } },
      appendSystemPrompt: "rules",
    })
  })

  it("puts CLAUDE_APPEND_SYSTEM_PROMPT before the host's instructions", () => {
    expect(appendSystemPrompt("user text", "host text")).toBe("user text\n\nhost text")
    expect(appendSystemPrompt(undefined, "host text")).toBe("host text")
    expect(appendSystemPrompt("  ", "")).toBeUndefined()
  })
})
