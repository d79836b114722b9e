/**
 * The history benchmarks' corpora, each written once (bench/transcripts.ts
 * shapes every session) into bench/corpus/ (git-ignored; BENCH_CORPUS_DIR
 * for another) and reused while its stamp matches:
 *
 * - list/, read/ (`ensureCorpus`, history and isolation): 1,000 sessions in
 *   25 project folders, about 1.4 GB; one transcript of about 85 MB;
 * - scale/read-<MB>/: one session of that size, a long-running one's shape:
 *   compacted every 40 turns, an Agent call every 10 turns with each agent's
 *   own transcript (`<session>/subagents/agent-<id>.jsonl` and its
 *   `.meta.json`, as 2.1.332 writes them), about 40% of the bytes;
 * - scale/huge-<MB>/: a 4 MB transcript whose last turn holds one tool
 *   result record of that size (half in `content`, half in
 *   `toolUseResult.stdout`, as the CLI stores a command's output twice);
 * - scale/list-<N>/: N small sessions (no snapshots or API records: a list
 *   reads only each file's ends), 1,000 per project folder; each smaller
 *   set copies the largest one's first files (not links: the readers, like
 *   the host's broker, refuse a linked file).
 */
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { buildPool, encode, Filler, Rand, type SessionSpec, WORDS, writeSession } from "./transcripts.ts"

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
  // Only this corpus's own parts: the scale benchmark's corpora live beside them (bench/corpus.ts).
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

// ---------------------------------------------------------------------------
// The scale corpora

export const scaleRoot = join(corpusRoot, "scale")
const SCALE_STAMP = "scale-corpus-v3"
const BASE_MS = Date.parse("2026-06-01T08:00:00Z")
const PER_PROJECT = 1000

/** A session to read: its config dir, recorded cwd and id, its files (the transcript first) and their size. */
export interface ReadTarget {
  readonly configDir: string
  readonly cwd: string
  readonly id: string
  readonly path: string
  /** Every file a read of it reads: the transcript, then its subagents'. */
  readonly paths: ReadonlyArray<string>
  readonly bytes: number
}

let filler: { rand: Rand; fill: Filler } | undefined
const fillerOf = () => {
  if (filler === undefined) {
    const rand = new Rand(7)
    filler = { rand, fill: new Filler(buildPool(rand, 4 * 1024 * 1024), rand) }
  }
  return filler
}

