/**
 * Terminal rendering of agent events and stored transcript items: text in,
 * text out, no I/O. One renderer per chat keeps what it needs to lay out the
 * next event (the open text stream, the tasks and their depth, the last rate
 * limits), so live events and `read_session` items look the same.
 */
import { styleText } from "node:util"
import type {
  AgentEvent,
  PlanEntry,
  Question,
  RunUsage,
  SkillInfo,
  TaskInfo,
  TaskStatus,
  ToolCall,
  ToolStatus,
  TranscriptItem,
  UsageLimits,
} from "../../sdk/protocol.ts"

type Format = Parameters<typeof styleText>[0]

export interface RenderOptions {
  /** ANSI colour and styles; off for pipes, NO_COLOR and tests that read plain text. */
  readonly color: boolean
  /** Lines of tool output shown before "… n more lines". Default 8. */
  readonly outputLines?: number
  /** Lines of a written file shown. Default 12. */
  readonly fileLines?: number
  /** Clock for reset times (tests). Default: the real one. */
  readonly now?: () => Date
}

export interface Renderer {
  /** The text one event adds to the screen ("" when it shows nothing). */
  readonly event: (event: AgentEvent) => string
  /** A stored transcript, laid out as the live events would be. */
  readonly transcript: (items: ReadonlyArray<TranscriptItem>) => string
  /** The task tree as it stands (empty string when there are no tasks). */
  readonly taskTree: () => string
  /** End an open text stream (before the front end writes its own lines). */
  readonly flush: () => string
  /** Tasks seen so far, by id (for /tasks and /stop). */
  readonly tasks: () => ReadonlyArray<TaskInfo>
  /** The last rate limits reported. */
  readonly limits: () => UsageLimits | undefined
}

export const PLAN_GLYPH: Readonly<Record<PlanEntry["status"], string>> = {
  pending: "☐",
  in_progress: "◐",
  completed: "☑",
}

const TOOL_GLYPH: Readonly<Record<ToolStatus, string>> = {
  Running: "⏺",
  Completed: "✓",
  Failed: "✗",
  Cancelled: "⊘",
}

const TASK_GLYPH: Readonly<Record<TaskStatus, string>> = {
  Running: "◐",
  Waiting: "⏸",
  Completed: "☑",
  Failed: "✗",
  Cancelled: "⊘",
}

const STATUS_COLOR: Readonly<Record<TaskStatus | ToolStatus, Format>> = {
  Running: "cyan",
  Waiting: "yellow",
  Completed: "green",
  Failed: "red",
  Cancelled: "yellow",
}

// ---------------------------------------------------------------------------
// Small formatting helpers (exported for the front end and tests)

/** 1234 → "1.2k", 1000000 → "1M". */
export const compactNumber = (n: number): string => {
  if (n < 1000) return String(Math.round(n))
  if (n < 1_000_000) return `${trimZero((n / 1000).toFixed(n < 10_000 ? 1 : 0))}k`
  return `${trimZero((n / 1_000_000).toFixed(1))}M`
}
const trimZero = (s: string) => s.replace(/\.0$/, "")

export const duration = (ms: number): string =>
  ms < 1000
    ? `${Math.round(ms)}ms`
    : ms < 60_000
      ? `${(ms / 1000).toFixed(1)}s`
      : `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`

/** An ISO time as local HH:MM when it is within a day, else a short date and time. */
export const resetTime = (iso: string, now: Date): string => {
  const at = new Date(iso)
  if (Number.isNaN(at.getTime())) return iso
  const hhmm = `${String(at.getHours()).padStart(2, "0")}:${String(at.getMinutes()).padStart(2, "0")}`
  if (Math.abs(at.getTime() - now.getTime()) < 24 * 3600_000) return hhmm
  return `${at.toLocaleDateString("en-GB", { day: "numeric", month: "short" })} ${hhmm}`
}

/** Remove ANSI escape sequences (tests, captured screens). */
export const stripAnsi = (text: string): string =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escapes is the point
  text.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, "")

const firstLine = (text: string) => text.split("\n", 1)[0] ?? ""

const inputText = (input: unknown): string => {
  if (input === undefined || input === null) return ""
  if (typeof input === "string") return input
  const o = input as Record<string, unknown>
  for (const key of ["command", "file_path", "path", "url", "pattern", "prompt", "description"])
    if (typeof o[key] === "string") return o[key] as string
  return JSON.stringify(input)
}

// ---------------------------------------------------------------------------

