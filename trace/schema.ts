/**
 * The Agent Trace 0.1 record, as a Zod schema: the validator every record is
 * held to before it is written, and that the report holds other tools'
 * records to before it counts them.
 *
 * Source: the specification's published JSON Schema, `schemas/trace-record.json`
 * of github.com/cursor/agent-trace ($id https://agent-trace.dev/schemas/v1/trace-record.json),
 * with the prose of its README (0.1.0, RFC, January 2026). Where they differ
 * the JSON Schema wins, because it is the machine check: every object is
 * closed (`additionalProperties: false`), `tool` needs both `name` and
 * `version`, and `version` is `major.minor` (so the README's own example
 * `"0.1.0"` fails it; records here say `"0.1"`).
 */
import { z } from "zod"

/** The version this plugin writes: `major.minor`, as the schema's pattern demands. */
export const AGENT_TRACE_VERSION = "0.1"

const ContributorType = z.enum(["human", "ai", "mixed", "unknown"])

const Contributor = z.strictObject({
  type: ContributorType,
  model_id: z.string().max(250).optional(),
})

const Range = z.strictObject({
  start_line: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  end_line: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
  content_hash: z.string().optional(),
  contributor: Contributor.optional(),
})

const Related = z.strictObject({ type: z.string(), url: z.url() })

const Conversation = z.strictObject({
  url: z.url().optional(),
  contributor: Contributor.optional(),
  ranges: z.array(Range),
  related: z.array(Related).optional(),
})

const TraceFile = z.strictObject({
  path: z.string(),
  conversations: z.array(Conversation),
})

const Vcs = z.strictObject({
  type: z.enum(["git", "jj", "hg", "svn"]),
  revision: z.string(),
})

const Tool = z.strictObject({ name: z.string(), version: z.string() })

export const TraceRecord = z.strictObject({
  version: z.string().regex(/^[0-9]+\.[0-9]+$/),
  id: z.uuid(),
  timestamp: z.iso.datetime(),
  vcs: Vcs.optional(),
  tool: Tool.optional(),
  files: z.array(TraceFile),
  metadata: z.record(z.string(), z.unknown()).optional(),
})
export type TraceRecord = z.infer<typeof TraceRecord>
export type TraceConversation = z.infer<typeof Conversation>
export type TraceRange = z.infer<typeof Range>

export type Checked =
  | { readonly ok: true; readonly record: TraceRecord }
  | { readonly ok: false; readonly problems: string[] }

/** Check a record; the problems name the failing field by its path (`files.0.path: …`). */
export const checkRecord = (value: unknown): Checked => {
  const parsed = TraceRecord.safeParse(value)
  if (parsed.success) return { ok: true, record: parsed.data }
  return {
    ok: false,
    problems: parsed.error.issues.map((issue) => `${issue.path.join(".") || "(record)"}: ${issue.message}`),
  }
}
