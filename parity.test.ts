/**
 * Live against stored, per recording: the events the live mapper gives for a
 * recorded session, folded into transcript items the way a host keeps them,
 * against what `readSession` rebuilds from the same session's stored
 * transcript (testdata/<scenario>/projects/). Where the two disagree today the
 * difference is a named exception below, each with its reason; anything else
 * that differs fails.
 *
 * Items are compared per scope (the main chat, then each task) without ids:
 * live ids are stream keys, stored ids are record uuids, and a task's place
 * among its parent's items is a rendering choice (stored puts it after its
 * spawning call).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { NodeFsLayer } from "./testkit/node-fs.ts"
import { readSession } from "./history.ts"
import type { AgentEvent, TaskInfo, ToolCall, TranscriptItem } from "./sdk/protocol.ts"

/** One item as both sides must agree on it, as a line of text. */
type Line = string
/** Items per scope: "" is the main chat, else a task id. */
type Scopes = Map<string, Line[]>

const callLine = (c: ToolCall): Line =>
  `tool_call ${c.name} ${c.kind} ${JSON.stringify(c.title)} ${c.status}${c.exit_code === undefined ? "" : ` exit ${c.exit_code}`}`
const taskLine = (t: TaskInfo): Line =>
  `task ${t.id} ${t.status} ${JSON.stringify(t.title)}${t.parent_task_id ? ` in ${t.parent_task_id}` : ""}${t.background ? " background" : ""}${t.summary === undefined ? "" : ` summary ${JSON.stringify(t.summary)}`}`

const push = (scopes: Scopes, scope: string, line: Line) => {
  const list = scopes.get(scope)
  if (list === undefined) scopes.set(scope, [line])
  else list.push(line)
}

/** The stored side: readSession's items, nested task items flattened into their own scopes. */
const storedScopes = (
  items: ReadonlyArray<TranscriptItem>,
  scopes: Scopes = new Map(),
  scope = "",
): Scopes => {
  scopes.set(scope, scopes.get(scope) ?? [])
  for (const item of items) {
    switch (item.type) {
      case "user":
        push(scopes, scope, `user ${JSON.stringify(item.text)}`)
        break
      case "assistant":
        push(scopes, scope, `assistant ${JSON.stringify(item.text)}`)
        break
      case "reasoning":
        push(scopes, scope, `reasoning ${JSON.stringify(item.text)}`)
        break
      case "tool_call":
        push(scopes, scope, callLine(item.call))
        break
      case "plan":
        push(scopes, scope, `plan ${JSON.stringify(item.entries)}`)
        break
      case "compacted":
        push(scopes, scope, `compacted ${JSON.stringify(item.summary)}`)
        break
      case "notice":
        push(scopes, scope, `notice ${item.level} ${JSON.stringify(item.text)}`)
        break
      case "task":
        push(scopes, scope, taskLine(item.task))
        storedScopes(item.items, scopes, item.task.id)
        break
    }
  }
  return scopes
}

/**
 * The live side: events folded as a host folds them. Deltas of one item id
 * join into one item; a finished call replaces its started one; a task's item
 * is its last snapshot, placed where it first appeared.
 */
const liveScopes = (events: ReadonlyArray<AgentEvent>): Scopes => {
  type Slot = { scope: string; line: Line }
  const order: Slot[] = []
  const text = new Map<string, { slot: Slot; kind: string; text: string }>()
  const calls = new Map<string, Slot>()
  const tasks = new Map<string, Slot>()
  const add = (scope: string, line: Line): Slot => {
    const slot = { scope, line }
    order.push(slot)
    return slot
  }
  for (const e of events) {
    const scope = e.task_id ?? ""
    switch (e.type) {
      case "TextDelta":
      case "ReasoningDelta": {
        const kind = e.type === "TextDelta" ? "assistant" : "reasoning"
        const key = `${scope}\u0000${e.item_id}`
        const known = text.get(key)
        if (known === undefined) text.set(key, { slot: add(scope, ""), kind, text: e.text })
        else known.text += e.text
        break
      }
      case "ToolCallStarted":
        calls.set(e.call.id, add(scope, callLine(e.call)))
        break
      case "ToolCallFinished": {
        const slot = calls.get(e.call.id)
        if (slot === undefined) calls.set(e.call.id, add(scope, callLine(e.call)))
        else slot.line = callLine(e.call)
        break
      }
      case "Plan":
        add(scope, `plan ${JSON.stringify(e.entries)}`)
        break
      case "Compacted":
        add(scope, `compacted ${JSON.stringify(e.summary)}`)
        break
      case "Notice":
        add(scope, `notice ${e.level} ${JSON.stringify(e.text)}`)
        break
      case "UserMessage":
        add(scope, `user ${JSON.stringify(e.text)}`)
        break
      case "Task": {
        const slot = tasks.get(e.task.id)
        if (slot === undefined) tasks.set(e.task.id, add(e.task.parent_task_id ?? "", taskLine(e.task)))
        else slot.line = taskLine(e.task)
        break
      }
    }
  }
  for (const t of text.values()) t.slot.line = `${t.kind} ${JSON.stringify(t.text)}`
  const scopes: Scopes = new Map([["", []]])
  for (const slot of order)
    if (slot.line !== `assistant ""` && !/^assistant "(\\n|\s)*"$/.test(slot.line))
      push(scopes, slot.scope, slot.line)
  for (const id of tasks.keys()) scopes.set(id, scopes.get(id) ?? [])
  return scopes
}

