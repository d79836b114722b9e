/**
 * Terminal rendering of agent events and stored transcript items: text in,
 * text out, no I/O. One renderer per chat keeps what it needs to lay out the
 * next event (the open text stream, the tasks and their depth, the last rate
 * limits), so live events and `read_session` items look the same.
 */
import { styleText } from "node:util"
import stringWidth from "string-width"
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
import { MarkdownStream, makeMarkdown } from "./markdown.ts"

type Format = Parameters<typeof styleText>[0]

export interface RenderOptions {
  /** ANSI colour and styles; off for pipes, NO_COLOR and tests that read plain text. */
  readonly color: boolean
  /** Lines of tool output shown before "… n more lines". Default 8. */
  readonly outputLines?: number
  /** Lines of a written file shown. Default 12. */
  readonly fileLines?: number
  /** Lines of a diff shown. Default 40. */
  readonly diffLines?: number
  /** Lines of thinking shown before the rest is folded. Default 8. */
  readonly thinkingLines?: number
  /** The terminal's width, for wrapping thinking and laying out markdown. Default 100. */
  readonly width?: () => number
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
  /** The whole text of fold `n` (1-based), or undefined when there is none. */
  readonly expand: (n: number) => string | undefined
  /** How many folds there are. */
  readonly folds: () => number
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

/** Word-wrap one plain line to `width` columns (a word longer than the width is cut). */
export const wrapLine = (line: string, width: number): string[] => {
  if (width < 8 || stringWidth(line) <= width) return [line]
  const rows: string[] = []
  let row = ""
  for (const word of line.split(/(\s+)/)) {
    if (word === "") continue
    if (stringWidth(row + word) <= width) {
      row += word
      continue
    }
    if (row.trim() !== "") rows.push(row.replace(/\s+$/, ""))
    row = /^\s+$/.test(word) ? "" : word
    while (stringWidth(row) > width) {
      let cut = ""
      for (const ch of row) {
        if (stringWidth(cut + ch) > width) break
        cut += ch
      }
      rows.push(cut)
      row = row.slice(cut.length)
    }
  }
  if (row.trim() !== "" || rows.length === 0) rows.push(row)
  return rows
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

const inputText = (input: unknown): string => {
  if (input === undefined || input === null) return ""
  if (typeof input === "string") return input
  const o = input as Record<string, unknown>
  for (const key of ["command", "file_path", "path", "url", "pattern", "prompt", "description"])
    if (typeof o[key] === "string") return o[key] as string
  return JSON.stringify(input)
}

export interface PatchHunk {
  readonly oldStart: number
  readonly oldLines: number
  readonly newStart: number
  readonly newLines: number
  readonly lines: ReadonlyArray<string>
}

/**
 * The file's true change, when the tool's result carries the CLI's
 * `structuredPatch` (Edit, MultiEdit, Write over a file): hunks with the
 * file's own line numbers, context and indentation.
 */
export const structuredPatchOf = (output: unknown): PatchHunk[] | undefined => {
  const patch = (output as { structuredPatch?: unknown } | null | undefined)?.structuredPatch
  if (!Array.isArray(patch) || patch.length === 0) return undefined
  const hunks = patch.filter(
    (h): h is PatchHunk =>
      typeof h === "object" &&
      h !== null &&
      ["oldStart", "oldLines", "newStart", "newLines"].every(
        (k) => typeof (h as Record<string, unknown>)[k] === "number",
      ) &&
      Array.isArray((h as { lines?: unknown }).lines) &&
      (h as { lines: unknown[] }).lines.every((l) => typeof l === "string"),
  )
  return hunks.length === patch.length ? hunks : undefined
}

/** Hunks as unified diff text. */
export const patchText = (hunks: ReadonlyArray<PatchHunk>): string =>
  hunks
    .map((h) => [`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, ...h.lines].join("\n"))
    .join("\n")

/**
 * The answers in AskUserQuestion's result (`"question"="answer"` pairs, the
 * CLI's wording), or the first line when it has none of those.
 */
export const answersOf = (output: string | undefined): string[] => {
  if (!output) return []
  const pairs = [...output.matchAll(/"([^"]*)"="([^"]*)"/g)].map((m) => m[2] ?? "")
  return pairs.length > 0 ? pairs : [firstLine(output.trim())].filter((l) => l !== "")
}

// ---------------------------------------------------------------------------

export const makeRenderer = (options: RenderOptions): Renderer => {
  const outputLines = options.outputLines ?? 8
  const fileLines = options.fileLines ?? 12
  const maxDiffLines = options.diffLines ?? 40
  const thinkingLines = options.thinkingLines ?? 8
  const width = options.width ?? (() => 100)
  const now = options.now ?? (() => new Date())
  const paint = (format: Format, text: string) =>
    options.color && text !== "" ? styleText(format, text, { validateStream: false }) : text
  const dim = (text: string) => paint("dim", text)
  const markdown = makeMarkdown({ color: options.color, width })

  const tasks = new Map<string, TaskInfo>()
  /** Task ids seen in the current run (the tree printed at its end). */
  const runTasks = new Set<string>()
  let limits: UsageLimits | undefined
  /** Whole texts cut short on screen, for /expand <n>. */
  const folded: string[] = []
  const fold = (text: string, what: "line" | "diff line" | "thinking", hidden: number): string => {
    folded.push(text)
    const words =
      what === "thinking"
        ? plural(hidden, "more line of thinking", "more lines of thinking")
        : plural(hidden, `more ${what}`)
    return dim(`… ${words} · /expand ${folded.length}`)
  }

  /**
   * The open text or reasoning stream. Text is markdown, laid out a block at
   * a time; reasoning is plain, wrapped a line at a time under its indent.
   */
  let stream:
    | {
        key: string
        kind: "text" | "reasoning"
        taskId?: string
        markdown?: MarkdownStream
        /** The unfinished last line (reasoning). */
        partial: string
        /** Every reasoning line, and how many were shown. */
        lines: string[]
        shown: number
      }
    | undefined

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
  const behind = (depth: number, text: string) =>
    text === ""
      ? ""
      : text
          .replace(/\n$/, "")
          .split("\n")
          .map((line) => `${gutter(depth)}${line}\n`)
          .join("")

  const reasoningRows = (line: string, depth: number): string[] =>
    wrapLine(line, width() - 2 * depth - 2).map((row) => `${gutter(depth)}  ${paint(["dim", "italic"], row)}`)

  /** Whole reasoning lines: shown up to the fold, kept for /expand after it. */
  const reasoningLines = (lines: ReadonlyArray<string>, depth: number): string => {
    if (!stream) return ""
    let out = ""
    for (const line of lines) {
      stream.lines.push(line)
      if (stream.shown >= thinkingLines) continue
      stream.shown++
      out += reasoningRows(line, depth)
        .map((r) => `${r}\n`)
        .join("")
    }
    return out
  }

  /** End an open stream: the rest of its text, laid out. */
  const flush = (): string => {
    const open = stream
    if (!open) return ""
    const depth = depthOf(open.taskId)
    let out = ""
    if (open.kind === "text") out = behind(depth, open.markdown?.end() ?? "")
    else {
      if (open.partial !== "") out += reasoningLines([open.partial], depth)
      const hidden = open.lines.length - open.shown
      if (hidden > 0) out += `${gutter(depth)}  ${fold(open.lines.join("\n"), "thinking", hidden)}\n`
    }
    stream = undefined
    return out
  }

  /** Whole lines at a depth, each behind the task gutter. */
  const block = (lines: ReadonlyArray<string>, depth = 0): string => {
    const head = flush()
    if (lines.length === 0) return head
    return head + lines.map((line) => `${gutter(depth)}${line}\n`).join("")
  }

  /** A streamed chunk: only whole lines (or whole markdown blocks) leave here. */
  const streamChunk = (key: string, kind: "text" | "reasoning", taskId: string | undefined, text: string) => {
    let out = ""
    if (stream?.key !== key) {
      out += flush()
      if (kind === "reasoning")
        out += `${gutter(depthOf(taskId))}${paint(["dim", "italic"], "✻ Thinking…")}\n`
      stream = {
        key,
        kind,
        ...(taskId !== undefined && { taskId }),
        ...(kind === "text" && { markdown: new MarkdownStream(markdown) }),
        partial: "",
        lines: [],
        shown: 0,
      }
    }
    const depth = depthOf(taskId)
    if (kind === "text") return out + behind(depth, stream.markdown?.push(text) ?? "")
    const parts = (stream.partial + text).split("\n")
    stream.partial = parts.pop() ?? ""
    return out + reasoningLines(parts, depth)
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
    if (lines.length > fileLines) shown.push(fold(text, "line", lines.length - fileLines))
    return shown
  }

  const cutDiff = (diff: string): string[] => {
    const lines = diffLines(diff)
    if (lines.length <= maxDiffLines) return lines
    return [...lines.slice(0, maxDiffLines), fold(diff, "diff line", lines.length - maxDiffLines)]
  }

  /** Before the result: the change as the model asked for it; its line numbers are the fragment's, so left out. */
  const fragmentDiff = (diff: string): string =>
    diff
      .split("\n")
      .filter((l) => !l.startsWith("@@") && !l.startsWith("---") && !l.startsWith("+++"))
      .join("\n")

  const callStarted = (call: ToolCall, final = false): string[] => {
    const lines = [callHeader(call)]
    // A stored call with its true patch shows only that (callFinished draws it).
    if (final && structuredPatchOf(call.output)) return lines
    if (call.diff) lines.push(...cutDiff(fragmentDiff(call.diff)).map((l) => `  ${l}`))
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
    // The question's answers are all its result says worth showing.
    if (call.name === "AskUserQuestion" && call.status === "Completed") {
      const answers = answersOf(outputOf(call))
      return answers.length > 0 ? [`  ⎿ ${dim(`answered: ${answers.join("; ")}`)}`] : []
    }
    // An edit's result: the file's true change, with its line numbers and context.
    const patch = call.status === "Completed" ? structuredPatchOf(call.output) : undefined
    if (patch) return [head, ...cutDiff(patchText(patch)).map((l) => `    ${l}`)]
    // The plan and the task show themselves; their raw results add nothing.
    if (call.kind === "think" || call.name === "AskUserQuestion" || call.kind === "task")
      return call.status === "Completed" ? [] : [head]
    const text = outputOf(call)?.replace(/\s+$/, "")
    if (!text) return [head]
    const lines = text.split("\n")
    const shown = lines.slice(0, outputLines).map((l) => `    ${dim(l)}`)
    if (lines.length > outputLines) shown.push(`    ${fold(text, "line", lines.length - outputLines)}`)
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
      task.usage?.tool_uses !== undefined ? plural(task.usage.tool_uses, "tool use") : undefined,
      task.usage?.used_tokens !== undefined ? `${compactNumber(task.usage.used_tokens)} tokens` : undefined,
      task.usage?.duration_ms !== undefined ? duration(task.usage.duration_ms) : undefined,
    ].filter((f): f is string => f !== undefined && f !== "")
    const kind = task.workflow ? "Workflow" : "Agent"
    return `${glyph} ${paint("bold", `${kind}: ${task.title}`)} ${dim(`· ${facts.join(" · ")}`)}`
  }

  const taskUpdate = (previous: TaskInfo | undefined, task: TaskInfo, label = true): string[] => {
    const lines: string[] = []
    // Status changes only: the task's own tool calls already show what it is doing.
    if (label && (!previous || previous.status !== task.status)) lines.push(taskLabel(task))
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
      `  ${paint("bold", "a")} allow · ${paint("bold", "d")} [reason] deny${e.can_always === false ? "" : ` · ${paint("bold", "A")} always (until this session ends)`}`,
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
      // A run that never reached the model has no context to report.
      if (usage.context_window && usage.context_used) {
        const used = usage.context_used ?? 0
        const pct = Math.round((used / usage.context_window) * 100)
        facts.push(`context ${compactNumber(used)}/${compactNumber(usage.context_window)} (${pct}%)`)
      }
      if (usage.cost_usd !== undefined) facts.push(`$${usage.cost_usd.toFixed(4)}`)
    }
    const lines = [`${paint(color, `── ${outcome}`)}${facts.length ? dim(` · ${facts.join(" · ")}`) : ""}`]
    if (error) lines.push(paint("red", `   ${firstLine(error)}`))
    // Only meters worth reading: an API key reports none, and saying so after every run is noise.
    if (limits && limits.windows.length > 0) lines.push(dim(`   ${limitsText(limits)}`))
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
      case "Notice":
        return block([noticeLine(e.level, e.text)], depth)
      case "SessionInfo":
        // Model and mode live in the status line; the chat says what it changed itself.
        return ""
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
        case "assistant": {
          const md = new MarkdownStream(markdown)
          out += flush() + behind(depth, md.push(item.text) + md.end())
          break
        }
        case "reasoning": {
          const lines = item.text.replace(/\n+$/, "").split("\n")
          const rows = lines.slice(0, thinkingLines).flatMap((l) => reasoningRows(l, 0))
          if (lines.length > thinkingLines)
            rows.push(`  ${fold(item.text, "thinking", lines.length - thinkingLines)}`)
          out += block([paint(["dim", "italic"], "✻ Thinking…"), ...rows], depth)
          break
        }
        case "tool_call":
          out += block([...callStarted(item.call, true), ...callFinished(item.call)], depth)
          break
        case "plan":
          out += block(planLines(item.entries), depth)
          break
        case "task": {
          // As it happened: the task opens, its work, then how it ended and its summary.
          tasks.set(item.task.id, item.task)
          const { summary: _summary, ...rest } = item.task
          const opened: TaskInfo = { ...rest, status: "Running" }
          out += block([taskLabel(opened)], depth)
          out += items(item.items, depth + 1)
          out += block(item.task.status === "Running" ? [] : taskUpdate(opened, item.task), depth)
          break
        }
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
    expand: (n) => folded[n - 1],
    folds: () => folded.length,
  }
}
