/**
 * Transcripts shaped like what Claude Code 2.1.332 writes, for the history
 * benchmarks' corpora (bench/corpus.ts): the same record types in the same
 * order with the same key order and sizes (queue operations, prompts,
 * attachments with rendered text, the per-call prompt snapshot, API request
 * records, assistant blocks one per record, tool results with
 * `toolUseResult`, compactions, subagents, titles, last-prompt, cost-state),
 * with filler text in place of real content, every choice drawn from one
 * seeded generator so a corpus is the same every time it is written.
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs"
import { dirname } from "node:path"

const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

export class Rand {
  private readonly next: () => number
  constructor(seed: number) {
    this.next = mulberry32(seed)
  }
  float(): number {
    return this.next()
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1))
  }
  pick<A>(xs: ReadonlyArray<A>): A {
    return xs[Math.floor(this.next() * xs.length)] as A
  }
  hex(n: number): string {
    let s = ""
    for (let i = 0; i < n; i++) s += "0123456789abcdef"[Math.floor(this.next() * 16)]
    return s
  }
  uuid(): string {
    return `${this.hex(8)}-${this.hex(4)}-4${this.hex(3)}-${"89ab"[this.int(0, 3)]}${this.hex(3)}-${this.hex(12)}`
  }
}

/** Filler words; the pool joins them with escaped newlines, so any slice is valid JSON string content. */
export const WORDS =
  "the of and to in is that for it as with was on be by this are or from at which an have not but all were when we there can more one about if out so what up their its into them only some could time these two may first then do any like my now over such our man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three".split(
    " ",
  )

export const buildPool = (rand: Rand, size: number): string => {
  const parts: string[] = []
  let length = 0
  let line = 0
  while (length < size) {
    const word = rand.pick(WORDS)
    parts.push(word)
    length += word.length + 1
    line += word.length + 1
    if (line > 70 + rand.int(0, 40)) {
      parts.push("\\n")
      length += 2
      line = 0
    } else parts.push(" ")
  }
  return parts.join("")
}

export class Filler {
  constructor(
    private readonly pool: string,
    private readonly rand: Rand,
  ) {}
  /** About `n` characters of JSON-safe text (cut at a space, never inside an escape). */
  text(n: number): string {
    const want = Math.max(1, Math.min(n, this.pool.length - 64))
    const start = this.pool.indexOf(" ", this.rand.int(0, this.pool.length - want - 64)) + 1
    let end = this.pool.indexOf(" ", start + want)
    if (end < 0) end = this.pool.length
    return this.pool.slice(start, end)
  }
  sentence(words: number): string {
    const out: string[] = []
    for (let i = 0; i < words; i++) out.push(this.rand.pick(WORDS))
    const s = out.join(" ")
    return s.charAt(0).toUpperCase() + s.slice(1)
  }
}

class Out {
  private readonly fd: number
  private parts: string[] = []
  private pending = 0
  bytes = 0
  constructor(path: string) {
    mkdirSync(dirname(path), { recursive: true })
    this.fd = openSync(path, "w")
  }
  line(text: string): void {
    this.parts.push(text, "\n")
    this.pending += text.length + 1
    this.bytes += Buffer.byteLength(text) + 1
    if (this.pending > 8 * 1024 * 1024) this.flush()
  }
  flush(): void {
    if (this.parts.length === 0) return
    writeSync(this.fd, this.parts.join(""))
    this.parts = []
    this.pending = 0
  }
  close(): void {
    this.flush()
    closeSync(this.fd)
  }
}

export interface SessionSpec {
  readonly id: string
  readonly cwd: string
  readonly branch: string
  readonly targetBytes: number
  readonly startMs: number
  readonly aiTitle: boolean
  readonly customTitle: boolean
  /** No prompt snapshots, API records or listing attachments: a small file for the list series (bench/scale.ts). */
  readonly lean?: boolean
  /** A compaction (boundary and summary records, as the CLI writes them) every this many turns. */
  readonly compactEvery?: number
  /** A subagent's transcript (`agent-<id>.jsonl`): every message a sidechain one of this agent, no titles. */
  readonly agentId?: string
  /**
   * An Agent tool call every `every` turns, its result as the CLI stores a
   * finished foreground agent's; `spawn` writes the agent's own transcript.
   */
  readonly agents?: {
    readonly every: number
    readonly spawn: (call: {
      toolUseId: string
      agentId: string
      prompt: string
      description: string
    }) => void
  }
}

