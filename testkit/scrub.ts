// Scrubbing of recordings before they are committed to testdata/:
// - transcript records that hold the CLI's system prompt are dropped; one that
//   is a link of the conversation chain (a `prompt_snapshot` attachment has a
//   uuid, and the next message names it as its parent) leaves a content-free
//   stub, so the recorded chain has no holes,
// - `rendered` system text and any string that looks like the system prompt is blanked,
// - the sandbox's absolute temp paths become stable placeholders (also in the
//   encoded project folder names).

/** Transcript record types that are dropped outright. */
export const DROP_RECORD_TYPES: readonly string[] = [
  "prompt_snapshot",
  "api-request-shape",
  "api-request-blob",
  "api-request",
]

/** Attachment types that are dropped (attachment records). */
export const DROP_ATTACHMENT_TYPES: readonly string[] = ["prompt_snapshot"]

/** Openings of the CLI's system prompt; a string containing one is blanked. */
export const SYSTEM_PROMPT_MARKERS: readonly string[] = [
  "You are Claude Code",
  "You are an interactive",
  "You are an agent for Claude Code",
  "You are a Claude agent",
]

/** The placeholder layout the sandbox paths are mapped to. */
export const PLACEHOLDER = {
  home: "/home/dev",
  ws: "/home/dev/ws",
  tmp: "/tmp/cvg",
  bin: "/home/dev/.local/bin",
  root: "/home/dev/sandbox",
} as const

export interface SandboxPaths {
  readonly root: string
  readonly home: string
  readonly ws: string
  readonly tmp: string
  readonly bin: string
}

/** [from, to] pairs, longest `from` first. */
export type PathMap = ReadonlyArray<readonly [string, string]>

/** The CLI's project folder name for a cwd: every char not [A-Za-z0-9-] becomes "-". */
export function encodePath(p: string): string {
  return p.replace(/[^A-Za-z0-9-]/g, "-")
}

/** Path replacements for a sandbox: plain and encoded (project folder) forms. */
export function makePathMap(sb: SandboxPaths): PathMap {
  const pairs: Array<[string, string]> = [
    [sb.ws, PLACEHOLDER.ws],
    [sb.home, PLACEHOLDER.home],
    [sb.tmp, PLACEHOLDER.tmp],
    [sb.bin, PLACEHOLDER.bin],
    [sb.root, PLACEHOLDER.root],
  ]
  const all: Array<[string, string]> = [
    ...pairs,
    ...pairs.map(([a, b]): [string, string] => [encodePath(a), encodePath(b)]),
  ]
  all.sort((a, b) => b[0].length - a[0].length)
  return all
}

export function replacePaths(s: string, map: PathMap): string {
  let out = s
  for (const [from, to] of map) if (from && out.includes(from)) out = out.split(from).join(to)
  return out
}

function redacted(s: string): string {
  return `«redacted: ${s.length} chars»`
}

export function looksLikeSystemPrompt(s: string): boolean {
  return SYSTEM_PROMPT_MARKERS.some((m) => s.includes(m))
}

/** Deep copy of a JSON value with paths replaced, `rendered` text and system-prompt strings blanked. */
export function scrubValue(v: unknown, map: PathMap, underRendered = false): unknown {
  if (typeof v === "string") {
    if (underRendered || looksLikeSystemPrompt(v)) return redacted(v)
    return replacePaths(v, map)
  }
  if (Array.isArray(v)) return v.map((x) => scrubValue(x, map, underRendered))
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      out[replacePaths(k, map)] = scrubValue(x, map, underRendered || k === "rendered")
    }
    return out
  }
  return v
}

/** Whether a transcript record must be dropped. */
export function isDroppedRecord(rec: unknown): boolean {
  if (!rec || typeof rec !== "object") return false
  const r = rec as Record<string, unknown>
  if (typeof r.type === "string" && DROP_RECORD_TYPES.includes(r.type)) return true
  if (r.type === "attachment") {
    const a = r.attachment as Record<string, unknown> | undefined
    if (a && typeof a.type === "string" && DROP_ATTACHMENT_TYPES.includes(a.type)) return true
  }
  return false
}

/** The attachment type a dropped chain record's stub carries (neutral, no content). */
export const SCRUBBED_ATTACHMENT_TYPE = "scrubbed"

/**
 * What stays of a dropped record that is a chain link: its links and stamps
 * only, as an attachment of a neutral type (keys in the CLI's order, so readers
 * that pick links out of an attachment's bytes read it too). Undefined for a
 * record that is no link (no uuid).
 */
export function chainStub(rec: unknown): Record<string, unknown> | undefined {
  if (!rec || typeof rec !== "object") return undefined
  const r = rec as Record<string, unknown>
  if (typeof r.uuid !== "string") return undefined
  const stub: Record<string, unknown> = {
    parentUuid: typeof r.parentUuid === "string" ? r.parentUuid : null,
    isSidechain: r.isSidechain === true,
    attachment: { type: SCRUBBED_ATTACHMENT_TYPE },
    type: "attachment",
    uuid: r.uuid,
  }
  if (typeof r.timestamp === "string") stub.timestamp = r.timestamp
  if (typeof r.sessionId === "string") stub.sessionId = r.sessionId
  return stub
}

/** Scrub one JSONL transcript; unparsable lines are kept with paths replaced. */
export function scrubJsonl(text: string, map: PathMap): string {
  const out: string[] = []
  for (const line of text.split("\n")) {
    if (!line.trim()) continue
    let rec: unknown
    try {
      rec = JSON.parse(line)
    } catch {
      out.push(looksLikeSystemPrompt(line) ? JSON.stringify(redacted(line)) : replacePaths(line, map))
      continue
    }
    if (isDroppedRecord(rec)) {
      const stub = chainStub(rec)
      if (stub) out.push(JSON.stringify(stub))
      continue
    }
    out.push(JSON.stringify(scrubValue(rec, map)))
  }
  return out.length ? `${out.join("\n")}\n` : ""
}

/** Scrub a stdout/stdin frame. */
export function scrubFrame<T>(frame: T, map: PathMap): T {
  return scrubValue(frame, map) as T
}

/** What in a text would leak the system prompt (for tests and a final check). */
export function findLeaks(text: string): string[] {
  const found: string[] = []
  for (const t of DROP_RECORD_TYPES) {
    if (text.includes(`"type":"${t}"`)) found.push(`record type ${t}`)
  }
  if (text.includes('"type":"prompt_snapshot"')) found.push("prompt_snapshot attachment")
  for (const m of SYSTEM_PROMPT_MARKERS) if (text.includes(m)) found.push(`marker "${m}"`)
  return [...new Set(found)]
}
