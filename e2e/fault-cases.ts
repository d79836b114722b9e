/**
 * The fault matrix (issue 13): model errors, stalls and cuts at chosen
 * points of a turn; the CLI killed (SIGKILL) or frozen (SIGSTOP) at chosen
 * points; cancel, close and prompts at each. e2e/fault-run.ts runs a case
 * and checks it; e2e/faults.e2e.test.ts runs the `fast` ones in `npm test`
 * and all of them under `npm run faults`.
 *
 * Times: the CLI runs with API_TIMEOUT_MS=2000 and one retry, so a turn may
 * stay silent 3 s before the plugin calls it stuck; an interrupt has 3 s to
 * be answered; the host's kill grace is 1 s.
 */
import {
  cut,
  error,
  hang,
  midBlock,
  overloaded,
  serverError,
  stall,
  text,
  toolUse,
  type Turn,
} from "../testkit/model-server.ts"
import { type Action, type FaultCase, SUB_MATCH } from "./fault-run.ts"
import { eventually, processesOf, type World } from "./harness.ts"

const LONG = "This is the first part of a long answer that keeps going for a good while before it ends"
const FOREVER = 120_000

const at = {
  /** The first prompt is written; nothing else waited for. */
  written: async () => {},
  /** The first streamed text of the run arrived. */
  text: (w: World, sid: string) => w.waitFor(sid, "TextDelta", undefined, 20_000).then(() => {}),
  approval: (w: World, sid: string) => w.waitFor(sid, "ApprovalRequested", undefined, 20_000).then(() => {}),
  /** The nth main-conversation request reached the model, and a little after. */
  request: (n: number) => async (w: World) => {
    await eventually(() => w.server.requests.filter((r) => r.conversation === "main").length >= n, 20_000)
    await new Promise((r) => setTimeout(r, 400))
  },
  subagent: async (w: World) => {
    await eventually(() => w.server.requests.some((r) => r.conversation.startsWith("subagent")), 20_000)
    await new Promise((r) => setTimeout(r, 400))
  },
  bash: async (w: World) => {
    await eventually(() => processesOf(w).some((p) => p.cmdline.includes("sleep 27")), 20_000)
  },
}

const agentCall = (): Turn => [
  toolUse("Agent", {
    description: "Sub task",
    prompt: `${SUB_MATCH} do it`,
    subagent_type: "general-purpose",
    // The Agent tool runs in the background by default (its turn would end at once).
    run_in_background: false,
  }),
]
const bashCall = (command: string): Turn => [toolUse("Bash", { command, description: "Run it" })]

type Expect = FaultCase["expect"]
const failed = (withinMs: number, history: Expect["history"] = "kept"): Expect => ({
  outcomes: ["Failed"],
  withinMs,
  history,
})
const completed = (withinMs: number): Expect => ({ outcomes: ["Completed"], withinMs, history: "kept" })
const cancelled = (withinMs: number, history: Expect["history"] = "kept"): Expect => ({
  outcomes: ["Cancelled"],
  withinMs,
  history,
})

