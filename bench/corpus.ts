/**
 * A transcript corpus shaped like what Claude Code 2.1.332 writes, for the
 * history benchmark: the same record types in the same order with the same
 * key order and sizes (queue operations, prompts, attachments with rendered
 * text, the per-call prompt snapshot, api-request-shape/blob/request records,
 * assistant blocks one per record, tool results with `toolUseResult`, titles,
 * last-prompt, cost-state), with filler text in place of real content.
 *
 * Written once into bench/corpus/ (git-ignored; BENCH_CORPUS_DIR for
 * another) and reused while its stamp matches:
 * - list/: 1,000 sessions in 25 project folders, about 1.4 GB;
 * - read/: one transcript of about 85 MB.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** BENCH_CORPUS_DIR: another tree's corpus (bench/ab.ts gives both trees one), else bench/corpus/. */
export const corpusRoot =
  process.env.BENCH_CORPUS_DIR ?? join(dirname(fileURLToPath(import.meta.url)), "corpus")

export const LIST_SESSIONS = 1000
export const LIST_BYTES = 1.4e9
export const READ_BYTES = 85e6
const PROJECTS = 25
/** Change when the shape changes, so an old corpus is rewritten. */
const STAMP = "history-corpus-v4"

export interface Corpus {
  /** CLAUDE_CONFIG_DIR of the list corpus. */
  readonly listConfigDir: string
  /** CLAUDE_CONFIG_DIR of the read corpus. */
  readonly readConfigDir: string
  /** The working directory (as recorded) and id of the big transcript. */
  readonly readCwd: string
  readonly readSessionId: string
  readonly listFiles: number
  readonly listBytes: number
  readonly readBytes: number
}

// ---------------------------------------------------------------------------
// Deterministic randomness