const q = JSON.stringify

/** The first `n` characters of filler, never ending inside an escape. */
const cut = (text: string, n: number): string => text.slice(0, n).replace(/\\$/, "")

const usage = (input: number, output: number) =>
  `{"input_tokens":${input},"cache_creation_input_tokens":0,"cache_read_input_tokens":${input * 3},"output_tokens":${output},"output_tokens_details":{"thinking_tokens":${Math.floor(output / 3)}},"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard","fallback_credit":null}`

/** What was written: the bytes, and the last record of the chain (where more can be appended). */
export interface Written {
  readonly bytes: number
  readonly leaf: string | null
}

/** Writes one session's records, turn by turn, until the file reaches its target size. */
class SessionWriter {
  private readonly out: Out
  private readonly common: string
  /** Where a record says whose chain it is on: the main one, or a subagent's. */
  private readonly side: string
  private clock: number
  private parent: string | null = null
  private msg = 0
  private tool = 0
  private turn = 0

  constructor(
    path: string,
    private readonly spec: SessionSpec,
    private readonly rand: Rand,
    private readonly fill: Filler,
  ) {
    this.out = new Out(path)
    this.common = `"userType":"external","entrypoint":"cli","cwd":${q(spec.cwd)},"sessionId":"${spec.id}","version":"2.1.332","gitBranch":${q(spec.branch)}`
    this.side =
      spec.agentId === undefined ? `"isSidechain":false` : `"isSidechain":true,"agentId":"${spec.agentId}"`
    this.clock = spec.startMs
  }

  private ts(): string {
    this.clock += this.rand.int(5, 4000)
    return new Date(this.clock).toISOString()
  }

  private link(): string {
    return this.parent === null ? "null" : `"${this.parent}"`
  }

  private queue(): void {
    const id = this.spec.id
    this.out.line(
      `{"type":"queue-operation","operation":"enqueue","timestamp":"${this.ts()}","sessionId":"${id}"}`,
    )
    this.out.line(
      `{"type":"queue-operation","operation":"dequeue","timestamp":"${this.ts()}","sessionId":"${id}"}`,
    )
  }

  private attachment(type: string, payload: string, rendered: string | undefined): void {
    const uuid = this.rand.uuid()
    const renderedPart =
      rendered === undefined
        ? ""
        : `,"rendered":[{"content":"<system-reminder>\\n${rendered}\\n</system-reminder>"}],"renderedRole":"system"`
    this.out.line(
      `{"parentUuid":${this.link()},${this.side},"attachment":{"type":"${type}",${payload}},"type":"attachment","uuid":"${uuid}","timestamp":"${this.ts()}"${renderedPart},${this.common}}`,
    )
    this.parent = uuid
  }

  private prompt(text: string, pid: string): void {
    const uuid = this.rand.uuid()
    this.out.line(
      `{"parentUuid":${this.link()},${this.side},"promptId":"${pid}","type":"user","message":{"role":"user","content":[{"type":"text","text":${q(text)}}]},"uuid":"${uuid}","timestamp":"${this.ts()}","permissionMode":"default","promptSource":"cli","sentAtMs":${this.clock},"rowSource":"local","turnOrigin":"cli","turnPosition":{"promptIndex":0,"turnIndex":${this.turn}},"turnAttributionKey":"${uuid}",${this.common}}`,
    )
    this.parent = uuid
  }