/**
 * A difference between live and stored that exists today, and why: the lines
 * of one side (main chat unless a scope is named) that match `drop` are left
 * out. Each must drop something, or it is stale and fails.
 */
interface Exception {
  readonly name: string
  readonly reason: string
  readonly side: "live" | "stored"
  readonly scope?: string
  readonly drop: RegExp
}

/** Every recording: the host's own prompts. */
const hostPrompts: Exception = {
  name: "host prompts",
  reason:
    "the host holds the prompts it sent; the CLI echoes no user frame, so live has no main-chat user items",
  side: "stored",
  drop: /^user /,
}

const exceptions: Readonly<Record<string, ReadonlyArray<Exception>>> = {
  api_retry: [
    {
      name: "retry notices",
      reason: "a retried request is a live warning (system/api_retry); the transcript keeps no record of it",
      side: "live",
      drop: /^notice warning "API error \d+; retrying/,
    },
  ],
  interrupt: [
    {
      name: "stop notice",
      reason:
        "stored, the CLI's `[Request interrupted by user]` record reads as a Stopped. notice; live, the run itself ends Cancelled (the session's RunEnded), so the mapper gives no notice in the main chat",
      side: "stored",
      drop: /^notice info "Stopped\."$/,
    },
  ],
  rate_limit: [
    {
      name: "API error text",
      reason:
        "the CLI streams its rate-limit answer as ordinary text (the run fails at `result`); stored, the record is marked isApiErrorMessage and reads as an error notice",
      side: "live",
      drop: /^assistant "You've hit your/,
    },
    {
      name: "API error notice",
      reason: "the same message on the stored side",
      side: "stored",
      drop: /^notice error "You've hit your/,
    },
  ],
  resume: [
    {
      name: "rewound turn (live)",
      reason:
        "the stored chain is the one left after p3's --resume-session-at rewound to answer one: p1's second turn is gone from it",
      side: "live",
      drop: /^assistant "Answer two\."$/,
    },
    {
      name: "rewound turn (stored)",
      reason: "and p3's answer, given after the rewind, is not in p1's live stream",
      side: "stored",
      drop: /^assistant "Answer four \(resumed at answer one\)\."$/,
    },
  ],
}

const apply = (scopes: Scopes, exception: Exception): Scopes =>
  new Map(
    [...scopes].map(([scope, lines]) => [
      scope,
      scope === (exception.scope ?? "") ? lines.filter((l) => !exception.drop.test(l)) : lines,
    ]),
  )

const recordings = readdirSync("testdata")
  .filter((d) => existsSync(`testdata/${d}/stdout.jsonl`) && existsSync(`testdata/${d}/projects`))
  .sort()

/**
 * The live events of the recording's first process: its golden file
 * (events.golden.test.ts holds it equal to what the mapper gives today,
 * workflow following included).
 */
const liveOf = (scenario: string): Scopes => {
  const events: AgentEvent[] = []
  for (const line of readFileSync(`testdata/${scenario}/events.jsonl`, "utf8").split("\n")) {
    if (line.trim() === "") continue
    const value = JSON.parse(line) as AgentEvent | { signal: unknown } | { follow: unknown }
    if ("type" in value) events.push(value)
  }
  return liveScopes(events)
}

/** The recorded session: meta.json's, else the project's one transcript. */
const sessionOf = (scenario: string, project: string): string => {
  const meta = `testdata/${scenario}/meta.json`
  if (existsSync(meta)) return (JSON.parse(readFileSync(meta, "utf8")) as { session_id: string }).session_id
  const files = readdirSync(`testdata/${scenario}/projects/${project}`).filter((f) => f.endsWith(".jsonl"))
  if (files.length !== 1) throw new Error(`${scenario}: ${files.length} transcripts and no meta.json`)
  return (files[0] as string).slice(0, -".jsonl".length)
}

const storedOf = async (scenario: string): Promise<Scopes> => {
  const [project = ""] = readdirSync(`testdata/${scenario}/projects`)
  const cwd = project.replace(/-/g, "/")
  const sessionId = sessionOf(scenario, project)
  const read = await Effect.runPromise(
    readSession(`testdata/${scenario}`, cwd, sessionId).pipe(Effect.provide(NodeFsLayer)),
  )
  if (read === null) throw new Error(`${scenario}: no stored session ${sessionId}`)
  return storedScopes(read.items)
}

const plain = (scopes: Scopes) => Object.fromEntries(scopes)

describe.each(recordings)("%s", (scenario) => {
  it("live events fold into the stored transcript, but for the named exceptions", async () => {
    let live = liveOf(scenario)
    let stored = await storedOf(scenario)
    for (const exception of [hostPrompts, ...(exceptions[scenario] ?? [])]) {
      const before = exception.side === "live" ? live : stored
      const after = apply(before, exception)
      expect(JSON.stringify(plain(after)), `exception "${exception.name}" drops nothing: stale`).not.toBe(
        JSON.stringify(plain(before)),
      )
      if (exception.side === "live") live = after
      else stored = after
    }
    expect(plain(live)).toEqual(plain(stored))
  })
})
