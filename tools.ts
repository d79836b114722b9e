/**
 * Tool calls as the host shows them: kind and title from the tool's name and
 * input, unified diffs for edits (edit-diff.ts: the SDK's `unifiedDiff`), the whole file for
 * Write, results with exit codes, and plans from the todo tools.
 */
import { editDiff } from "./edit-diff.ts"
import { diffOfHunks } from "./sdk/diff.ts"
import type { PlanEntry, ToolKind, ToolStatus } from "./sdk/protocol.ts"
import { asRecord, asString } from "./values.ts"

export interface ToolDescription {
  readonly kind: ToolKind
  readonly title: string
  readonly path?: string
  readonly diff?: string
  readonly new_text?: string
}

type Input = Readonly<Record<string, unknown>>

const firstLine = (text: string): string => {
  const line = text.trimStart().split("\n", 1)[0] ?? ""
  return line.length > 120 ? `${line.slice(0, 119)}…` : line
}

/** MultiEdit: one header, the hunks of every edit in order. */
const multiEditDiff = (path: string, edits: ReadonlyArray<unknown>): string | undefined => {
  let header: string | undefined
  const hunks: string[] = []
  for (const edit of edits) {
    const e = asRecord(edit)
    const patch = editDiff(path, asString(e.old_string) ?? "", asString(e.new_string) ?? "")
    const lines = patch.split("\n")
    const at = lines.findIndex((l) => l.startsWith("@@"))
    if (at < 0) continue
    header ??= lines.slice(0, at).join("\n")
    hunks.push(lines.slice(at).join("\n").replace(/\n+$/, ""))
  }
  return header === undefined ? undefined : `${header}\n${hunks.join("\n")}\n`
}