  private apiRecords(first: boolean): void {
    const { rand, fill, spec } = this
    if (spec.lean === true) return
    if (first)
      this.out.line(
        `{"type":"api-request-shape","sessionId":"${spec.id}","shapeHash":"${rand.hex(64)}","timestamp":"${this.ts()}","version":"2.1.332","shape":{"system":[{"type":"text","text":"${fill.text(24_000)}"}],"tools":"${fill.text(18_000)}"}}`,
      )
    const blobs = rand.float() < 0.15 ? 2 : 1
    for (let i = 0; i < blobs; i++) {
      // Mostly a few KB; now and then hundreds of KB (a large tool result sent to the API).
      const size = rand.float() < 0.08 ? rand.int(100_000, 400_000) : rand.int(800, 10_000)
      this.out.line(
        `{"type":"api-request-blob","sessionId":"${spec.id}","hash":"${rand.hex(64)}","message":{"role":"user","content":[{"type":"text","text":"${fill.text(size)}"}]}}`,
      )
    }
    this.out.line(
      `{"type":"api-request","sessionId":"${spec.id}","id":"${rand.uuid()}","timestamp":"${this.ts()}","version":"2.1.332","querySource":"repl_main_thread","shapeHash":"${rand.hex(64)}","params":{"model":"claude-opus-5-5","betas":["claude-code-20250219","interleaved-thinking-2025-05-14","context-management-2025-06-27","effort-2025-11-24"],"max_tokens":128000,"thinking":{"type":"adaptive","display":"updates"},"output_config":{"effort":"medium"}},"thread":{"type":"none"},"echoWireToolInputs":false,"keep":0,"tail":["${rand.hex(64)}","${rand.hex(64)}"],"cacheControl":[{"path":["system",0],"value":{"type":"ephemeral"}}],"requestDigest":"${rand.hex(64)}"}`,
    )
  }

  private snapshot(): void {
    if (this.spec.lean === true) return
    this.attachment(
      "prompt_snapshot",
      `"snapshot":{"system":"${this.fill.text(38_000)}","tools":"${this.fill.text(24_000)}"}`,
      undefined,
    )
  }

  private assistant(block: string, stop: string): string {
    const { rand } = this
    const uuid = rand.uuid()
    this.out.line(
      `{"parentUuid":${this.link()},${this.side},"message":{"id":"msg_${rand.hex(24)}","type":"message","role":"assistant","model":"claude-opus-5-5","content":[${block}],"stop_reason":"${stop}","stop_sequence":null,"usage":${usage(rand.int(2000, 90000), rand.int(10, 900))},"stop_details":null},"apiBlockIndex":0,"requestId":"req_${rand.hex(24)}","requestRef":"${rand.uuid()}","requestedModel":"claude-opus-5-5","promptCacheRequested":"5m","type":"assistant","uuid":"${uuid}","timestamp":"${this.ts()}","effort":"medium","perTurnEffort":"medium","madeBy":"model",${this.common}}`,
    )
    this.parent = uuid
    return uuid
  }

  /** A tool's result record after its call, as the CLI stores it (`toolUseResult` beside the content). */
  private toolResult(pid: string, id: string, call: string, content: string, result: () => string): void {
    const uuid = this.rand.uuid()
    this.out.line(
      `{"parentUuid":${this.link()},${this.side},"promptId":"${pid}","type":"user","message":{"role":"user","content":[{"tool_use_id":"${id}","type":"tool_result","content":${content}${content.startsWith("[") ? "" : ',"is_error":false'}}]},"uuid":"${uuid}","timestamp":"${this.ts()}","toolUseResult":${result()},"sourceToolAssistantUUID":"${call}",${this.common}}`,
    )
    this.parent = uuid
    this.tool++
  }

  /** A Bash, Read, Edit or Grep call: its input, its result's content and its `toolUseResult`. */
  private toolShape(kind: number): { input: string; content: string; result: string } {
    const { rand, fill } = this
    const file = `/work/project/src/${rand.pick(WORDS)}/${rand.pick(WORDS)}.ts`
    if (kind === 0) {
      const command = `npm test -- ${rand.pick(WORDS)}`
      const stdout = fill.text(rand.int(200, 8000))
      return {
        input: `{"command":${q(command)},"description":${q(fill.sentence(4))}}`,
        content: `"${stdout}"`,
        result: `{"stdout":"${stdout}","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}`,
      }
    }
    if (kind === 1) {
      const text = fill.text(rand.int(1000, 30_000))
      return {
        input: `{"file_path":${q(file)}}`,
        content: `"${text}"`,
        result: `{"type":"text","file":{"filePath":${q(file)},"content":"${text}","numLines":${rand.int(20, 800)},"startLine":1,"totalLines":${rand.int(20, 800)}}}`,
      }
    }
    if (kind === 2) {
      const before = fill.text(rand.int(40, 400))
      const after = fill.text(rand.int(40, 400))
      return {
        input: `{"file_path":${q(file)},"old_string":"${before}","new_string":"${after}","replace_all":false}`,
        content: `"The file ${file} has been updated successfully."`,
        result: `{"filePath":${q(file)},"oldString":"${before}","newString":"${after}","originalFile":"${fill.text(rand.int(2000, 20_000))}","structuredPatch":[{"oldStart":1,"oldLines":1,"newStart":1,"newLines":1,"lines":["-${cut(before, 60)}","+${cut(after, 60)}"]}],"userModified":false,"replaceAll":false}`,
      }
    }
    const pattern = rand.pick(WORDS)
    const found = fill.text(rand.int(100, 3000))
    return {
      input: `{"pattern":${q(pattern)},"path":"/work/project"}`,
      content: `"${found}"`,
      result: `{"mode":"content","numFiles":${rand.int(1, 30)},"filenames":[],"content":"${found}","numLines":${rand.int(1, 90)}}`,
    }
  }