export const mulberry32 = (seed: number) => () => {
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

// ---------------------------------------------------------------------------
// Filler text: ASCII words with escaped newlines, so a slice is valid JSON string content

const WORDS =
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

// ---------------------------------------------------------------------------
// Writing

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

// ---------------------------------------------------------------------------
// One session, shaped like 2.1.332's records

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

export const writeSession = (path: string, spec: SessionSpec, rand: Rand, fill: Filler): Written => {
  const out = new Out(path)
  const common = `"userType":"external","entrypoint":"cli","cwd":${q(spec.cwd)},"sessionId":"${spec.id}","version":"2.1.332","gitBranch":${q(spec.branch)}`
  let clock = spec.startMs
  const ts = () => {
    clock += rand.int(5, 4000)
    return new Date(clock).toISOString()
  }
  let parent: string | null = null
  let msg = 0
  let tool = 0
  let turn = 0
  const link = () => (parent === null ? "null" : `"${parent}"`)
  /** Where a record says whose chain it is on: the main one, or a subagent's. */
  const side =
    spec.agentId === undefined ? `"isSidechain":false` : `"isSidechain":true,"agentId":"${spec.agentId}"`

  const queue = () => {
    out.line(
      `{"type":"queue-operation","operation":"enqueue","timestamp":"${ts()}","sessionId":"${spec.id}"}`,
    )
    out.line(
      `{"type":"queue-operation","operation":"dequeue","timestamp":"${ts()}","sessionId":"${spec.id}"}`,
    )
  }
  const attachment = (type: string, payload: string, rendered: string | undefined) => {
    const uuid = rand.uuid()
    const renderedPart =
      rendered === undefined
        ? ""
        : `,"rendered":[{"content":"<system-reminder>\\n${rendered}\\n</system-reminder>"}],"renderedRole":"system"`
    out.line(
      `{"parentUuid":${link()},${side},"attachment":{"type":"${type}",${payload}},"type":"attachment","uuid":"${uuid}","timestamp":"${ts()}"${renderedPart},${common}}`,
    )
    parent = uuid
  }
  const promptId = () => rand.uuid()
  const prompt = (text: string, pid: string) => {
    const uuid = rand.uuid()
    out.line(
      `{"parentUuid":${link()},${side},"promptId":"${pid}","type":"user","message":{"role":"user","content":[{"type":"text","text":${q(text)}}]},"uuid":"${uuid}","timestamp":"${ts()}","permissionMode":"default","promptSource":"cli","sentAtMs":${clock},"rowSource":"local","turnOrigin":"cli","turnPosition":{"promptIndex":0,"turnIndex":${turn}},"turnAttributionKey":"${uuid}",${common}}`,
    )
    parent = uuid
  }
  const apiRecords = (first: boolean) => {
    if (spec.lean === true) return
    if (first)
      out.line(
        `{"type":"api-request-shape","sessionId":"${spec.id}","shapeHash":"${rand.hex(64)}","timestamp":"${ts()}","version":"2.1.332","shape":{"system":[{"type":"text","text":"${fill.text(24_000)}"}],"tools":"${fill.text(18_000)}"}}`,
      )
    const blobs = rand.float() < 0.15 ? 2 : 1
    for (let i = 0; i < blobs; i++) {
      // Mostly a few KB; now and then hundreds of KB (a large tool result sent to the API).
      const size = rand.float() < 0.08 ? rand.int(100_000, 400_000) : rand.int(800, 10_000)
      out.line(
        `{"type":"api-request-blob","sessionId":"${spec.id}","hash":"${rand.hex(64)}","message":{"role":"user","content":[{"type":"text","text":"${fill.text(size)}"}]}}`,
      )
    }
    out.line(
      `{"type":"api-request","sessionId":"${spec.id}","id":"${rand.uuid()}","timestamp":"${ts()}","version":"2.1.332","querySource":"repl_main_thread","shapeHash":"${rand.hex(64)}","params":{"model":"claude-opus-5-5","betas":["claude-code-20250219","interleaved-thinking-2025-05-14","context-management-2025-06-27","effort-2025-11-24"],"max_tokens":128000,"thinking":{"type":"adaptive","display":"updates"},"output_config":{"effort":"medium"}},"thread":{"type":"none"},"echoWireToolInputs":false,"keep":0,"tail":["${rand.hex(64)}","${rand.hex(64)}"],"cacheControl":[{"path":["system",0],"value":{"type":"ephemeral"}}],"requestDigest":"${rand.hex(64)}"}`,
    )
  }
  const snapshot = () =>
    spec.lean === true ||
    attachment(
      "prompt_snapshot",
      `"snapshot":{"system":"${fill.text(38_000)}","tools":"${fill.text(24_000)}"}`,
      undefined,
    )
  const assistant = (block: string, stop: string) => {
    const uuid = rand.uuid()
    out.line(
      `{"parentUuid":${link()},${side},"message":{"id":"msg_${rand.hex(24)}","type":"message","role":"assistant","model":"claude-opus-5-5","content":[${block}],"stop_reason":"${stop}","stop_sequence":null,"usage":${usage(rand.int(2000, 90000), rand.int(10, 900))},"stop_details":null},"apiBlockIndex":0,"requestId":"req_${rand.hex(24)}","requestRef":"${rand.uuid()}","requestedModel":"claude-opus-5-5","promptCacheRequested":"5m","type":"assistant","uuid":"${uuid}","timestamp":"${ts()}","effort":"medium","perTurnEffort":"medium","madeBy":"model",${common}}`,
    )
    parent = uuid
    return uuid
  }
  const toolCall = (pid: string) => {
    const id = `toolu_${rand.hex(24)}`
    const kind = rand.int(0, 3)
    const file = `/work/project/src/${rand.pick(WORDS)}/${rand.pick(WORDS)}.ts`
    let input: string
    let content: string
    let result: string
    if (kind === 0) {
      const command = `npm test -- ${rand.pick(WORDS)}`
      const stdout = fill.text(rand.int(200, 8000))
      input = `{"command":${q(command)},"description":${q(fill.sentence(4))}}`
      content = `"${stdout}"`
      result = `{"stdout":"${stdout}","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}`
    } else if (kind === 1) {
      const text = fill.text(rand.int(1000, 30_000))
      input = `{"file_path":${q(file)}}`
      content = `"${text}"`
      result = `{"type":"text","file":{"filePath":${q(file)},"content":"${text}","numLines":${rand.int(20, 800)},"startLine":1,"totalLines":${rand.int(20, 800)}}}`
    } else if (kind === 2) {
      const before = fill.text(rand.int(40, 400))
      const after = fill.text(rand.int(40, 400))
      input = `{"file_path":${q(file)},"old_string":"${before}","new_string":"${after}","replace_all":false}`
      content = `"The file ${file} has been updated successfully."`
      result = `{"filePath":${q(file)},"oldString":"${before}","newString":"${after}","originalFile":"${fill.text(rand.int(2000, 20_000))}","structuredPatch":[{"oldStart":1,"oldLines":1,"newStart":1,"newLines":1,"lines":["-${cut(before, 60)}","+${cut(after, 60)}"]}],"userModified":false,"replaceAll":false}`
    } else {
      const pattern = rand.pick(WORDS)
      const found = fill.text(rand.int(100, 3000))
      input = `{"pattern":${q(pattern)},"path":"/work/project"}`
      content = `"${found}"`
      result = `{"mode":"content","numFiles":${rand.int(1, 30)},"filenames":[],"content":"${found}","numLines":${rand.int(1, 90)}}`
    }
    const name = ["Bash", "Read", "Edit", "Grep"][kind] as string
    const call = assistant(`{"type":"tool_use","id":"${id}","name":"${name}","input":${input}}`, "tool_use")
    const uuid = rand.uuid()
    out.line(
      `{"parentUuid":${link()},${side},"promptId":"${pid}","type":"user","message":{"role":"user","content":[{"tool_use_id":"${id}","type":"tool_result","content":${content},"is_error":false}]},"uuid":"${uuid}","timestamp":"${ts()}","toolUseResult":${result},"sourceToolAssistantUUID":"${call}",${common}}`,
    )
    parent = uuid
    tool++
  }

  const agentCall = (pid: string, spawn: NonNullable<SessionSpec["agents"]>["spawn"]) => {
    const toolUseId = `toolu_${rand.hex(24)}`
    const agentId = `a${rand.hex(16)}`
    const description = fill.sentence(3)
    const prompt = fill.sentence(rand.int(10, 40))
    const call = assistant(
      `{"type":"tool_use","id":"${toolUseId}","name":"Agent","input":{"description":${q(description)},"prompt":${q(prompt)},"subagent_type":"general-purpose"}}`,
      "tool_use",
    )
    spawn({ toolUseId, agentId, prompt, description })
    const report = fill.text(rand.int(400, 3000))
    const uuid = rand.uuid()
    out.line(
      `{"parentUuid":${link()},${side},"promptId":"${pid}","type":"user","message":{"role":"user","content":[{"tool_use_id":"${toolUseId}","type":"tool_result","content":[{"type":"text","text":"${report}"}]}]},"uuid":"${uuid}","timestamp":"${ts()}","toolUseResult":{"status":"completed","prompt":${q(prompt)},"agentId":"${agentId}","agentType":"general-purpose","toolsUsed":["Bash","Read"],"content":[{"type":"text","text":"${report}"}],"resolvedModel":"claude-opus-5-5","totalDurationMs":${rand.int(2000, 90000)},"totalTokens":${rand.int(2000, 90000)},"totalToolUseCount":${rand.int(1, 40)},"usage":${usage(rand.int(2000, 90000), rand.int(10, 900))},"canContinueAgent":true},"sourceToolAssistantUUID":"${call}",${common}}`,
    )
    parent = uuid
    tool++
  }

  const compaction = () => {
    const boundary = rand.uuid()
    out.line(
      `{"parentUuid":null,"logicalParentUuid":${link()},${side},"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":"${ts()}","uuid":"${boundary}","level":"info","compactMetadata":{"trigger":"auto","preTokens":${rand.int(150_000, 190_000)}},${common}}`,
    )
    parent = boundary
    const summary = rand.uuid()
    out.line(
      `{"parentUuid":"${boundary}",${side},"type":"user","message":{"role":"user","content":${q(`This session is being continued from a previous conversation. ${fill.text(6000)}`)}},"isVisibleInTranscriptOnly":true,"isCompactSummary":true,"uuid":"${summary}","timestamp":"${ts()}",${common}}`,
    )
    parent = summary
  }

  while (out.bytes < spec.targetBytes) {
    turn++
    if (spec.compactEvery !== undefined && turn > 1 && turn % spec.compactEvery === 1) compaction()
    const first = turn === 1
    queue()
    const pid = promptId()
    const promptText =
      turn === 1
        ? `${fill.sentence(rand.int(4, 10))}\n\n${fill.sentence(rand.int(10, 60))}`
        : fill.sentence(rand.int(3, 40))
    prompt(promptText, pid)
    if (first && spec.lean !== true) {
      attachment(
        "environment",
        `"snapshot":{"workingDirectory":${q(spec.cwd)},"isWorktree":false,"isGitRepo":true,"platform":"linux","shell":"bash"}`,
        fill.text(900),
      )
      attachment(
        "model",
        `"identity":{"modelId":"claude-opus-5-5","marketingName":"Opus 5.5"}`,
        fill.text(300),
      )
      attachment(
        "deferred_tools_delta",
        `"addedNames":["CronCreate","CronDelete","WebFetch"]`,
        fill.text(1000),
      )
      attachment("agent_listing_delta", `"addedTypes":["Explore","general-purpose","Plan"]`, fill.text(3400))
      attachment("skill_listing", `"content":"${fill.text(6600)}"`, fill.text(6600))
      out.line(`{"type":"atis-latch","atis":"","sessionId":"${spec.id}"}`)
    }
    attachment("session_context", `"context":{}`, undefined)
    attachment("date", `"date":"${new Date(clock).toISOString().slice(0, 10)}"`, fill.text(80))
    snapshot()
    apiRecords(first)
    if (rand.float() < 0.7)
      assistant(
        `{"type":"thinking","thinking":"${fill.text(rand.int(100, 1500))}","signature":"sig_${rand.hex(40)}"}`,
        "end_turn",
      )
    const calls = rand.int(0, 4)
    for (let i = 0; i < calls; i++) {
      toolCall(pid)
      out.line(
        `{"type":"api-request","sessionId":"${spec.id}","id":"${rand.uuid()}","timestamp":"${ts()}","version":"2.1.332","querySource":"repl_main_thread","shapeHash":"${rand.hex(64)}","params":{"model":"claude-opus-5-5","max_tokens":128000},"keep":${i + 1},"tail":["${rand.hex(64)}"]}`,
      )
      if (rand.float() < 0.5) snapshot()
      out.line(`{"type":"tools-used","tools":["Bash"],"sessionId":"${spec.id}"}`)
    }
    if (spec.agents !== undefined && turn % spec.agents.every === 0) agentCall(pid, spec.agents.spawn)
    assistant(`{"type":"text","text":"${fill.text(rand.int(80, 2500))}"}`, "end_turn")
    snapshot()
    out.line(
      `{"type":"last-prompt","lastPrompt":${q(promptText.replace(/\n/g, " ").slice(0, 200))},"leafUuid":"${parent}","sessionId":"${spec.id}"}`,
    )
    if (first && spec.aiTitle)
      out.line(`{"type":"ai-title","aiTitle":${q(fill.sentence(rand.int(3, 7)))},"sessionId":"${spec.id}"}`)
    if (turn === 2 && spec.customTitle)
      out.line(
        `{"type":"custom-title","customTitle":${q(`Custom ${fill.sentence(3)}`)},"sessionId":"${spec.id}"}`,
      )
    msg++
  }
  if (spec.customTitle && turn < 2)
    out.line(
      `{"type":"custom-title","customTitle":${q(`Custom ${fill.sentence(3)}`)},"sessionId":"${spec.id}"}`,
    )
  out.line(
    `{"type":"cost-state","sessionId":"${spec.id}","totalCostUSD":${(msg * 0.07).toFixed(4)},"totalAPIDuration":${msg * 900},"totalToolDuration":${tool * 300},"totalLinesAdded":0,"totalLinesRemoved":0,"totalDuration":${clock - spec.startMs},"startTime":${spec.startMs},"modelUsage":{"claude-opus-5-5":{"inputTokens":${msg * 9000},"outputTokens":${msg * 80},"costUSD":${(msg * 0.07).toFixed(4)}}},"hasUnknownModelCost":false}`,
  )
  out.close()
  return { bytes: out.bytes, leaf: parent }
}

// ---------------------------------------------------------------------------

export const encode = (path: string) => path.replace(/[^A-Za-z0-9-]/g, "-")

/** Sizes around `mean` (log-normal-ish, from 150 KB to 6 MB), scaled to sum to `total`. */
const sessionSizes = (rand: Rand, count: number, total: number): number[] => {
  const raw: number[] = []
  for (let i = 0; i < count; i++) {
    const u = rand.float() + rand.float() + rand.float() - 1.5 // roughly normal, -1.5..1.5
    raw.push(Math.exp(u * 1.1))
  }
  const sum = raw.reduce((a, b) => a + b, 0)
  return raw.map((r) => Math.min(6e6, Math.max(150e3, (r / sum) * total)))
}

const stampOf = (root: string) => {
  try {
    return readFileSync(join(root, "stamp"), "utf8")
  } catch {
    return ""
  }
}

/** Generate the corpus unless a complete one with the same stamp is there. */
export const ensureCorpus = (log: (line: string) => void = console.log): Corpus => {
  const listConfigDir = join(corpusRoot, "list")
  const readConfigDir = join(corpusRoot, "read")
  const readCwd = "/bench/big-project"
  const readSessionId = new Rand(85).uuid()
  const stampPath = join(corpusRoot, "stamp")
  if (existsSync(stampPath)) {
    const [stamp, listFiles, listBytes, readBytes] = stampOf(corpusRoot).trim().split(" ")
    if (stamp === STAMP)
      return {
        listConfigDir,
        readConfigDir,
        readCwd,
        readSessionId,
        listFiles: Number(listFiles),
        listBytes: Number(listBytes),
        readBytes: Number(readBytes),
      }
  }
  // Only this corpus's own parts: the scale benchmark's corpora live beside them (bench/scale-corpus.ts).
  for (const part of [listConfigDir, readConfigDir, stampPath]) rmSync(part, { recursive: true, force: true })
  const started = Date.now()
  log(
    `corpus: writing ${LIST_SESSIONS} sessions (~${(LIST_BYTES / 1e9).toFixed(1)} GB) and one ${READ_BYTES / 1e6} MB transcript into ${corpusRoot}`,
  )
  const rand = new Rand(1)
  const fill = new Filler(buildPool(rand, 4 * 1024 * 1024), rand)
  // Each session ends with a whole turn, so it runs a little past its target: aim 10% low.
  const sizes = sessionSizes(rand, LIST_SESSIONS, LIST_BYTES * 0.9)
  const baseMs = Date.parse("2026-06-01T08:00:00Z")
  let listBytes = 0
  /** Each project's name: the word drawn for its first session (every session draws one, so the rest of the corpus is as before). */
  const projectWords: string[] = []
  for (let i = 0; i < LIST_SESSIONS; i++) {
    const drawn = rand.pick(WORDS)
    const slot = i % PROJECTS
    projectWords[slot] ??= drawn
    const project = `/home/dev/code/project-${String(slot).padStart(2, "0")}_${projectWords[slot]}`
    const spec: SessionSpec = {
      id: rand.uuid(),
      cwd: project,
      branch: rand.pick(["main", "feature/history", "fix/list-speed", "HEAD"]),
      targetBytes: sizes[i] as number,
      startMs: baseMs + i * 3_600_000 + rand.int(0, 3_000_000),
      aiTitle: rand.float() < 0.6,
      customTitle: rand.float() < 0.1,
    }
    listBytes += writeSession(
      join(listConfigDir, "projects", encode(project), `${spec.id}.jsonl`),
      spec,
      rand,
      fill,
    ).bytes
    if ((i + 1) % 100 === 0) log(`corpus: ${i + 1} sessions, ${(listBytes / 1e9).toFixed(2)} GB`)
  }
  const readSpec: SessionSpec = {
    id: readSessionId,
    cwd: readCwd,
    branch: "main",
    targetBytes: READ_BYTES,
    startMs: baseMs,
    aiTitle: true,
    customTitle: false,
  }
  const readBytes = writeSession(
    join(readConfigDir, "projects", encode(readCwd), `${readSessionId}.jsonl`),
    readSpec,
    new Rand(85),
    fill,
  ).bytes
  writeFileSync(stampPath, `${STAMP} ${LIST_SESSIONS} ${listBytes} ${readBytes}\n`)
  log(`corpus: done in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  return {
    listConfigDir,
    readConfigDir,
    readCwd,
    readSessionId,
    listFiles: LIST_SESSIONS,
    listBytes,
    readBytes,
  }
}
