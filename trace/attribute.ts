/**
 * How a line of a commit is attributed (the rules of NOTES.md, "Agent Trace"):
 * - an added line is an agent's when its trimmed text matches a line that
 *   agent's editing tools wrote to the same file (fingerprints.ts);
 * - a short line (`}`, blank) takes the agent of the added line directly
 *   before it, else of the one directly after it;
 * - consecutive lines of one agent form one range, whose `content_hash` is
 *   `sha256:` and the first 16 hex digits of the SHA-256 of its lines joined
 *   by `\n`;
 * - every other line is left out.
 * Pure: the commit's patch in, ranges out.
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { parsePatch } from "diff"
import { isShort } from "./fingerprints.ts"

export interface AddedLine {
  /** 1-based, in the file as the commit leaves it. */
  readonly line: number
  readonly text: string
}

export interface FileAdditions {
  /** Relative to the repository root. */
  readonly path: string
  readonly added: ReadonlyArray<AddedLine>
}

export interface AgentRange {
  readonly agent: string
  readonly start_line: number
  readonly end_line: number
  readonly content_hash: string
}

/** The `sha256:<16 hex>` of a range's lines. */
export const contentHash = (lines: ReadonlyArray<string>): string =>
  `sha256:${bytesToHex(sha256(utf8ToBytes(lines.join("\n")))).slice(0, 16)}`

const stripPrefix = (name: string | undefined): string | undefined =>
  name === undefined || name === "/dev/null" ? undefined : name.replace(/^[ab]\//, "")

/**
 * The added lines of each file in a commit's patch (`git show --format=
 * --unified=0 --no-color --no-ext-diff -c core.quotePath=false`). Deleted
 * files and binary files add nothing.
 */
export const additionsOf = (patch: string): FileAdditions[] => {
  const files: FileAdditions[] = []
  for (const file of parsePatch(patch)) {
    const path = stripPrefix(file.newFileName)
    if (path === undefined) continue
    const added: AddedLine[] = []
    for (const hunk of file.hunks) {
      let line = hunk.newStart
      for (const text of hunk.lines) {
        if (text.startsWith("+")) added.push({ line: line++, text: text.slice(1) })
        else if (text.startsWith(" ")) line++
      }
    }
    if (added.length > 0) files.push({ path, added })
  }
  return files
}

/** The agents' ranges of one file: `prints` maps a trimmed line to the agent that wrote it. */
export const attributeFile = (
  added: ReadonlyArray<AddedLine>,
  prints: Readonly<Record<string, string>> | undefined,
): AgentRange[] => {
  if (prints === undefined || added.length === 0) return []
  const lines = [...added].sort((a, b) => a.line - b.line)
  const count = lines.length
  const agents: Array<string | undefined> = new Array(count)
  const short: boolean[] = new Array(count)
  for (let i = 0; i < count; i++) {
    const trimmed = lines[i]!.text.trim()
    short[i] = isShort(trimmed)
    agents[i] = short[i] ? undefined : prints[trimmed]
  }
  const adjacent = (i: number, j: number) => lines[j]!.line - lines[i]!.line === j - i
  // A short line follows the line before it; failing that, the line after it.
  for (let i = 1; i < count; i++) if (short[i] && adjacent(i - 1, i)) agents[i] = agents[i - 1]
  for (let i = count - 2; i >= 0; i--)
    if (short[i] && agents[i] === undefined && adjacent(i, i + 1)) agents[i] = agents[i + 1]
  const ranges: AgentRange[] = []
  let start = 0
  for (let i = 0; i < count; i++) {
    const agent = agents[i]
    const next = i + 1 < count && agents[i + 1] === agent && adjacent(i, i + 1)
    if (next) continue
    if (agent !== undefined)
      ranges.push({
        agent,
        start_line: lines[start]!.line,
        end_line: lines[i]!.line,
        content_hash: contentHash(lines.slice(start, i + 1).map((l) => l.text)),
      })
    start = i + 1
  }
  return ranges
}