  private toolCall(pid: string): void {
    const id = `toolu_${this.rand.hex(24)}`
    const kind = this.rand.int(0, 3)
    const { input, content, result } = this.toolShape(kind)
    const name = ["Bash", "Read", "Edit", "Grep"][kind] as string
    const call = this.assistant(
      `{"type":"tool_use","id":"${id}","name":"${name}","input":${input}}`,
      "tool_use",
    )
    this.toolResult(pid, id, call, content, () => result)
  }

  private agentCall(pid: string, spawn: NonNullable<SessionSpec["agents"]>["spawn"]): void {
    const { rand, fill } = this
    const toolUseId = `toolu_${rand.hex(24)}`
    const agentId = `a${rand.hex(16)}`
    const description = fill.sentence(3)
    const prompt = fill.sentence(rand.int(10, 40))
    const call = this.assistant(
      `{"type":"tool_use","id":"${toolUseId}","name":"Agent","input":{"description":${q(description)},"prompt":${q(prompt)},"subagent_type":"general-purpose"}}`,
      "tool_use",
    )
    spawn({ toolUseId, agentId, prompt, description })
    const report = fill.text(rand.int(400, 3000))
    // Drawn after the record's id and time, as the record is written.
    const result = () =>
      `{"status":"completed","prompt":${q(prompt)},"agentId":"${agentId}","agentType":"general-purpose","toolsUsed":["Bash","Read"],"content":[{"type":"text","text":"${report}"}],"resolvedModel":"claude-opus-5-5","totalDurationMs":${rand.int(2000, 90000)},"totalTokens":${rand.int(2000, 90000)},"totalToolUseCount":${rand.int(1, 40)},"usage":${usage(rand.int(2000, 90000), rand.int(10, 900))},"canContinueAgent":true}`
    this.toolResult(pid, toolUseId, call, `[{"type":"text","text":"${report}"}]`, result)
  }

  private compaction(): void {
    const { rand, fill } = this
    const boundary = rand.uuid()
    this.out.line(
      `{"parentUuid":null,"logicalParentUuid":${this.link()},${this.side},"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":"${this.ts()}","uuid":"${boundary}","level":"info","compactMetadata":{"trigger":"auto","preTokens":${rand.int(150_000, 190_000)}},${this.common}}`,
    )
    this.parent = boundary
    const summary = rand.uuid()
    this.out.line(
      `{"parentUuid":"${boundary}",${this.side},"type":"user","message":{"role":"user","content":${q(`This session is being continued from a previous conversation. ${fill.text(6000)}`)}},"isVisibleInTranscriptOnly":true,"isCompactSummary":true,"uuid":"${summary}","timestamp":"${this.ts()}",${this.common}}`,
    )
    this.parent = summary
  }

  /** What the CLI attaches to a session's first prompt. */
  private firstAttachments(): void {
    const { fill, spec } = this
    this.attachment(
      "environment",
      `"snapshot":{"workingDirectory":${q(spec.cwd)},"isWorktree":false,"isGitRepo":true,"platform":"linux","shell":"bash"}`,
      fill.text(900),
    )
    this.attachment(
      "model",
      `"identity":{"modelId":"claude-opus-5-5","marketingName":"Opus 5.5"}`,
      fill.text(300),
    )
    this.attachment(
      "deferred_tools_delta",
      `"addedNames":["CronCreate","CronDelete","WebFetch"]`,
      fill.text(1000),
    )
    this.attachment(
      "agent_listing_delta",
      `"addedTypes":["Explore","general-purpose","Plan"]`,
      fill.text(3400),
    )
    this.attachment("skill_listing", `"content":"${fill.text(6600)}"`, fill.text(6600))
    this.out.line(`{"type":"atis-latch","atis":"","sessionId":"${spec.id}"}`)
  }

