/**
 * The CLI version and its capabilities end to end, on whichever CLI the run
 * drives (CVG_TEST_CLI): the plugin's capability table (cli-version.ts)
 * against what this binary accepts, the launch line and the one notice, and
 * the features that depend on a capability, each asserting the graceful
 * behaviour where the table says the CLI lacks it.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { type Feature, FEATURES } from "../cli-version.ts"
import { launchArgs } from "../session/launch.ts"
import { launchFlags } from "../options.ts"
import type { AgentEvent } from "../sdk/protocol.ts"
import { claudeBinary } from "../testkit/cli.ts"
import { text, thinking, toolUse } from "../testkit/model-server.ts"
import {
  cliUnderTest,
  closeWorldsAfterEach,
  createSession,
  ofType,
  promptAndWait,
  startWorld,
  type World,
} from "./harness.ts"

let world: World | undefined
closeWorldsAfterEach()

const { support, version } = cliUnderTest

/**
 * What the binary says about a command line, offline and without a prompt:
 * an unknown option exits at once; a known one gets as far as wanting input.
 */
const refusal = (args: ReadonlyArray<string>): string | undefined => {
  const home = mkdtempSync(join(tmpdir(), "cvg-flags-"))
  try {
    const ran = spawnSync(claudeBinary(), ["-p", ...args], {
      input: "",
      encoding: "utf8",
      timeout: 30_000,
      env: {
        PATH: "/usr/bin:/bin",
        HOME: home,
        ANTHROPIC_API_KEY: "sk-ant-mock-flags",
        ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        IS_SANDBOX: "1",
      },
    })
    return /unknown option '[^']+'|Unknown --effort value '[^']+'|argument '[^']+' is invalid/.exec(
      `${ran.stderr}\n${ran.stdout}`,
    )?.[0]
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

const FLAG_ARGS: { readonly [F in Feature]: ReadonlyArray<string> } = {
  forwardSubagentText: ["--output-format", "stream-json", "--verbose", "--forward-subagent-text"],
  ultracodeEffort: ["--effort", "ultracode"],
}

const noticesOf = (events: ReadonlyArray<AgentEvent>) =>
  ofType(events, "Notice").filter((n) => n.text.startsWith("This Claude Code"))

describe(`Claude Code ${version.text}: version and capabilities`, () => {
  it("the capability table says what this CLI accepts, and the launch line has no flag it refuses", () => {
    for (const feature of Object.keys(FEATURES) as Feature[])
      expect(refusal(FLAG_ARGS[feature]) === undefined, `${feature} on ${version.text}`).toBe(
        support.has(feature),
      )
    // The whole launch line the plugin builds for this CLI, both thinking modes, every start kind.
    const cliId = "00000000-0000-4000-8000-000000000001"
    for (const thinkingOn of [true, false])
      for (const start of [
        { kind: "new", cliId },
        { kind: "fork", origin: cliId, cliId: "00000000-0000-4000-8000-000000000002" },
      ] as const) {
        const args = launchArgs({
          start,
          workspace: "/tmp",
          cli: support,
          optionFlags: launchFlags(
            {
              model: "claude-sonnet-5-5",
              effort: "ultracode",
              approval: "full",
              thinking: thinkingOn,
              fastMode: true,
            },
            [],
            true,
            support,
          ),
          knobFlags: ["--strict-mcp-config", "--setting-sources", "user,project"],
        })
        expect(refusal(args), args.join(" ")).toBeUndefined()
      }
  })

  it("a chat on this CLI: the flags it lacks left out, said once in a notice, and the chat works", async () => {
    world = await startWorld({ main: [[text("First answer.")], [text("Second answer.")]] })
    const w = world
    const info = await w.host.call(w.agentId, "initialize")
    expect(info.status).toBe("Ready")
    const { session_id } = await createSession(w)
    const first = await promptAndWait(w, session_id, "hello")
    expect(first.ended.outcome).toBe("Completed")
    const proc = w.host.processes().find((p) => p.args.includes(session_id))
    expect(proc?.args.includes("--forward-subagent-text")).toBe(support.has("forwardSubagentText"))
    const second = await promptAndWait(w, session_id, "again")
    expect(second.ended.outcome).toBe("Completed")
    const said = ofType(w.events(session_id), "TextDelta")
      .map((e) => e.text)
      .join("")
    expect(said).toBe("First answer.Second answer.")
    // One notice for the session however many runs, naming this version; none when nothing is missing.
    const expected = support.notice
    expect(noticesOf(w.events(session_id)).map((n) => n.text)).toEqual(expected ? [expected] : [])
    if (expected) expect(expected).toContain(`Claude Code ${version.text} has no`)
  })

  it("ultracode: offered and launched where the CLI has it, extra high effort where it does not", async () => {
    world = await startWorld({ main: [[text("Working hard.")]] })
    const w = world
    const info = await w.host.call(w.agentId, "initialize")
    const effort = info.options.find((o) => o.id === "effort")
    expect(effort?.choices?.some((c) => c.value === "ultracode")).toBe(support.has("ultracodeEffort"))
    const { session_id } = await createSession(w, { options: { effort: "ultracode" } })
    const run = await promptAndWait(w, session_id, "think hard")
    expect(run.ended.outcome).toBe("Completed")
    const args = w.host.processes().find((p) => p.args.includes(session_id))?.args ?? []
    expect(args[args.indexOf("--effort") + 1]).toBe(support.has("ultracodeEffort") ? "ultracode" : "xhigh")
    // Either way the model is asked at extra high effort.
    expect(w.server.requests.find((r) => r.conversation === "main")?.effort).toBe("xhigh")
    // No ultracode warning: where it is launched it turns on.
    expect(ofType(w.events(session_id), "Notice").some((n) => n.text.startsWith("Ultracode"))).toBe(false)
  })

  it("subagent text: in its task, with --forward-subagent-text where the CLI has it (older ones forward it unasked)", async () => {
    world = await startWorld({
      main: [
        [
          toolUse("Agent", {
            description: "Say hello",
            prompt: "SUB-HELLO: greet",
            subagent_type: "general-purpose",
            // In the foreground: the CLI may otherwise run it in the background, past the run's end.
            run_in_background: false,
          }),
        ],
        [text("The subagent greeted.")],
      ],
      subagents: [
        { match: "SUB-HELLO", turns: [[thinking("A greeting."), text("Hello from the subagent.")]] },
      ],
    })
    const w = world
    const { session_id } = await createSession(w)
    const run = await promptAndWait(w, session_id, "delegate a greeting")
    expect(run.ended.outcome).toBe("Completed")
    const spawn = ofType(w.events(session_id), "ToolCallStarted").find((e) => e.call.name === "Agent")
    const done = await w.waitFor(
      session_id,
      "Task",
      (e) => e.task.id === spawn?.call.id && e.task.status === "Completed",
    )
    expect(done.task.summary).toBe("Hello from the subagent.")
    const events = w.events(session_id)
    const textIn = (task: string | undefined) =>
      ofType(events, "TextDelta")
        .filter((e) => e.task_id === task)
        .map((e) => e.text)
        .join("")
    expect(textIn(spawn?.call.id)).toBe("Hello from the subagent.")
    // The subagent's words never leak into the main chat.
    expect(textIn(undefined)).toBe("The subagent greeted.")
    const args = w.host.processes().find((p) => p.args.includes(session_id))?.args ?? []
    expect(args.includes("--forward-subagent-text")).toBe(support.has("forwardSubagentText"))
  })
})
