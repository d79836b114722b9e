// The built-in demo: a scripted model conversation that shows every kind of
// event the front end draws (thinking and text, a plan, a Bash call that asks
// for approval, Write then Edit with a diff, a subagent, a question; then, on
// a prompt saying "slow", a long Bash call to interrupt; on "long", a command
// with more output than the screen shows; the `demo-summary` skill answers
// with a markdown table; "what did I say" lists the prompts the model was
// sent, to show what a rewind or fork kept). `npm start` serves it on 127.0.0.1 when no login
// is found (host/tui/demo-env.ts).

import { join } from "node:path"
import { SIGN_IN_ADVICE } from "../host/acp/sign-in.ts"
import {
  message,
  type RequestView,
  type Scenario,
  type Step,
  text,
  thinking,
  toolUse,
} from "./model-server.ts"

/** What the demo suggests typing; any prompt runs the same script. */
export const DEMO_PROMPT = "Show me around"

/** The subagent's prompt carries this marker so its requests get its own script. */
export const DEMO_SUBAGENT_MARK = "DEMO-SUBAGENT"

/** The env the demo's CLI needs for TodoWrite (the plan) rather than the Task* tools. */
export const DEMO_ENV: Readonly<Record<string, string>> = {
  CLAUDE_CODE_ENABLE_TODO_TOOLS: "1",
  CLAUDE_CODE_ENABLE_TASKS: "0",
}

/** The subagent's report, quoted by the main conversation. */
const CHECKED = 'hello.py defines greet() and prints "Hello, world" when run.'

/**
 * After the script, a prompt with the word "slow" gets this read-only Bash
 * call (the CLI runs it without asking): a long step for Ctrl-C to cancel.
 * Not a bare `sleep 30`: the CLI blocks a command that starts with a long sleep.
 */
export const SLOW_COMMAND = "echo 'waiting 30 s' && sleep 30"

export const DEMO_QUESTION = "Which greeting should the script print?"

/** A prompt with "long" runs this read-only command: 30 lines, more than a tool's output shows. */
export const LONG_COMMAND = "seq 1 30"

/** The user skill demo-env.ts writes into the demo's HOME, and the marker its body carries. */
export const DEMO_SKILL = "demo-summary"
export const DEMO_SKILL_MARK = "DEMO-SKILL-SUMMARY"
export const DEMO_SKILL_BODY = `${DEMO_SKILL_MARK}: sum up what the demo made in the workspace, as a markdown table.`

/** The prompts the model was sent, oldest first: user texts, without the CLI's own `<…>` notes. */
const promptsSeen = (req: RequestView): string[] =>
  req.messages
    .filter((m) => m.role === "user")
    .flatMap((m) =>
      typeof m.content === "string"
        ? [m.content]
        : Array.isArray(m.content)
          ? m.content.flatMap((b: { type?: string; text?: unknown }) =>
              b?.type === "text" && typeof b.text === "string" ? [b.text] : [],
            )
          : [],
    )
    .map((t) => t.trim())
    .filter((t) => t !== "" && !t.startsWith("<"))

/** Every text of the last user turn (a skill's body arrives as its own block). */
const lastUserTexts = (req: RequestView): string =>
  req.messages
    .filter((m) => m.role === "user")
    .slice(-1)
    .flatMap((m) =>
      typeof m.content === "string"
        ? [m.content]
        : Array.isArray(m.content)
          ? m.content.flatMap((b: { type?: string; text?: unknown }) =>
              b?.type === "text" && typeof b.text === "string" ? [b.text] : [],
            )
          : [],
    )
    .join("\n")

const PLAN = [
  { content: "Run a shell command", activeForm: "Running a shell command" },
  { content: "Write and edit a file", activeForm: "Writing and editing a file" },
  { content: "Ask a subagent to check the work", activeForm: "Asking a subagent" },
  { content: "Ask you a question", activeForm: "Asking you a question" },
]

const plan = (done: number) =>
  toolUse("TodoWrite", {
    todos: PLAN.map((p, i) => ({
      content: p.content,
      activeForm: p.activeForm,
      status: i < done ? "completed" : i === done ? "in_progress" : "pending",
    })),
  })

/** The last tool result's text, without the CLI's `<tag>…</tag>` annotations. */
const lastResult = (req: RequestView): string =>
  (req.toolResults().at(-1)?.content ?? "").replace(/<([a-z-]+)>[\s\S]*?<\/\1>/g, "").trim()

const say = (steps: readonly Step[]) => message(steps)