  private writeTurn(): void {
    const { rand, fill, spec, out } = this
    this.turn++
    const turn = this.turn
    if (spec.compactEvery !== undefined && turn > 1 && turn % spec.compactEvery === 1) this.compaction()
    const first = turn === 1
    this.queue()
    const pid = rand.uuid()
    const promptText =
      turn === 1
        ? `${fill.sentence(rand.int(4, 10))}\n\n${fill.sentence(rand.int(10, 60))}`
        : fill.sentence(rand.int(3, 40))
    this.prompt(promptText, pid)
    if (first && spec.lean !== true) this.firstAttachments()
    this.attachment("session_context", `"context":{}`, undefined)
    this.attachment("date", `"date":"${new Date(this.clock).toISOString().slice(0, 10)}"`, fill.text(80))
    this.snapshot()
    this.apiRecords(first)
    if (rand.float() < 0.7)
      this.assistant(
        `{"type":"thinking","thinking":"${fill.text(rand.int(100, 1500))}","signature":"sig_${rand.hex(40)}"}`,
        "end_turn",
      )
    const calls = rand.int(0, 4)
    for (let i = 0; i < calls; i++) {
      this.toolCall(pid)
      out.line(
        `{"type":"api-request","sessionId":"${spec.id}","id":"${rand.uuid()}","timestamp":"${this.ts()}","version":"2.1.332","querySource":"repl_main_thread","shapeHash":"${rand.hex(64)}","params":{"model":"claude-opus-5-5","max_tokens":128000},"keep":${i + 1},"tail":["${rand.hex(64)}"]}`,
      )
      if (rand.float() < 0.5) this.snapshot()
      out.line(`{"type":"tools-used","tools":["Bash"],"sessionId":"${spec.id}"}`)
    }
    if (spec.agents !== undefined && turn % spec.agents.every === 0) this.agentCall(pid, spec.agents.spawn)
    this.assistant(`{"type":"text","text":"${fill.text(rand.int(80, 2500))}"}`, "end_turn")
    this.snapshot()
    out.line(
      `{"type":"last-prompt","lastPrompt":${q(promptText.replace(/\n/g, " ").slice(0, 200))},"leafUuid":"${this.parent}","sessionId":"${spec.id}"}`,
    )
    if (first && spec.aiTitle)
      out.line(`{"type":"ai-title","aiTitle":${q(fill.sentence(rand.int(3, 7)))},"sessionId":"${spec.id}"}`)
    if (turn === 2 && spec.customTitle) this.customTitle()
    this.msg++
  }

  private customTitle(): void {
    this.out.line(
      `{"type":"custom-title","customTitle":${q(`Custom ${this.fill.sentence(3)}`)},"sessionId":"${this.spec.id}"}`,
    )
  }

  write(): Written {
    const { spec, out } = this
    while (out.bytes < spec.targetBytes) this.writeTurn()
    if (spec.customTitle && this.turn < 2) this.customTitle()
    out.line(
      `{"type":"cost-state","sessionId":"${spec.id}","totalCostUSD":${(this.msg * 0.07).toFixed(4)},"totalAPIDuration":${this.msg * 900},"totalToolDuration":${this.tool * 300},"totalLinesAdded":0,"totalLinesRemoved":0,"totalDuration":${this.clock - spec.startMs},"startTime":${spec.startMs},"modelUsage":{"claude-opus-5-5":{"inputTokens":${this.msg * 9000},"outputTokens":${this.msg * 80},"costUSD":${(this.msg * 0.07).toFixed(4)}}},"hasUnknownModelCost":false}`,
    )
    out.close()
    return { bytes: out.bytes, leaf: this.parent }
  }
}

export const writeSession = (path: string, spec: SessionSpec, rand: Rand, fill: Filler): Written =>
  new SessionWriter(path, spec, rand, fill).write()

export const encode = (path: string) => path.replace(/[^A-Za-z0-9-]/g, "-")
