// Scenarios of one tool or one turn: text and thinking, Bash allowed and
// denied, Write and Edit, TodoWrite, the task tools.

import { join } from "node:path"
import { allow, deny, initialize } from "../cli.ts"
import { text, thinking, toolUse } from "../model-server.ts"
import { lastToolResult, type ScenarioDef, turn } from "../scenario-run.ts"

export const textThinking: ScenarioDef = {
  name: "text_thinking",
  description: "Two user turns: thinking + text, then text only.",
  setup: () => ({
    model: {
      main: [
        [
          thinking("The user greets me. I should greet back briefly."),
          text("Hello! I am the scripted model."),
        ],
        [text("Second answer, no thinking this time.")],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      ctx.note("initialize", Object.keys(await initialize(p)))
      await turn(p, "Hello there")
      await turn(p, "And again")
    },
  }),
}

export const bashAllow: ScenarioDef = {
  name: "bash_allow",
  description: "Bash that needs approval (touch), allowed through can_use_tool; the model echoes the output.",
  setup: () => ({
    model: {
      main: [
        [
          text("I'll create the file."),
          toolUse("Bash", {
            command: "touch made-by-bash.txt && echo bash-output-ok",
            description: "Create a file",
          }),
        ],
        (req) => [text(`The command printed: ${lastToolResult(req)}`)],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      p.onControlRequest("can_use_tool", (r) => allow(r.input))
      await initialize(p)
      await turn(p, "Create made-by-bash.txt")
    },
  }),
}

export const bashDeny: ScenarioDef = {
  name: "bash_deny",
  description: "Bash that needs approval, denied with a message; result lists the permission denial.",
  setup: () => ({
    model: {
      main: [
        [
          toolUse("Bash", {
            command: "rm -rf build && echo removed",
            description: "Remove the build folder",
          }),
        ],
        (req) => [text(`Understood, not removing it (${lastToolResult(req).slice(0, 80)}).`)],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      p.onControlRequest("can_use_tool", () => deny("The user said no in this test."))
      await initialize(p)
      await turn(p, "Remove the build folder")
    },
  }),
}

export const writeEdit: ScenarioDef = {
  name: "write_edit",
  description: "Write a new file, then Edit it; both approved through can_use_tool (default mode).",
  setup: (sb) => {
    const file = join(sb.ws, "notes.md")
    return {
      model: {
        main: [
          [toolUse("Write", { file_path: file, content: "# Notes\n\nline one\nline two\n" })],
          [toolUse("Edit", { file_path: file, old_string: "line two", new_string: "line 2 (edited)" })],
          [text("Wrote and edited notes.md.")],
        ],
      },
      async drive(ctx) {
        const p = ctx.spawn()
        await initialize(p)
        await turn(p, "Write notes.md and then edit it")
      },
    }
  },
}

export const todo: ScenarioDef = {
  name: "todo",
  description:
    "TodoWrite (CLAUDE_CODE_ENABLE_TODO_TOOLS=1, CLAUDE_CODE_ENABLE_TASKS=0): create a list, then update it.",
  env: { CLAUDE_CODE_ENABLE_TODO_TOOLS: "1", CLAUDE_CODE_ENABLE_TASKS: "0" },
  setup: () => ({
    model: {
      main: [
        [
          toolUse("TodoWrite", {
            todos: [
              { content: "Read the code", status: "in_progress", activeForm: "Reading the code" },
              { content: "Write the fix", status: "pending", activeForm: "Writing the fix" },
            ],
          }),
        ],
        [
          toolUse("TodoWrite", {
            todos: [
              { content: "Read the code", status: "completed", activeForm: "Reading the code" },
              { content: "Write the fix", status: "in_progress", activeForm: "Writing the fix" },
            ],
          }),
        ],
        [text("Plan updated.")],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      await initialize(p)
      await turn(p, "Plan the work")
    },
  }),
}

export const tasks: ScenarioDef = {
  name: "tasks",
  description: "TaskCreate then TaskUpdate (CLAUDE_CODE_ENABLE_TODO_TOOLS=1).",
  env: { CLAUDE_CODE_ENABLE_TODO_TOOLS: "1" },
  setup: () => ({
    model: {
      main: [
        [
          toolUse("TaskCreate", {
            subject: "Fix the parser",
            description: "Make the parser accept trailing commas",
            activeForm: "Fixing the parser",
          }),
        ],
        (req) => {
          const id = /#?(\d+)/.exec(lastToolResult(req))?.[1] ?? "1"
          return [toolUse("TaskUpdate", { taskId: id, status: "in_progress" })]
        },
        [text("Task created and started.")],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      await initialize(p)
      await turn(p, "Track the parser fix")
    },
  }),
}
