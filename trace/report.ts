/**
 * The Agent Trace report over a range of commits: per commit and file, the
 * lines AI wrote against the lines added, the tools, the models and up to
 * three conversation links, as Markdown. The same function serves the
 * `npm run trace -- report` command and the terminal front end.
 *
 * Rules: it reads only (log, show, notes show; never fetch, push or a ref
 * write); a record counts when it passes the Agent Trace 0.1 check, whatever
 * tool wrote it, and names this commit (or no revision at all); a line is
 * AI-written when a range of an `ai` contributor covers it (a range's own
 * contributor overrides its conversation's), each line once, and never more
 * lines than the commit added to the file. When git cannot read the range
 * the report is a one-line notice.
 */
import { Effect } from "effect"
import type { Git } from "./git.ts"
import { checkRecord, type TraceRecord } from "./schema.ts"

export interface ReportOptions {
  readonly base: string
  readonly head?: string
  /** The notes ref's short name (default `agent-trace`). */
  readonly ref?: string
}

export interface FileLine {
  readonly path: string
  readonly added: number
  readonly ai: number
  readonly tools: ReadonlyArray<string>
  readonly models: ReadonlyArray<string>
  readonly conversations: ReadonlyArray<string>
}

export interface CommitReport {
  readonly sha: string
  readonly subject: string
  readonly records: number
  readonly refused: number
  readonly files: ReadonlyArray<FileLine>
}

export type Report =
  | { readonly ok: true; readonly range: string; readonly commits: ReadonlyArray<CommitReport> }
  | { readonly ok: false; readonly range: string; readonly notice: string }

const MAX_LINKS = 3

/** The records of a note that pass the check and belong to `sha`; how many were refused. */
export const recordsOfNote = (note: string, sha: string): { records: TraceRecord[]; refused: number } => {
  const records: TraceRecord[] = []
  let refused = 0
  for (const line of note.split("\n")) {
    if (line.trim() === "") continue
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      refused++
      continue
    }
    const checked = checkRecord(value)
    if (!checked.ok || (checked.record.vcs !== undefined && checked.record.vcs.revision !== sha)) refused++
    else records.push(checked.record)
  }
  return { records, refused }
}

const toolOf = (record: TraceRecord) =>
  record.tool === undefined ? "unknown tool" : `${record.tool.name} ${record.tool.version}`

/** Per file of one commit: its added lines (from numstat) against the records' AI lines. */
export const commitFiles = (
  added: ReadonlyMap<string, number>,
  records: ReadonlyArray<TraceRecord>,
): FileLine[] => {
  const files = new Map<
    string,
    { lines: Set<number>; tools: Set<string>; models: Set<string>; conversations: string[] }
  >()
  for (const record of records)
    for (const file of record.files) {
      const entry = files.get(file.path) ?? {
        lines: new Set(),
        tools: new Set(),
        models: new Set(),
        conversations: [],
      }
      files.set(file.path, entry)
      for (const conversation of file.conversations) {
        let wrote = false
        for (const range of conversation.ranges) {
          const contributor = range.contributor ?? conversation.contributor
          if (contributor?.type !== "ai") continue
          wrote = true
          if (contributor.model_id !== undefined) entry.models.add(contributor.model_id)
          for (let line = range.start_line; line <= range.end_line; line++) entry.lines.add(line)
        }
        if (!wrote) continue
        entry.tools.add(toolOf(record))
        if (conversation.url !== undefined && !entry.conversations.includes(conversation.url))
          entry.conversations.push(conversation.url)
      }
    }
  const paths = [...new Set([...added.keys(), ...files.keys()])].sort()
  return paths.map((path) => {
    const entry = files.get(path)
    const count = added.get(path) ?? 0
    return {
      path,
      added: count,
      ai: Math.min(entry?.lines.size ?? 0, count),
      tools: [...(entry?.tools ?? [])].sort(),
      models: [...(entry?.models ?? [])].sort(),
      conversations: (entry?.conversations ?? []).slice(0, MAX_LINKS),
    }
  })
}

/** `git show --numstat` lines → path → added lines (binary files count 0). */
export const numstatOf = (text: string): Map<string, number> => {
  const added = new Map<string, number>()
  for (const line of text.split("\n")) {
    const [plus, , ...path] = line.split("\t")
    if (path.length === 0 || plus === undefined) continue
    added.set(path.join("\t"), plus === "-" ? 0 : Number(plus))
  }
  return added
}

/** Read the range and its notes. */
export const readReport = (git: Git, repo: string, options: ReportOptions): Effect.Effect<Report> =>
  Effect.gen(function* () {
    const head = options.head ?? "HEAD"
    const range = `${options.base}..${head}`
    const ref = options.ref ?? "agent-trace"
    const log = yield* git(repo, ["log", "--reverse", "--format=%H%x09%s", range, "--"])
    if (log.code !== 0) {
      const why = log.stderr.trim().split("\n")[0] || "git failed"
      return { ok: false, range, notice: `git cannot read ${range} in ${repo}: ${why}` }
    }
    const commits: CommitReport[] = []
    for (const line of log.stdout.split("\n")) {
      if (line === "") continue
      const [sha = "", ...subject] = line.split("\t")
      const stat = yield* git(repo, [
        "-c",
        "core.quotePath=false",
        "show",
        "--numstat",
        "--format=",
        "--no-renames",
        "--diff-merges=first-parent",
        sha,
      ])
      const note = yield* git(repo, ["notes", `--ref=${ref}`, "show", sha])
      const { records, refused } =
        note.code === 0 ? recordsOfNote(note.stdout, sha) : { records: [], refused: 0 }
      commits.push({
        sha,
        subject: subject.join("\t"),
        records: records.length,
        refused,
        files: commitFiles(numstatOf(stat.stdout), records),
      })
    }
    return { ok: true, range, commits }
  })

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ")
const percent = (part: number, whole: number) => (whole === 0 ? "0%" : `${Math.round((part / whole) * 100)}%`)

/** The report as Markdown. */
export const renderReport = (report: Report): string => {
  if (!report.ok) return `Agent Trace: no report, ${report.notice}\n`
  const out: string[] = [`# Agent Trace: ${report.range}`, ""]
  const added = report.commits.reduce((n, c) => n + c.files.reduce((m, f) => m + f.added, 0), 0)
  const ai = report.commits.reduce((n, c) => n + c.files.reduce((m, f) => m + f.ai, 0), 0)
  const traced = report.commits.filter((c) => c.records > 0).length
  out.push(
    `${report.commits.length} commits, ${traced} with records; ${ai} of ${added} added lines written by AI (${percent(ai, added)}).`,
  )
  for (const commit of report.commits) {
    out.push("", `## ${commit.sha.slice(0, 7)} ${commit.subject}`, "")
    if (commit.records === 0) {
      out.push(commit.refused > 0 ? `No valid record (${commit.refused} refused).` : "No Agent Trace record.")
      continue
    }
    if (commit.refused > 0) out.push(`${commit.refused} record(s) refused by the schema check.`, "")
    out.push("| File | AI lines / added | Tool | Model | Conversations |", "| --- | --- | --- | --- | --- |")
    for (const file of commit.files)
      out.push(
        `| ${cell(file.path)} | ${file.ai} / ${file.added} | ${cell(file.tools.join(", ") || "—")} | ${cell(file.models.join(", ") || "—")} | ${cell(file.conversations.join(" ") || "—")} |`,
      )
  }
  return `${out.join("\n")}\n`
}