/** Model faults: the first prompt's requests answered with errors, stalls and cuts. */
const modelCases: FaultCase[] = [
  ...([429, 500, 529] as const).flatMap((status): FaultCase[] => [
    {
      name: `model ${status} before the first token, every attempt`,
      first: [error(status), error(status)],
      until: at.written,
      action: "none",
      expect: failed(15_000),
    },
    {
      name: `model ${status} before the first token, once`,
      first: [status === 529 ? overloaded() : error(status)],
      until: at.written,
      action: "none",
      expect: completed(15_000),
    },
  ]),
  {
    name: "model hangs before its headers, every attempt",
    first: [hang(), hang()],
    until: at.written,
    action: "none",
    expect: failed(20_000),
  },
  {
    name: "model cut before the first token, every attempt",
    first: [[cut()]],
    firstRest: [cut()],
    until: at.written,
    action: "none",
    expect: failed(15_000),
  },
  {
    name: "model stalls after message_start",
    first: [[stall(FOREVER)]],
    until: at.written,
    action: "none",
    fast: true,
    expect: failed(12_000),
  },
  {
    name: "model stalls after message_start, cancel",
    first: [[stall(FOREVER)]],
    until: at.request(1),
    action: "cancel",
    expect: cancelled(4_000),
  },
  {
    name: "model stalls after message_start, close",
    first: [[stall(FOREVER)]],
    until: at.request(1),
    action: "close",
    expect: cancelled(4_000),
  },
  {
    name: "model cut mid-text, once",
    first: [[midBlock(text(LONG), 1, cut())]],
    until: at.written,
    action: "none",
    expect: completed(15_000),
  },
  {
    name: "model cut mid-text, every streamed attempt",
    first: [[midBlock(text(LONG), 1, cut())]],
    firstRest: [midBlock(text(LONG), 1, cut())],
    until: at.written,
    action: "none",
    expect: completed(15_000),
  },
  {
    name: "model stalls 1 s mid-text",
    first: [[midBlock(text(LONG), 1, stall(1_000))]],
    until: at.written,
    action: "none",
    expect: completed(15_000),
  },
  {
    name: "model stalls mid-text",
    first: [[midBlock(text(LONG), 1, stall(FOREVER))]],
    until: at.text,
    action: "none",
    expect: failed(8_000),
  },
  {
    name: "model stalls mid-text, cancel",
    first: [[midBlock(text(LONG), 1, stall(FOREVER))]],
    until: at.text,
    action: "cancel",
    expect: cancelled(4_000),
  },
  {
    name: "model stalls mid-text, close",
    first: [[midBlock(text(LONG), 1, stall(FOREVER))]],
    until: at.text,
    action: "close",
    expect: cancelled(4_000),
  },
  {
    name: "model cut mid tool input, once",
    first: [
      [midBlock(toolUse("Bash", { command: "echo one", description: "Say one" }), 1, cut())],
      bashCall("echo one"),
    ],
    until: at.written,
    action: "none",
    expect: completed(20_000),
  },
  {
    name: "model stalls mid tool input",
    first: [[midBlock(toolUse("Bash", { command: "echo one", description: "Say one" }), 1, stall(FOREVER))]],
    until: at.request(1),
    action: "none",
    expect: failed(8_000),
  },
  {
    name: "model stalls mid tool input, cancel",
    first: [[midBlock(toolUse("Bash", { command: "echo one", description: "Say one" }), 1, stall(FOREVER))]],
    until: at.request(1),
    action: "cancel",
    expect: cancelled(4_000),
  },
  {
    name: "model 500 after a tool call, every attempt",
    first: [bashCall("echo one"), serverError(), serverError()],
    until: at.written,
    action: "none",
    expect: failed(20_000),
  },
  {
    name: "model stalls after a tool call",
    first: [bashCall("echo one"), [stall(FOREVER)]],
    until: at.request(2),
    action: "none",
    expect: failed(8_000),
  },
  {
    name: "model stalls after a tool call, cancel",
    first: [bashCall("echo one"), [stall(FOREVER)]],
    until: at.request(2),
    action: "cancel",
    expect: cancelled(4_000),
  },
  {
    name: "model cut after a tool call, once",
    first: [bashCall("echo one"), [cut()]],
    until: at.written,
    action: "none",
    expect: completed(20_000),
  },
  {
    name: "subagent's model 500, every attempt",
    first: [agentCall()],
    subagent: [serverError(), serverError()],
    until: at.written,
    action: "none",
    expect: completed(25_000),
  },
  {
    name: "subagent's model stalls",
    first: [agentCall()],
    subagent: [[stall(FOREVER)]],
    until: at.subagent,
    action: "none",
    expect: failed(8_000),
  },
  {
    name: "subagent's model stalls, cancel",
    first: [agentCall()],
    subagent: [[stall(FOREVER)]],
    until: at.subagent,
    action: "cancel",
    expect: cancelled(4_000),
  },
  {
    name: "subagent's model stalls, close",
    first: [agentCall()],
    subagent: [[stall(FOREVER)]],
    until: at.subagent,
    action: "close",
    expect: cancelled(4_000),
  },
  {
    name: "subagent's model cut, once",
    first: [agentCall()],
    subagent: [[cut()], [text("sub answer")]],
    until: at.written,
    action: "none",
    expect: completed(25_000),
  },
]

interface Point {
  readonly name: string
  readonly first: ReadonlyArray<Turn>
  readonly subagent?: ReadonlyArray<Turn>
  readonly approval?: "supervised"
  readonly until: FaultCase["until"]
  /** Is a frozen CLI here silent (a turn waiting on the model), or busy (a tool, the user)? */
  readonly frozenIsSilent: boolean
  /** Killed here, the first prompt is not stored yet. */
  readonly unstored?: boolean
}