export const makeRenderer = (options: RenderOptions): Renderer => {
  const outputLines = options.outputLines ?? 8
  const fileLines = options.fileLines ?? 12
  const now = options.now ?? (() => new Date())
  const paint = (format: Format, text: string) =>
    options.color && text !== "" ? styleText(format, text, { validateStream: false }) : text
  const dim = (text: string) => paint("dim", text)

  const tasks = new Map<string, TaskInfo>()
  /** Task ids seen in the current run (the tree printed at its end). */
  const runTasks = new Set<string>()
  let limits: UsageLimits | undefined
  /** The open text or reasoning stream: its item and whether the cursor sits at a line start. */
  let stream: { key: string; kind: "text" | "reasoning"; taskId?: string } | undefined
  let atLineStart = true

  const depthOf = (taskId: string | undefined): number => {
    let depth = 0
    const seen = new Set<string>()
    for (let id = taskId; id !== undefined && !seen.has(id); id = tasks.get(id)?.parent_task_id) {
      seen.add(id)
      depth++
    }
    return depth
  }
  const gutter = (depth: number) => (depth === 0 ? "" : dim("│ ".repeat(depth)))

  /** End an open stream so the next block starts on its own line. */
  const flush = (): string => {
    stream = undefined
    if (atLineStart) return ""
    atLineStart = true
    return "\n"
  }

  /** Whole lines at a depth, each behind the task gutter. */
  const block = (lines: ReadonlyArray<string>, depth = 0): string => {
    const head = flush()
    if (lines.length === 0) return head
    return head + lines.map((line) => `${gutter(depth)}${line}\n`).join("")
  }

  /** Stream a chunk, the gutter written after every newline. */
  const streamChunk = (key: string, kind: "text" | "reasoning", taskId: string | undefined, text: string) => {
    let out = ""
    if (stream?.key !== key) {
      out += flush()
      if (kind === "reasoning")
        out += `${gutter(depthOf(taskId))}${paint(["dim", "italic"], "✻ Thinking…")}\n`
      stream = { key, kind, ...(taskId !== undefined && { taskId }) }
    }
    const depth = depthOf(taskId)
    const style = (s: string) => (kind === "reasoning" ? paint(["dim", "italic"], s) : s)
    const parts = text.split("\n")
    parts.forEach((part, i) => {
      if (i > 0) {
        out += "\n"
        atLineStart = true
      }
      if (part === "") return
      if (atLineStart) out += gutter(depth) + (kind === "reasoning" ? "  " : "")
      out += style(part)
      atLineStart = false
    })
    return out
  }

  // -- tool calls ------------------------------------------------------------

  const callHeader = (call: ToolCall): string => {
    const title = call.title.trim()
    const name = paint("bold", call.name)
    const rest =
      title === "" || title === call.name
        ? ""
        : title.startsWith(`${call.name} `)
          ? title.slice(call.name.length + 1)
          : title
    const shown = call.kind === "execute" && call.name === "Bash" && rest !== "" ? `$ ${rest}` : rest
    return `${paint(STATUS_COLOR[call.status], TOOL_GLYPH.Running)} ${name}${shown ? ` ${shown}` : ""}`
  }

  const diffLines = (diff: string): string[] =>
    diff
      .replace(/\n$/, "")
      .split("\n")
      // Edits are diffs of fragments: the end-of-file markers say nothing about the file.
      .filter((line) => !line.startsWith("Index:") && !/^=+$/.test(line) && !line.startsWith("\\ No newline"))
      .map((line) =>
        line.startsWith("+++") || line.startsWith("---")
          ? paint("bold", line)
          : line.startsWith("@@")
            ? paint("cyan", line)
            : line.startsWith("+")
              ? paint("green", line)
              : line.startsWith("-")
                ? paint("red", line)
                : line.startsWith("\\")
                  ? dim(line)
                  : line,
      )

  const newFileLines = (text: string): string[] => {
    const lines = text.replace(/\n$/, "").split("\n")
    const shown = lines.slice(0, fileLines).map((line) => paint("green", `+${line}`))
    if (lines.length > fileLines) shown.push(dim(`… ${lines.length - fileLines} more lines`))
    return shown
  }

  const callStarted = (call: ToolCall): string[] => {
    const lines = [callHeader(call)]
    if (call.diff) lines.push(...diffLines(call.diff).map((l) => `  ${l}`))
    else if (call.new_text !== undefined) lines.push(...newFileLines(call.new_text).map((l) => `  ${l}`))
    return lines
  }

  const outputOf = (call: ToolCall): string | undefined => {
    if (call.output_text !== undefined) return call.output_text
    if (typeof call.output === "string") return call.output
    return undefined
  }

  const callFinished = (call: ToolCall): string[] => {
    const glyph = paint(STATUS_COLOR[call.status], TOOL_GLYPH[call.status])
    const exit = call.exit_code === undefined ? "" : ` · exit ${call.exit_code}`
    const head = `  ⎿ ${glyph} ${paint(STATUS_COLOR[call.status], call.status)}${exit}`
    // The plan and the question show themselves; their raw results add nothing.
    if (call.kind === "think" || call.name === "AskUserQuestion" || call.kind === "task")
      return call.status === "Completed" ? [] : [head]
    const text = outputOf(call)?.replace(/\s+$/, "")
    if (!text) return [head]
    const lines = text.split("\n")
    const shown = lines.slice(0, outputLines).map((l) => `    ${dim(l)}`)
    if (lines.length > outputLines) shown.push(`    ${dim(`… ${lines.length - outputLines} more lines`)}`)
    return [head, ...shown]
  }

  // -- plans, tasks, prompts -------------------------------------------------

  const planLines = (entries: ReadonlyArray<PlanEntry>): string[] => [
    paint("bold", "Plan"),
    ...entries.map((e) => {
      const glyph = PLAN_GLYPH[e.status]
      const text = e.status === "in_progress" ? (e.active_form ?? e.content) : e.content
      const painted =
        e.status === "completed"
          ? paint("green", `${glyph} ${text}`)
          : e.status === "in_progress"
            ? paint("cyan", `${glyph} ${text}`)
            : `${glyph} ${text}`
      return `  ${painted}`
    }),
  ]

  const taskLabel = (task: TaskInfo): string => {
    const glyph = paint(STATUS_COLOR[task.status], TASK_GLYPH[task.status])
    const facts = [
      task.phase ? `[${task.phase}]` : undefined,
      task.name,
      task.model,
      paint(STATUS_COLOR[task.status], task.status),
      task.background ? "background" : undefined,
      task.usage?.tool_uses !== undefined ? `${task.usage.tool_uses} tool uses` : undefined,
      task.usage?.used_tokens !== undefined ? `${compactNumber(task.usage.used_tokens)} tokens` : undefined,
      task.usage?.duration_ms !== undefined ? duration(task.usage.duration_ms) : undefined,
    ].filter((f): f is string => f !== undefined && f !== "")
    const kind = task.workflow ? "Workflow" : "Agent"
    return `${glyph} ${paint("bold", `${kind}: ${task.title}`)} ${dim(`· ${facts.join(" · ")}`)}`
  }

  const taskUpdate = (previous: TaskInfo | undefined, task: TaskInfo): string[] => {
    const lines: string[] = []
    // Status changes only: the task's own tool calls already show what it is doing.
    if (!previous || previous.status !== task.status) lines.push(taskLabel(task))
    if (task.workflow?.phases.length && !previous?.workflow?.phases.length)
      lines.push(dim(`  phases: ${task.workflow.phases.map((p) => p.title).join(" → ")}`))
    if (task.summary && task.summary !== previous?.summary && task.status !== "Running")
      lines.push(
        ...task.summary
          .split("\n")
          .slice(0, 4)
          .map((l) => `  ${dim(l)}`),
      )
    if (task.workflow?.result && task.workflow.result !== previous?.workflow?.result)
      lines.push(`  ${dim(firstLine(task.workflow.result))}`)
    return lines
  }

  const taskTree = (only?: ReadonlySet<string>): string => {
    const all = [...tasks.values()].filter((t) => !only || only.has(t.id))
    if (all.length === 0) return ""
    const ids = new Set(all.map((t) => t.id))
    const children = (parent: string | undefined) =>
      all.filter(
        (t) =>
          (t.parent_task_id !== undefined && ids.has(t.parent_task_id) ? t.parent_task_id : undefined) ===
          parent,
      )
    const lines = [paint("bold", "Tasks")]
    const walk = (parent: string | undefined, indent: string) => {
      const kids = children(parent)
      kids.forEach((task, i) => {
        const last = i === kids.length - 1
        lines.push(`${indent}${dim(last ? "└─ " : "├─ ")}${taskLabel(task)}`)
        walk(task.id, `${indent}${last ? "   " : dim("│  ")}`)
      })
    }
    walk(undefined, "  ")
    return lines.map((l) => `${l}\n`).join("")
  }

  const approvalLines = (e: Extract<AgentEvent, { type: "ApprovalRequested" }>): string[] => {
    const what = e.title && e.title !== e.tool_name ? e.title : inputText(e.input)
    const lines = [
      `${paint(["yellow", "bold"], "? Allow")} ${paint("bold", e.tool_name)}${what ? `: ${what}` : ""}`,
    ]
    if (e.description && e.description !== what) lines.push(`  ${dim(e.description)}`)
    lines.push(
      `  ${paint("bold", "a")} allow · ${paint("bold", "d")} deny${e.can_always === false ? "" : ` · ${paint("bold", "A")} always allow for this session`}`,
    )
    return lines
  }

  const questionLines = (questions: ReadonlyArray<Question>): string[] =>
    questions.flatMap((q) => [
      `${paint(["yellow", "bold"], "?")} ${q.header ? `${paint("bold", q.header)}: ` : ""}${q.question}`,
      ...q.options.map(
        (o, i) =>
          `  ${paint("bold", `${i + 1}.`)} ${o.label}${o.description ? dim(` — ${o.description}`) : ""}`,
      ),
      `  ${dim(q.multi_select ? "numbers separated by commas, or type your own answer" : "a number, or type your own answer")}`,
    ])

  const usageLine = (outcome: string, usage: RunUsage | undefined, error: string | undefined): string[] => {
    const color: Format = outcome === "Completed" ? "green" : outcome === "Failed" ? "red" : "yellow"
    const facts: string[] = []
    if (usage) {
      if (usage.duration_ms !== undefined) facts.push(duration(usage.duration_ms))
      if (usage.num_turns !== undefined)
        facts.push(`${usage.num_turns} turn${usage.num_turns === 1 ? "" : "s"}`)
      const thinking = usage.thinking_tokens ? ` (${compactNumber(usage.thinking_tokens)} thinking)` : ""
      facts.push(
        `${compactNumber(usage.input_tokens)} in / ${compactNumber(usage.output_tokens)} out${thinking}`,
      )
      if (usage.cache_read_tokens) facts.push(`${compactNumber(usage.cache_read_tokens)} cached`)
      if (usage.context_window) {
        const used = usage.context_used ?? 0
        const pct = Math.round((used / usage.context_window) * 100)
        facts.push(`context ${compactNumber(used)}/${compactNumber(usage.context_window)} (${pct}%)`)
      }
      if (usage.cost_usd !== undefined) facts.push(`$${usage.cost_usd.toFixed(4)}`)
    }
    const lines = [`${paint(color, `── ${outcome}`)}${facts.length ? dim(` · ${facts.join(" · ")}`) : ""}`]
    if (error) lines.push(paint("red", `   ${firstLine(error)}`))
    lines.push(dim(`   ${limitsText(limits)}`))
    return lines
  }

  const limitsText = (l: UsageLimits | undefined): string => {
    if (!l || l.windows.length === 0) return "rate limits: none reported"
    return `rate limits: ${l.windows
      .map((w) => {
        const reset = w.resets_at ? ` (resets ${resetTime(w.resets_at, now())})` : ""
        const flag = w.status === "rejected" ? " REJECTED" : w.status === "allowed_warning" ? " warning" : ""
        return `${w.label} ${Math.round(w.used * 100)}%${flag}${reset}`
      })
      .join(" · ")}`
  }

  /** A count, not the list: the CLI brings dozens of commands; /skills lists them. */
  const skillsLines = (skills: ReadonlyArray<SkillInfo>): string[] => {
    const offered = skills.filter((s) => !s.hidden_from_picker).length
    return [dim(`skills: ${offered === 0 ? "none" : `${offered} available (/skills lists them)`}`)]
  }

  const noticeLine = (level: "info" | "warning" | "error", text: string): string =>
    level === "error"
      ? paint("red", `✗ ${text}`)
      : level === "warning"
        ? paint("yellow", `! ${text}`)
        : dim(`i ${text}`)

  // -- events ----------------------------------------------------------------

  const event = (e: AgentEvent): string => {
    const depth = depthOf(e.task_id)
    switch (e.type) {
      case "RunStarted":
        runTasks.clear()
        return flush()
      case "TextDelta":
        return streamChunk(e.item_id, "text", e.task_id, e.text)
      case "ReasoningDelta":
        return streamChunk(e.item_id, "reasoning", e.task_id, e.text)
      case "UserMessage":
        return block([`${paint("cyan", "›")} ${e.text}`], depth)
      case "ToolCallStarted":
        return block(callStarted(e.call), depth)
      case "output_delta": {
        const text = e.text.replace(/\n$/, "")
        return text === ""
          ? ""
          : block(
              text.split("\n").map((l) => `    ${dim(l)}`),
              depth,
            )
      }
      case "ToolCallFinished":
        return block(callFinished(e.call), depth)
      case "Plan":
        return block(planLines(e.entries), depth)
      case "Task": {
        const previous = tasks.get(e.task.id)
        tasks.set(e.task.id, e.task)
        runTasks.add(e.task.id)
        return block(taskUpdate(previous, e.task), depthOf(e.task.parent_task_id))
      }
      case "ApprovalRequested":
        return block(approvalLines(e), depth)
      case "approval_resolved":
        return e.reason ? block([dim(`  ⎿ approval withdrawn: ${e.reason}`)], depth) : ""
      case "QuestionAsked":
        return block(questionLines(e.questions), depth)
      case "question_resolved":
        return e.reason ? block([dim(`  ⎿ question withdrawn: ${e.reason}`)], depth) : ""
      case "Compacted":
        return block([
          paint("cyan", "⟳ Context compacted"),
          ...e.summary
            .split("\n")
            .slice(0, 3)
            .map((l) => `  ${dim(l)}`),
        ])
      case "Skills":
        return block(skillsLines(e.skills))
      case "UsageLimits":
        limits = e.limits
        return ""
      case "usage_blocked":
        return block([
          paint("red", `✗ Usage limit reached${e.window ? ` (${e.window})` : ""}: ${e.message}`),
          ...(e.resets_at ? [dim(`  resets ${resetTime(e.resets_at, now())}`)] : []),
        ])
      case "input_delivery":
        return e.state === "picked_up"
          ? ""
          : block([dim(`  ⎿ input ${e.state.replace(/_/g, " ")}${e.reason ? `: ${e.reason}` : ""}`)])
      case "recovery_identity":
        return ""
      case "Notice":
        return block([noticeLine(e.level, e.text)], depth)
      case "SessionInfo": {
        const facts = [
          e.info.title,
          e.info.model && `model ${e.info.model}`,
          e.info.permission_mode && `mode ${e.info.permission_mode}`,
        ]
        const shown = facts.filter((f): f is string => typeof f === "string" && f !== "")
        return shown.length ? block([dim(`session: ${shown.join(" · ")}`)]) : ""
      }
      case "RunEnded": {
        const tree = runTasks.size > 0 ? taskTree(runTasks) : ""
        return block(usageLine(e.outcome, e.usage, e.error)) + tree
      }
    }
  }

  // -- stored transcripts ----------------------------------------------------

  const items = (list: ReadonlyArray<TranscriptItem>, depth: number): string => {
    let out = ""
    for (const item of list) {
      switch (item.type) {
        case "user":
          out += block(
            [
              `${paint(["cyan", "bold"], "›")} ${paint("bold", item.text)}${item.images ? dim(` [${item.images} image(s)]`) : ""}`,
            ],
            depth,
          )
          break
        case "assistant":
          out += block(item.text.replace(/\n+$/, "").split("\n"), depth)
          break
        case "reasoning":
          out += block(
            [
              paint(["dim", "italic"], "✻ Thinking…"),
              ...item.text.split("\n").map((l) => `  ${paint(["dim", "italic"], l)}`),
            ],
            depth,
          )
          break
        case "tool_call":
          out += block([...callStarted(item.call), ...callFinished(item.call)], depth)
          break
        case "plan":
          out += block(planLines(item.entries), depth)
          break
        case "task":
          tasks.set(item.task.id, item.task)
          out += block(taskUpdate(undefined, item.task), depth)
          out += items(item.items, depth + 1)
          break
        case "compacted":
          out += block(
            [
              paint("cyan", "⟳ Context compacted"),
              ...item.summary
                .split("\n")
                .slice(0, 3)
                .map((l) => `  ${dim(l)}`),
            ],
            depth,
          )
          break
        case "notice":
          out += block([noticeLine(item.level, item.text)], depth)
          break
      }
    }
    return out
  }

  return {
    event,
    transcript: (list) => items(list, 0) + flush(),
    taskTree: () => taskTree(),
    flush,
    tasks: () => [...tasks.values()],
    limits: () => limits,
  }
}
