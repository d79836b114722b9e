// Scenarios of subagents, questions and the session's life: foreground and
// background subagents, AskUserQuestion, interrupt, resume, compact, a plugin tool.

import { allow, initialize, isType, nextResult } from "../cli.ts"
import { gate, text, thinking, toolUse } from "../model-server.ts"
import {
  assistantText,
  lastToolResult,
  type ScenarioDef,
  shoutMcpHandler,
  stableUuid,
  turn,
} from "../scenario-run.ts"

const SUB_FG = "SUBAGENT-FG: count the files in the workspace"
export const subagentForeground: ScenarioDef = {
  name: "subagent_foreground",
  description:
    "Main calls Agent (general-purpose, run_in_background false); the subagent thinks, runs an approved Bash and answers.",
  setup: () => ({
    model: {
      main: [
        [
          text("I'll delegate this."),
          toolUse("Agent", {
            description: "Count workspace files",
            prompt: SUB_FG,
            subagent_type: "general-purpose",
            run_in_background: false,
          }),
        ],
        (req) => [text(`The subagent reported: ${lastToolResult(req).slice(0, 120)}`)],
      ],
      subagents: [
        {
          match: "SUBAGENT-FG",
          name: "fg",
          turns: [
            [
              thinking("I need to run a command."),
              text("Running a command."),
              toolUse("Bash", { command: "touch sub-made.txt && ls | wc -l", description: "Count files" }),
            ],
            (req) => [text(`There are ${lastToolResult(req).trim()} files.`)],
          ],
        },
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      const asked: unknown[] = []
      p.onControlRequest("can_use_tool", (r) => {
        asked.push({ tool: r.tool_name, agent_id: r.agent_id ?? null })
        return allow(r.input)
      })
      await initialize(p)
      await turn(p, "How many files are in the workspace? Use a subagent.")
      ctx.note("can_use_tool", asked)
    },
  }),
}

const SUB_BG = "SUBAGENT-BG: compute the answer in the background"
export const subagentBackground: ScenarioDef = {
  name: "subagent_background",
  description:
    "Main calls Agent with run_in_background true; the turn ends, the subagent finishes, and the CLI starts a new turn by itself.",
  setup: () => {
    const mainDone = gate()
    return {
      model: {
        main: [
          [
            toolUse("Agent", {
              description: "Background computation",
              prompt: SUB_BG,
              subagent_type: "general-purpose",
              run_in_background: true,
            }),
          ],
          () => {
            setTimeout(() => mainDone.open(), 300)
            return [text("The agent is running in the background.")]
          },
          [text("The background agent reported: 42.")],
        ],
        subagents: [
          {
            match: "SUBAGENT-BG",
            name: "bg",
            turns: [
              async () => {
                await mainDone.wait
                return [thinking("Computing."), text("The answer is 42.")]
              },
            ],
          },
        ],
      },
      async drive(ctx) {
        const p = ctx.spawn()
        await initialize(p)
        await turn(p, "Compute the answer in the background")
        // the CLI starts a turn by itself when the agent finishes
        await p.next(isType("system", "task_notification"), 30_000)
        await nextResult(p, 30_000)
      },
    }
  },
}

const QUESTION = "Which color should the widget be?"
export const askUser: ScenarioDef = {
  name: "ask_user",
  description:
    "AskUserQuestion answered via can_use_tool allow with updatedInput.answers keyed by question text.",
  setup: () => ({
    model: {
      main: [
        [
          toolUse("AskUserQuestion", {
            questions: [
              {
                question: QUESTION,
                header: "Color",
                multiSelect: false,
                options: [
                  { label: "Blue", description: "A calm blue" },
                  { label: "Red", description: "A loud red" },
                ],
              },
            ],
          }),
        ],
        (req) => [text(`Got it: ${lastToolResult(req)}`)],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      p.onControlRequest("can_use_tool", (r) => {
        if (r.tool_name === "AskUserQuestion") {
          const input = r.input as Record<string, unknown>
          return allow({ ...input, answers: { [QUESTION]: "Blue" } })
        }
        return allow(r.input)
      })
      await initialize(p)
      await turn(p, "Make me a widget")
    },
  }),
}

export const interrupt: ScenarioDef = {
  name: "interrupt",
  description:
    "A long Bash (sleep 20) interrupted by control_request interrupt; the next user message still works.",
  setup: () => ({
    model: {
      main: [
        [toolUse("Bash", { command: "sleep 20", description: "Wait a long time" })],
        [text("I'm still here.")],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      await initialize(p)
      p.sendUser("Wait twenty seconds")
      await p.next((f) => f.type === "assistant" && JSON.stringify(f.message).includes('"tool_use"'), 20_000)
      // a foreground Bash becomes a task (task_started local_bash) after about 3 s
      await p.next(isType("system", "task_started"), 10_000)
      const t0 = Date.now()
      const resp = await p.request({ subtype: "interrupt" })
      ctx.note("interrupt_response", resp)
      ctx.note("interrupt_response_ms", Date.now() - t0)
      await nextResult(p, 15_000)
      await turn(p, "Are you still there?")
    },
  }),
}

export const resume: ScenarioDef = {
  name: "resume",
  description:
    "p1: two turns; p2: --resume; p3: --resume --resume-session-at <uuid of 'Answer one.'>; p4: --resume --fork-session --session-id <new>.",
  timeoutMs: 90_000,
  setup: () => ({
    model: {
      main: [
        [text("Answer one.")],
        [text("Answer two.")],
        [text("Answer three (resumed).")],
        [text("Answer four (resumed at answer one).")],
        [text("Answer five (forked).")],
      ],
    },
    async drive(ctx) {
      const p1 = ctx.spawn("main")
      await initialize(p1)
      await turn(p1, "Question one")
      const answerOne = p1.frames.find((f) => assistantText(f) === "Answer one.")
      await turn(p1, "Question two")
      await p1.close()
      const p2 = ctx.spawn("p2_resume", { resume: ctx.sessionId })
      await initialize(p2)
      await turn(p2, "Question three")
      await p2.close()
      const at = String(answerOne?.uuid)
      ctx.note("resume_session_at", at)
      const p3 = ctx.spawn("p3_resume_at", { resume: ctx.sessionId, resumeSessionAt: at })
      await initialize(p3)
      await turn(p3, "Question four")
      await p3.close()
      const forkId = stableUuid("testkit:resume:fork")
      ctx.note("fork_session_id", forkId)
      const p4 = ctx.spawn("p4_fork", { resume: ctx.sessionId, forkSession: true, sessionId: forkId })
      await initialize(p4)
      await turn(p4, "Question five")
      await p4.close()
    },
  }),
}

export const compact: ScenarioDef = {
  name: "compact",
  description:
    "A text turn, then `/compact` (the summarization request is a side request), then another turn.",
  setup: () => ({
    model: {
      main: [
        [text("Here is a long answer about nothing in particular.")],
        [text("After compaction I still answer.")],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      await initialize(p)
      await turn(p, "Tell me something")
      await turn(p, "/compact")
      await turn(p, "Still there?")
    },
  }),
}

export const pluginTool: ScenarioDef = {
  name: "plugin_tool",
  description:
    "initialize with sdkMcpServers:[convergence]; mcp_message answered by an in-process MCP server with one tool `shout`; the model calls mcp__convergence__shout.",
  setup: () => ({
    model: {
      main: [
        [toolUse("mcp__convergence__shout", { text: "hello plugin" })],
        (req) => [text(`The plugin said: ${lastToolResult(req)}`)],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      const methods: string[] = []
      const mcp = shoutMcpHandler("convergence")
      p.onControlRequest("mcp_message", (r) => {
        methods.push(String((r.message as { method?: string }).method))
        return mcp(r)
      })
      await initialize(p, { sdkMcpServers: ["convergence"] })
      await turn(p, "Shout hello")
      ctx.note("mcp_methods", methods)
    },
  }),
}