const points: Point[] = [
  {
    name: "before the first turn is stored",
    first: [[stall(FOREVER)]],
    until: at.written,
    frozenIsSilent: true,
    unstored: true,
  },
  {
    name: "mid-stream",
    first: [[midBlock(text(LONG), 1, stall(FOREVER))]],
    until: at.text,
    frozenIsSilent: true,
  },
  {
    name: "with an approval pending",
    first: [bashCall("touch approved.txt")],
    approval: "supervised",
    until: at.approval,
    frozenIsSilent: false,
  },
  {
    name: "while a subagent runs",
    first: [agentCall()],
    subagent: [[midBlock(text(LONG), 1, stall(FOREVER))]],
    until: at.subagent,
    frozenIsSilent: true,
  },
  {
    name: "while a Bash command runs",
    first: [bashCall("echo started && sleep 27")],
    until: at.bash,
    frozenIsSilent: false,
  },
]

const cliCase = (signal: "SIGKILL" | "SIGSTOP", point: Point, action: Action): FaultCase => {
  const killed = signal === "SIGKILL"
  // Unstored and killed: the CLI never wrote the conversation (a frozen one is killed by the plugin, likewise).
  const history: Expect["history"] = point.unstored ? "either" : "kept"
  const expect: Expect =
    action === "close"
      ? // Closed at once after the signal: resumeSession opens what the CLI stored, maybe nothing yet.
        cancelled(4_000, "either")
      : action === "cancel"
        ? { outcomes: killed ? ["Cancelled", "Failed"] : ["Cancelled"], withinMs: 4_500, history }
        : killed
          ? // Killed before it read the prompt, the CLI's prompt is written to the next process instead.
            {
              outcomes: point.unstored ? ["Failed", "Completed"] : ["Failed"],
              withinMs: point.unstored ? 15_000 : 2_000,
              history,
            }
          : failed(8_000, history)
  return {
    name: `CLI ${killed ? "killed" : "frozen"} ${point.name}${action === "none" ? "" : `, ${action}`}`,
    first: point.first,
    ...(point.subagent ? { subagent: point.subagent } : {}),
    ...(point.approval ? { approval: point.approval } : {}),
    until: point.until,
    signal,
    action,
    fast:
      (killed && point.unstored === true && action === "none") ||
      (!killed && point.name === "mid-stream" && action === "cancel"),
    expect,
  }
}

const cliCases: FaultCase[] = [
  {
    name: "CLI killed during initialize",
    until: at.written,
    signal: "SIGKILL",
    duringInitialize: true,
    action: "none",
    expect: { outcomes: ["launch failed"], withinMs: 3_000, history: "either" },
  },
  {
    name: "CLI killed during initialize, close",
    until: at.written,
    signal: "SIGKILL",
    duringInitialize: true,
    action: "close",
    expect: { outcomes: ["launch failed"], withinMs: 3_000, history: "either" },
  },
  {
    name: "CLI frozen during initialize, close",
    until: at.written,
    signal: "SIGSTOP",
    duringInitialize: true,
    action: "close",
    fast: true,
    expect: { outcomes: ["launch failed"], withinMs: 3_000, history: "either" },
  },
  ...points.flatMap((point) =>
    (["none", "cancel", "close"] as const).map((action) => cliCase("SIGKILL", point, action)),
  ),
  ...points.flatMap((point) =>
    (point.frozenIsSilent ? (["none", "cancel", "close"] as const) : (["cancel", "close"] as const)).map(
      (action) => cliCase("SIGSTOP", point, action),
    ),
  ),
]

/** Prompts during a run and right after a cancel. */
const promptCases: FaultCase[] = [
  {
    name: "a prompt during a run steers it",
    first: [[midBlock(text(LONG), 1, stall(1_500))], [text("after the steer")]],
    until: at.text,
    action: "steer",
    expect: completed(15_000),
  },
  {
    name: "a prompt right after a cancel gets its own answer",
    first: [[midBlock(text(LONG), 1, stall(FOREVER))]],
    until: at.text,
    action: "cancel+prompt",
    fast: true,
    expect: cancelled(4_000),
  },
  {
    name: "a steer then a cancel: the CLI's own turn for the steer ends",
    first: [[midBlock(text(LONG), 1, stall(FOREVER))]],
    until: at.text,
    action: "steer+cancel",
    fast: true,
    expect: cancelled(4_000),
  },
]

export const FAULT_CASES: ReadonlyArray<FaultCase> = [...modelCases, ...cliCases, ...promptCases]
