/**
 * Tool calls as the chat shows them: a header line (Bash as `$ command`),
 * the change a call makes (the model's fragment diff, or a written file as
 * added lines) when it starts, and when it ends its status, exit code and
 * output cut short, or the file's true patch with the CLI's line numbers.
 */
import type { PatchHunk } from "../../../sdk/diff.ts"
import type { ToolCall } from "../../../sdk/protocol.ts"
import { firstLine } from "../text.ts"
import { type RenderContext, STATUS_COLOR, TOOL_GLYPH } from "./context.ts"
import { diffLines, fragmentRows, patchRows } from "./diff.ts"

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

/**
 * The answers in AskUserQuestion's result (`"question"="answer"` pairs, the
 * CLI's wording), or the first line when it has none of those.
 */
export const answersOf = (output: string | undefined): string[] => {
  if (!output) return []
  const pairs = [...output.matchAll(/"([^"]*)"="([^"]*)"/g)].map((m) => m[2] ?? "")
  return pairs.length > 0 ? pairs : [firstLine(output.trim())].filter((l) => l !== "")
}

/** The one value of a tool's input worth a line (its command, path, pattern…). */
export const inputText = (input: unknown): string => {
  if (input === undefined || input === null) return ""
  if (typeof input === "string") return input
  const o = input as Record<string, unknown>
  for (const key of ["command", "file_path", "path", "url", "pattern", "prompt", "description"])
    if (typeof o[key] === "string") return o[key] as string
  return JSON.stringify(input)
}

const callHeader = (ctx: RenderContext, call: ToolCall): string => {
  const title = call.title.trim()
  const name = ctx.paint("bold", call.name)
  const rest =
    title === "" || title === call.name
      ? ""
      : title.startsWith(`${call.name} `)
        ? title.slice(call.name.length + 1)
        : title
  const shown = call.kind === "execute" && call.name === "Bash" && rest !== "" ? `$ ${rest}` : rest
  return `${ctx.paint(STATUS_COLOR[call.status], TOOL_GLYPH.Running)} ${name}${shown ? ` ${shown}` : ""}`
}

const newFileLines = (ctx: RenderContext, text: string): string[] => {
  const lines = text.replace(/\n$/, "").split("\n")
  const shown = lines.slice(0, ctx.fileLines).map((line) => ctx.paint("green", `+${line}`))
  if (lines.length > ctx.fileLines) shown.push(ctx.fold(text, "line", lines.length - ctx.fileLines))
  return shown
}

/** A call as it starts (`final`: a stored call, whose true patch callFinished draws). */
export const callStarted = (ctx: RenderContext, call: ToolCall, final = false): string[] => {
  const lines = [callHeader(ctx, call)]
  if (final && structuredPatchOf(call.output)) return lines
  if (call.diff) lines.push(...diffLines(ctx, fragmentRows(call.diff)).map((l) => `  ${l}`))
  else if (call.new_text !== undefined) lines.push(...newFileLines(ctx, call.new_text).map((l) => `  ${l}`))
  return lines
}

const outputOf = (call: ToolCall): string | undefined => {
  if (call.output_text !== undefined) return call.output_text
  if (typeof call.output === "string") return call.output
  return undefined
}

export const callFinished = (ctx: RenderContext, call: ToolCall): string[] => {
  const glyph = ctx.paint(STATUS_COLOR[call.status], TOOL_GLYPH[call.status])
  const exit = call.exit_code === undefined ? "" : ` · exit ${call.exit_code}`
  const head = `  ⎿ ${glyph} ${ctx.paint(STATUS_COLOR[call.status], call.status)}${exit}`
  // The question's answers are all its result says worth showing.
  if (call.name === "AskUserQuestion" && call.status === "Completed") {
    const answers = answersOf(outputOf(call))
    return answers.length > 0 ? [`  ⎿ ${ctx.dim(`answered: ${answers.join("; ")}`)}`] : []
  }
  // An edit's result: the file's true change, with its line numbers and context.
  const patch = call.status === "Completed" ? structuredPatchOf(call.output) : undefined
  if (patch) return [head, ...diffLines(ctx, patchRows(patch)).map((l) => `    ${l}`)]
  // The plan and the task show themselves; their raw results add nothing.
  if (call.kind === "think" || call.name === "AskUserQuestion" || call.kind === "task")
    return call.status === "Completed" ? [] : [head]
  const text = outputOf(call)?.replace(/\s+$/, "")
  if (!text) return [head]
  const lines = text.split("\n")
  const shown = lines.slice(0, ctx.outputLines).map((l) => `    ${ctx.dim(l)}`)
  if (lines.length > ctx.outputLines)
    shown.push(`    ${ctx.fold(text, "line", lines.length - ctx.outputLines)}`)
  return [head, ...shown]
}