/** The demo conversation, with its files in `workspace`. */
export function demoScenario(workspace: string): Scenario {
  const file = join(workspace, "hello.py")
  return {
    main: [
      say([
        thinking(
          "The user wants a tour. I will make a short plan, run a command, write and edit a file, " +
            "ask a subagent to check it, and ask one question.",
        ),
        text(
          "Hello! I am the **scripted demo model**: every answer here comes from `testkit/demo.ts`, " +
            "not from Claude. Let me show you what a session looks like. First, a plan.",
        ),
        plan(0),
      ]),
      say([
        text("Now a shell command. It changes the workspace, so it asks for your approval."),
        toolUse("Bash", {
          command: "mkdir -p notes && echo 'made by the demo' > notes/demo.txt && cat notes/demo.txt",
          description: "Create notes/demo.txt",
        }),
      ]),
      (req) =>
        say([
          text(
            req.toolResults().at(-1)?.isError
              ? "You said no to the command, so I will skip it. Next, a file."
              : `The command printed: ${lastResult(req)}. Next, a file.`,
          ),
          plan(1),
        ]),
      say([
        toolUse("Write", { file_path: file, content: 'def greet():\n    print("Hello")\n\n\ngreet()\n' }),
      ]),
      say([
        text("And an edit, shown as a diff:"),
        toolUse("Edit", {
          file_path: file,
          old_string: 'print("Hello")',
          new_string: 'print("Hello, world")',
        }),
      ]),
      say([plan(2)]),
      say([
        text("A subagent will check the file; its work appears nested under its task."),
        toolUse("Agent", {
          description: "Check hello.py",
          prompt: `${DEMO_SUBAGENT_MARK}: read hello.py in the workspace and say what it prints.`,
          subagent_type: "general-purpose",
          run_in_background: false,
        }),
      ]),
      (req) =>
        say([
          text(`The subagent says: ${lastResult(req).includes(CHECKED) ? CHECKED : "(no report)"}`),
          plan(3),
        ]),
      say([
        toolUse("AskUserQuestion", {
          questions: [
            {
              question: DEMO_QUESTION,
              header: "Greeting",
              multiSelect: false,
              options: [
                { label: "Hello, world", description: "keep the edit" },
                { label: "Bonjour", description: "French" },
              ],
            },
          ],
        }),
      ]),
      (req) =>
        say([
          thinking("The user answered; I close the plan and sum up."),
          text(`You picked “${/="([^"]*)"/.exec(lastResult(req))?.[1] ?? lastResult(req)}”. Noted.`),
          toolUse("TodoWrite", {
            todos: PLAN.map((p) => ({ content: p.content, activeForm: p.activeForm, status: "completed" })),
          }),
        ]),
      say([
        text(
          "That is the whole demo: text and thinking, a plan, an approval, a diff, a subagent and a question. " +
            `${SIGN_IN_ADVICE}, then start again without the demo to talk to the real model.`,
        ),
      ]),
    ],
    subagents: [
      {
        match: DEMO_SUBAGENT_MARK,
        name: "checker",
        turns: [
          say([
            thinking("I should read the file."),
            text("Reading hello.py."),
            toolUse("Read", { file_path: file }),
          ]),
          say([text(CHECKED)]),
        ],
      },
    ],
    exhausted: (conversation, req) => {
      const results = req.toolResults()
      if (conversation === "main" && results.length > 0 && /\b30\b/.test(lastResult(req)))
        return say([text("That was 30 lines; the screen shows the first few, `/expand` shows them all.")])
      if (conversation === "main" && results.length > 0)
        return say([text(`The slow command finished: ${lastResult(req) || "(no output)"}.`)])
      if (conversation === "main" && /\bwhat did I say\b/i.test(req.lastUserText()))
        return say([text(`You said: ${promptsSeen(req).slice(0, -1).join(" · ")}`)])
      if (conversation === "main" && lastUserTexts(req).includes(DEMO_SKILL_MARK)) {
        return say([
          text(
            "## What the demo made\n\n" +
              "| File | What it is |\n|---|---|\n| `hello.py` | greets, *edited* once |\n| `notes/demo.txt` | one line from Bash |\n\n" +
              "The skill **demo-summary** ran: its text came from your `~/.claude/skills`.",
          ),
        ])
      }
      if (conversation === "main" && /\blong\b/i.test(req.lastUserText()))
        return say([
          text("A command with a long output:"),
          toolUse("Bash", { command: LONG_COMMAND, description: "Count to 30" }),
        ])
      if (conversation === "main" && /\bslow\b/i.test(req.lastUserText()))
        return say([
          text("A slow command, so you can interrupt it with Ctrl-C."),
          toolUse("Bash", { command: SLOW_COMMAND, description: "Wait 30 seconds" }),
        ])
      return message([
        text(
          `The demo script has ended. ${SIGN_IN_ADVICE}, then start again without the demo to talk to the real model.`,
        ),
      ])
    },
  }
}