/** Run `write` unless `dir` holds a stamp of this version with the same key; the stamp keeps what it returned. */
const once = <A>(dir: string, key: string, write: () => A, log: (line: string) => void): A => {
  const stampPath = join(dir, "stamp")
  if (existsSync(stampPath)) {
    const stamp = JSON.parse(readFileSync(stampPath, "utf8")) as { stamp: string; key: string; value: A }
    if (stamp.stamp === SCALE_STAMP && stamp.key === key) return stamp.value
  }
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const started = Date.now()
  const value = write()
  writeFileSync(stampPath, JSON.stringify({ stamp: SCALE_STAMP, key, value }))
  log(`corpus: ${dir} written in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  return value
}

const spec = (
  id: string,
  cwd: string,
  targetBytes: number,
  extra: Partial<SessionSpec> = {},
): SessionSpec => ({
  id,
  cwd,
  branch: "main",
  targetBytes,
  startMs: BASE_MS,
  aiTitle: true,
  customTitle: false,
  ...extra,
})

/** Share of a read target's bytes in its subagents' transcripts. */
const AGENT_SHARE = 0.4
const AGENT_EVERY = 10

/** One session of about `mb` MB: compacted every 40 turns, with a subagent every 10 turns (see the header). */
export const ensureReadTarget = (mb: number, log: (line: string) => void = console.log): ReadTarget => {
  const configDir = join(scaleRoot, `read-${mb}`)
  return once(
    configDir,
    `${mb}`,
    () => {
      const { rand, fill } = fillerOf()
      const cwd = `/bench/read-${mb}`
      const id = rand.uuid()
      const dir = join(configDir, "projects", encode(cwd))
      const path = join(dir, `${id}.jsonl`)
      const mainBytes = mb * 1e6 * (1 - AGENT_SHARE)
      // The main transcript's turns average ~200 KB: its agent calls, and each agent's size, follow from that.
      const agentBytes = (mb * 1e6 * AGENT_SHARE) / Math.max(1, mainBytes / 200e3 / AGENT_EVERY)
      const agentPaths: string[] = []
      let bytes = 0
      const spawn = (call: { toolUseId: string; agentId: string; prompt: string; description: string }) => {
        const agentDir = join(dir, id, "subagents")
        const agentPath = join(agentDir, `agent-${call.agentId}.jsonl`)
        const agentSpec = spec(id, cwd, agentBytes * (0.5 + rand.float()), {
          agentId: call.agentId,
          aiTitle: false,
        })
        bytes += writeSession(agentPath, agentSpec, rand, fill).bytes
        writeFileSync(
          join(agentDir, `agent-${call.agentId}.meta.json`),
          JSON.stringify(
            {
              agentType: "general-purpose",
              isBuiltIn: true,
              description: call.description,
              toolUseId: call.toolUseId,
              spawnDepth: 1,
              requestShape: "foreground",
              model: "claude-opus-5-5",
              finished: true,
            },
            null,
            2,
          ),
        )
        agentPaths.push(agentPath)
      }
      const written = writeSession(
        path,
        spec(id, cwd, mainBytes, { compactEvery: 40, agents: { every: AGENT_EVERY, spawn } }),
        rand,
        fill,
      )
      bytes += written.bytes
      return { configDir, cwd, id, path, paths: [path, ...agentPaths], bytes }
    },
    log,
  )
}

/** A 4 MB transcript whose last turn is one Bash call with a tool result record of about `mb` MB. */
export const ensureHugeRecord = (mb: number, log: (line: string) => void = console.log): ReadTarget => {
  const configDir = join(scaleRoot, `huge-${mb}`)
  return once(
    configDir,
    `${mb}`,
    () => {
      const { rand, fill } = fillerOf()
      const cwd = `/bench/huge-${mb}`
      const id = rand.uuid()
      const path = join(configDir, "projects", encode(cwd), `${id}.jsonl`)
      const written = writeSession(path, spec(id, cwd, 4e6), rand, fill)
      const common = `"userType":"external","entrypoint":"cli","cwd":${JSON.stringify(cwd)},"sessionId":"${id}","version":"2.1.332","gitBranch":"main"`
      const prompt = rand.uuid()
      const call = rand.uuid()
      const result = rand.uuid()
      const toolId = `toolu_${rand.hex(24)}`
      const piece = fill.text(64 * 1024)
      const half = Math.floor((mb * 1e6) / 2)
      const stdout = piece
        .repeat(Math.ceil(half / piece.length))
        .slice(0, half)
        .replace(/\\+$/, "")
      const lines = [
        `{"parentUuid":"${written.leaf}","isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"text","text":"print the whole log"}]},"uuid":"${prompt}","timestamp":"2026-06-01T09:00:00.000Z",${common}}`,
        `{"parentUuid":"${prompt}","isSidechain":false,"message":{"id":"msg_huge","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"tool_use","id":"${toolId}","name":"Bash","input":{"command":"cat build.log","description":"Print the log"}}],"stop_reason":"tool_use"},"type":"assistant","uuid":"${call}","timestamp":"2026-06-01T09:00:01.000Z",${common}}`,
        `{"parentUuid":"${call}","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"${toolId}","type":"tool_result","content":"${stdout}","is_error":false}]},"uuid":"${result}","timestamp":"2026-06-01T09:00:09.000Z","toolUseResult":{"stdout":"${stdout}","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false},"sourceToolAssistantUUID":"${call}",${common}}`,
        `{"parentUuid":"${result}","isSidechain":false,"message":{"id":"msg_after","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"text","text":"The log is printed above."}],"stop_reason":"end_turn"},"type":"assistant","uuid":"${rand.uuid()}","timestamp":"2026-06-01T09:00:10.000Z",${common}}`,
      ]
      for (const line of lines) appendFileSync(path, `${line}\n`)
      return { configDir, cwd, id, path, paths: [path], bytes: statSync(path).size }
    },
    log,
  )
}

/** `count` small sessions; the largest set is written, smaller ones are copies of its first files. */
export const ensureListCorpus = (
  count: number,
  largest: number,
  log: (line: string) => void = console.log,
): string => {
  const sourceDir = join(scaleRoot, `list-${largest}`)
  once(
    sourceDir,
    `${largest}`,
    () => {
      const rand = new Rand(11)
      const fill = new Filler(buildPool(rand, 1024 * 1024), rand)
      for (let i = 0; i < largest; i++) {
        const cwd = `/home/dev/code/project-${String(Math.floor(i / PER_PROJECT)).padStart(2, "0")}`
        const id = rand.uuid()
        const s = spec(id, cwd, 4000, {
          lean: true,
          startMs: BASE_MS + i * 60_000,
          aiTitle: rand.float() < 0.6,
          customTitle: rand.float() < 0.1,
        })
        writeSession(join(sourceDir, "projects", encode(cwd), `${id}.jsonl`), s, rand, fill)
        if ((i + 1) % 10_000 === 0) log(`corpus: ${i + 1} list sessions`)
      }
      return largest
    },
    log,
  )
  if (count === largest) return sourceDir
  const dir = join(scaleRoot, `list-${count}`)
  once(
    dir,
    `${count} of ${largest}`,
    () => {
      const projects = join(sourceDir, "projects")
      let left = count
      for (const folder of readdirSync(projects).sort()) {
        if (left <= 0) break
        mkdirSync(join(dir, "projects", folder), { recursive: true })
        for (const name of readdirSync(join(projects, folder)).sort()) {
          if (left-- <= 0) break
          copyFileSync(join(projects, folder, name), join(dir, "projects", folder, name))
        }
      }
      return count
    },
    log,
  )
  return dir
}

/** Delete every scale corpus. */
export const cleanScaleCorpus = (): void => rmSync(scaleRoot, { recursive: true, force: true })
