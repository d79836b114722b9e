/**
 * Fingerprints: the lines a session's editing tools wrote, per repository and
 * file, and which agent wrote each (`main`, or the subagent's type). Plain
 * JSON, so plugin storage keeps it across restarts and resumes.
 *
 * Rules:
 * - A line's fingerprint is its trimmed text. Short lines (`}`, blank) carry
 *   no fingerprint: they are attributed by their neighbours (attribute.ts).
 * - Write gives the whole content (the CLI's `tool_use_result.content`, else
 *   the input); Edit and MultiEdit the `+` lines of the result's
 *   `structuredPatch` (else the input's new strings); NotebookEdit the new
 *   source, also as the JSON string lines a notebook file stores.
 * - The latest writer of a line owns it.
 */
import type { ToolCall } from "../sdk/protocol.ts"
import { asRecord, asString } from "../values.ts"

export const MAIN_AGENT = "main"

/** relative path → trimmed line → agent. */
export type FilePrints = Record<string, Record<string, string>>
/** repository root → its files' prints. */
export type Fingerprints = Record<string, FilePrints>

export const EDITING_TOOLS: ReadonlySet<string> = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"])

/** A line too short to tell who wrote it: no letter or digit and at most 3 characters. */
export const isShort = (trimmed: string): boolean => trimmed.length <= 3 && !/[\p{L}\p{N}]/u.test(trimmed)

/** The lines one editing call wrote to one file (absolute path as the tool named it). */
export interface Written {
  readonly path: string
  readonly lines: ReadonlyArray<string>
}

const linesOf = (text: string | undefined): string[] => (text === undefined ? [] : text.split(/\r?\n/))

const patchAdditions = (patch: unknown): string[] | undefined => {
  if (!Array.isArray(patch)) return undefined
  const added: string[] = []
  for (const hunk of patch) {
    const lines = asRecord(hunk).lines
    if (!Array.isArray(lines)) continue
    for (const line of lines) if (typeof line === "string" && line.startsWith("+")) added.push(line.slice(1))
  }
  return added
}

/** What a finished editing call wrote; nothing for a failed call or another tool. */
export const writtenBy = (call: ToolCall): Written | undefined => {
  if (!EDITING_TOOLS.has(call.name) || call.status !== "Completed") return undefined
  const input = asRecord(call.input)
  const output = asRecord(call.output)
  const path = asString(output.filePath) ?? asString(input.file_path) ?? asString(input.notebook_path)
  if (path === undefined) return undefined
  switch (call.name) {
    case "Write":
      return { path, lines: linesOf(asString(output.content) ?? asString(input.content)) }
    case "Edit":
      return {
        path,
        lines: patchAdditions(output.structuredPatch) ?? linesOf(asString(input.new_string)),
      }
    case "MultiEdit": {
      const edits = Array.isArray(input.edits) ? input.edits : []
      return {
        path,
        lines:
          patchAdditions(output.structuredPatch) ??
          edits.flatMap((edit) => linesOf(asString(asRecord(edit).new_string))),
      }
    }
    default: {
      // A notebook stores each source line as a JSON string: `"text\n",`.
      const source = linesOf(asString(input.new_source))
      return { path, lines: [...source, ...source.map((line) => `${JSON.stringify(`${line}\n`)},`)] }
    }
  }
}

/** Add what one agent wrote to one file of a repository (in place). */
export const remember = (
  prints: Fingerprints,
  root: string,
  relativePath: string,
  lines: ReadonlyArray<string>,
  agent: string,
): void => {
  const files = prints[root] ?? {}
  prints[root] = files
  const file = files[relativePath] ?? {}
  files[relativePath] = file
  for (const line of lines) {
    const trimmed = line.trim()
    if (!isShort(trimmed)) file[trimmed] = agent
  }
}