/** A workflow script's `meta.description` (or name), for the call's title. */
const workflowTitle = (input: Input): string => {
  const script = asString(input.script) ?? ""
  const description = /\bdescription\s*:\s*(['"`])((?:\\.|(?!\1).)*)\1/.exec(script)?.[2]
  const name = /\bname\s*:\s*(['"`])((?:\\.|(?!\1).)*)\1/.exec(script)?.[2]
  return description ?? name ?? asString(input.name) ?? "Workflow"
}

/** Kind, title and file content of one tool call. */
export const describeToolCall = (name: string, input: unknown): ToolDescription => {
  const i = asRecord(input)
  const filePath = asString(i.file_path) ?? asString(i.notebook_path) ?? asString(i.path)
  switch (name) {
    case "Bash":
      return { kind: "execute", title: asString(i.command) ?? "Bash" }
    case "BashOutput":
    case "KillShell":
    case "KillBash":
    case "Monitor":
      return {
        kind: "execute",
        title: asString(i.description) ?? asString(i.bash_id) ?? asString(i.shell_id) ?? name,
      }
    case "Edit": {
      const path = filePath ?? ""
      return {
        kind: "edit",
        title: `Edit ${path}`,
        path,
        diff: editDiff(path, asString(i.old_string) ?? "", asString(i.new_string) ?? ""),
      }
    }
    case "MultiEdit": {
      const path = filePath ?? ""
      const diff = Array.isArray(i.edits) ? multiEditDiff(path, i.edits) : undefined
      return { kind: "edit", title: `Edit ${path}`, path, ...(diff === undefined ? {} : { diff }) }
    }
    case "NotebookEdit": {
      const path = filePath ?? ""
      const mode = asString(i.edit_mode) ?? "replace"
      const cell = asString(i.cell_id)
      const title = `Edit ${path}${cell ? ` (cell ${cell})` : ""}`
      // The input holds only the new cell source: a delete has nothing to show.
      if (mode === "delete") return { kind: "edit", title, path }
      return { kind: "edit", title, path, diff: editDiff(path, "", asString(i.new_source) ?? "") }
    }
    case "Write": {
      const path = filePath ?? ""
      return { kind: "edit", title: `Write ${path}`, path, new_text: asString(i.content) ?? "" }
    }
    case "Read":
      return filePath
        ? { kind: "read", title: `Read ${filePath}`, path: filePath }
        : { kind: "read", title: "Read" }
    case "Grep": {
      const where = asString(i.path) ?? asString(i.glob)
      return {
        kind: "search",
        title: `Grep ${asString(i.pattern) ?? ""}${where ? ` in ${where}` : ""}`.trim(),
      }
    }
    case "Glob":
      return { kind: "search", title: `Glob ${asString(i.pattern) ?? ""}`.trim() }
    case "LS":
      return { kind: "read", title: `List ${filePath ?? ""}`.trim(), ...(filePath ? { path: filePath } : {}) }
    case "ToolSearch":
      return { kind: "search", title: `Search tools ${asString(i.query) ?? ""}`.trim() }
    case "WebFetch":
      return { kind: "fetch", title: asString(i.url) ?? "WebFetch" }
    case "WebSearch":
      return { kind: "fetch", title: asString(i.query) ?? "WebSearch" }
    case "Agent":
    case "Task":
      return {
        kind: "task",
        title:
          asString(i.description) ?? firstLine(asString(i.prompt) ?? "") ?? asString(i.subagent_type) ?? name,
      }
    case "Workflow":
      return { kind: "task", title: workflowTitle(i) }
    case "SendMessage":
      return { kind: "task", title: `Message ${asString(i.to) ?? "agent"}` }
    case "TodoWrite":
      return { kind: "think", title: "Update plan" }
    case "TaskCreate":
      return { kind: "think", title: asString(i.subject) ?? "Add task" }
    case "TaskUpdate":
      return { kind: "think", title: `Update task ${asString(i.taskId) ?? ""}`.trim() }
    case "TaskList":
    case "TaskGet":
      return {
        kind: "think",
        title: name === "TaskList" ? "List tasks" : `Task ${asString(i.taskId) ?? ""}`.trim(),
      }
    case "ExitPlanMode":
    case "EnterPlanMode":
      return { kind: "think", title: name === "ExitPlanMode" ? "Plan ready" : "Plan mode" }
    case "AskUserQuestion": {
      const first = Array.isArray(i.questions) ? asRecord(i.questions[0]) : {}
      return { kind: "other", title: asString(first.question) ?? "Question" }
    }
    case "Skill":
      return { kind: "other", title: `Skill ${asString(i.skill) ?? asString(i.command) ?? ""}`.trim() }
  }
  if (name.startsWith("mcp__")) {
    const rest = name.slice("mcp__".length)
    const at = rest.indexOf("__")
    return { kind: "mcp", title: at >= 0 ? rest.slice(at + 2) : rest }
  }
  return { kind: "other", title: name }
}

// ---------------------------------------------------------------------------
// Results

export interface ToolResultInfo {
  readonly status: ToolStatus
  readonly output: unknown
  readonly output_text: string
  readonly exit_code?: number
  /** An edit's diff from the CLI's own patch of the file (true line numbers); replaces the call's. */
  readonly diff?: string
}

/** The tools whose result carries the file's `structuredPatch`. */
const PATCHED = new Set(["Edit", "MultiEdit", "Write"])

/** The text of a tool_result's `content` (a string or text/image blocks). */
export const resultText = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return content === undefined || content === null ? "" : JSON.stringify(content)
  const parts: string[] = []
  for (const block of content) {
    const b = asRecord(block)
    if (b.type === "text" && typeof b.text === "string") parts.push(b.text)
    else if (b.type === "image") parts.push("[image]")
  }
  return parts.join("\n")
}

const exitCodeIn = (text: string): number | undefined => {
  const m = /^(?:Error: )?Exit code (-?\d+)/.exec(text)
  return m ? Number(m[1]) : undefined
}

const interruptedText = (text: string): boolean =>
  text.startsWith("The user doesn't want to proceed") || text.startsWith("[Request interrupted by user")

/**
 * A tool result for the host: status, the whole `tool_use_result` as output
 * (else the content), its text, and a command's exit code. A shell result is
 * recognised by its `stdout` field or by `name` ("Bash"): success is exit 0,
 * a failure carries "Exit code N" in its text.
 */
export const toolResultOf = (
  content: unknown,
  toolUseResult: unknown,
  isError: boolean,
  name?: string,
): ToolResultInfo => {
  const text = resultText(content)
  const output = toolUseResult === undefined ? content : toolUseResult
  const record = asRecord(toolUseResult)
  const interrupted = record.interrupted === true || (isError && interruptedText(text))
  const status: ToolStatus = interrupted ? "Cancelled" : isError ? "Failed" : "Completed"
  const shell = name === "Bash" || typeof record.stdout === "string"
  let exit_code: number | undefined
  const declared = record.exitCode ?? record.exit_code ?? record.returnCode
  if (typeof declared === "number") exit_code = declared
  else if (shell && isError) exit_code = exitCodeIn(text) ?? exitCodeIn(asString(toolUseResult) ?? "")
  // The CLI reports a non-zero exit as an error, so a shell call that succeeded exited 0.
  else if (shell && !interrupted && !isError) exit_code = 0
  const path = asString(record.filePath)
  const diff =
    name !== undefined && PATCHED.has(name) && path !== undefined && !isError
      ? diffOfHunks(path, record.structuredPatch)
      : undefined
  // Assigned, not spread: this runs for every tool result, and a conditional spread is an object more.
  const info: { -readonly [K in keyof ToolResultInfo]: ToolResultInfo[K] } = {
    status,
    output,
    output_text: text,
  }
  if (exit_code !== undefined) info.exit_code = exit_code
  if (diff !== undefined) info.diff = diff
  return info
}

// ---------------------------------------------------------------------------
// Plans

const planStatus = (value: unknown): PlanEntry["status"] =>
  value === "in_progress" || value === "completed" ? value : "pending"

/** TodoWrite's input → plan entries (undefined when it holds no todo list). */
export const planFromTodoWrite = (input: unknown): PlanEntry[] | undefined => {
  const todos = asRecord(input).todos
  if (!Array.isArray(todos)) return undefined
  return todos.map((todo) => {
    const t = asRecord(todo)
    const active = asString(t.activeForm)
    return {
      content: asString(t.content) ?? "",
      status: planStatus(t.status),
      ...(active === undefined ? {} : { active_form: active }),
    }
  })
}

export interface TaskListItem {
  readonly id: string
  readonly subject: string
  readonly status: PlanEntry["status"]
  readonly activeForm?: string
}

/** The task list the TaskCreate/TaskUpdate/TaskList tools keep, as a plan. */
export const planFromTaskTools = (tasks: Iterable<TaskListItem>): PlanEntry[] =>
  [...tasks].map((t) => ({
    content: t.subject,
    status: t.status,
    ...(t.activeForm === undefined ? {} : { active_form: t.activeForm }),
  }))

/**
 * The CLI's task list, followed through its tools (one per agent scope):
 * TaskCreate gets its id in the result, TaskUpdate changes or deletes one,
 * TaskList replaces the whole list. Each method returns whether the list changed.
 */
export class TaskList {
  private readonly items = new Map<string, TaskListItem>()

  created(input: unknown, result: unknown): boolean {
    const task = asRecord(asRecord(result).task)
    const id = asString(task.id)
    if (id === undefined) return false
    const i = asRecord(input)
    const activeForm = asString(i.activeForm)
    this.items.set(id, {
      id,
      subject: asString(task.subject) ?? asString(i.subject) ?? "",
      status: "pending",
      ...(activeForm === undefined ? {} : { activeForm }),
    })
    return true
  }

  updated(input: unknown): boolean {
    const i = asRecord(input)
    const id = asString(i.taskId)
    const current = id === undefined ? undefined : this.items.get(id)
    if (id === undefined || current === undefined) return false
    if (i.status === "deleted") return this.items.delete(id)
    const activeForm = asString(i.activeForm) ?? current.activeForm
    this.items.set(id, {
      id,
      subject: asString(i.subject) ?? current.subject,
      status: i.status === undefined ? current.status : planStatus(i.status),
      ...(activeForm === undefined ? {} : { activeForm }),
    })
    return true
  }

  listed(result: unknown): boolean {
    const tasks = asRecord(result).tasks
    if (!Array.isArray(tasks)) return false
    const previous = new Map(this.items)
    this.items.clear()
    for (const task of tasks) {
      const t = asRecord(task)
      const id = asString(t.id)
      if (id === undefined) continue
      const activeForm = previous.get(id)?.activeForm
      this.items.set(id, {
        id,
        subject: asString(t.subject) ?? "",
        status: planStatus(t.status),
        ...(activeForm === undefined ? {} : { activeForm }),
      })
    }
    return true
  }

  plan(): PlanEntry[] {
    return planFromTaskTools(this.items.values())
  }
}

/**
 * The task tools' one plan rule, live and stored: a TaskCreate, TaskUpdate or
 * TaskList call changes the list when its result says it completed, and only
 * then (a failed, refused or unanswered call changed nothing in the CLI's
 * list). True when the list changed: the caller shows the new plan after the
 * call's result.
 */
export const applyTaskTool = (
  list: TaskList,
  name: string,
  input: unknown,
  toolUseResult: unknown,
  status: ToolStatus,
): boolean => {
  if (status !== "Completed") return false
  switch (name) {
    case "TaskCreate":
      return list.created(input, toolUseResult)
    case "TaskUpdate":
      return list.updated(input)
    case "TaskList":
      return list.listed(toolUseResult)
    default:
      return false
  }
}
