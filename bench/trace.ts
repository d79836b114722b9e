/**
 * `npm run bench -- trace`: what Agent Trace costs, side by side in one run.
 *
 * 1. Building one commit's record (patch → added lines → ranges with hashes →
 *    record → schema check) against the floor of the work it cannot skip:
 *    parsing the same patch with `diff`'s parsePatch and hashing the same
 *    ranges with Node's native SHA-256. 40 files × 500 added lines, in a
 *    typical mix (the agent's blocks of 12 lines between the person's) and a
 *    worst case (every other line). Interleaved rounds, CPU time, the median
 *    of per-round ratios.
 * 2. The HEAD check the tracker runs after each tool call that could commit
 *    (`git rev-parse --verify -q HEAD^{commit}` in a real repository) against
 *    the floor of starting git at all (`git --version`). Wall time, medians.
 */
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parsePatch } from "diff"
import { Effect } from "effect"
import { git, makeGitWorld } from "../host/testing/git-fixture.ts"
import { nodeGit } from "../host/trace/node-git.ts"
import { additionsOf, attributeFile } from "../trace/attribute.ts"
import { remember, type Fingerprints } from "../trace/fingerprints.ts"
import { headOf } from "../trace/git.ts"
import { buildRecord } from "../trace/record.ts"
import { checkRecord } from "../trace/schema.ts"
import { type Figures, median } from "./workers.ts"

const FILES = 40
const LINES = 500
const ROUNDS = 15
const GIT_ROUNDS = 30

const cpuMs = (run: () => void) => {
  const start = process.cpuUsage()
  run()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000
}
const wallMs = async (run: () => Promise<unknown>) => {
  const start = performance.now()
  await run()
  return performance.now() - start
}

interface Case {
  readonly name: string
  readonly patch: string
  readonly prints: Fingerprints
}

/** FILES new files of LINES lines; `agentWrote(line)` says which lines the agent wrote. */
const makeCase = (name: string, agentWrote: (line: number) => boolean): Case => {
  const patchLines: string[] = []
  const prints: Fingerprints = {}
  for (let f = 0; f < FILES; f++) {
    const path = `src/file${f}.ts`
    patchLines.push(
      `diff --git a/${path} b/${path}`,
      "new file mode 100644",
      "--- /dev/null",
      `+++ b/${path}`,
    )
    patchLines.push(`@@ -0,0 +1,${LINES} @@`)
    const agentLines: string[] = []
    for (let l = 0; l < LINES; l++) {
      const text = l % 10 === 9 ? "}" : `  const value${f}_${l} = compute(${l}, "${f}")`
      patchLines.push(`+${text}`)
      if (agentWrote(l)) agentLines.push(text)
    }
    remember(prints, "/repo", path, agentLines, f % 4 === 0 ? "Explore" : "main")
  }
  return { name, patch: `${patchLines.join("\n")}\n`, prints }
}

const recordOf = (c: Case) => {
  const files = additionsOf(c.patch).map(({ path, added }) => ({
    path,
    ranges: attributeFile(added, c.prints["/repo"]?.[path]),
  }))
  const record = buildRecord({
    id: crypto.randomUUID(),
    timestamp: new Date().toISOString(),
    revision: "a".repeat(40),
    sessionId: "bench",
    toolVersion: "2.1.332",
    files,
    agents: { main: { model: "claude-opus-5-5" }, Explore: { model: "claude-haiku-5-5" } },
  })
  if (!checkRecord(record).ok) throw new Error("the benchmark's record does not validate")
  return record
}

/** The floor: parse the patch and hash each range's text with Node's native SHA-256. */
const floorOf = (c: Case, texts: ReadonlyArray<string>) => {
  let n = parsePatch(c.patch).length
  for (const text of texts) n += createHash("sha256").update(text).digest("hex").length
  return n
}

let sink = 0
const measure = (c: Case) => {
  const record = recordOf(c)
  const lines = c.patch.split("\n")
  // The text of every range, as the record's line numbers name it (each file's lines follow its @@ header).
  const texts: string[] = []
  for (const file of record?.files ?? []) {
    const header = lines.indexOf(`+++ b/${file.path}`) + 2
    for (const conversation of file.conversations)
      for (const range of conversation.ranges)
        texts.push(
          lines
            .slice(header + range.start_line - 1, header + range.end_line)
            .map((l) => l.slice(1))
            .join("\n"),
        )
  }
  floorOf(c, texts)
  const ours: number[] = []
  const floor: number[] = []
  const ratios: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const a = cpuMs(() => {
      sink += recordOf(c)?.files.length ?? 0
    })
    const b = cpuMs(() => {
      sink += floorOf(c, texts)
    })
    ours.push(a)
    floor.push(b)
    ratios.push(a / b)
  }
  console.log(`${c.name}: ${FILES} files × ${LINES} added lines, ${texts.length} ranges`)
  console.log(`  record built, hashed and checked: ${median(ours).toFixed(1)} ms CPU (median of ${ROUNDS})`)
  console.log(`  floor (parsePatch + native SHA-256 of the ranges): ${median(floor).toFixed(1)} ms CPU`)
  console.log(`  ratio per round: ${ratios.map((r) => r.toFixed(2)).join(" ")}`)
  return median(ratios)
}

export const main = async (): Promise<Figures> => {
  // Typical: the agent's blocks of 12 lines, the person's 4 lines between them.
  const typical = measure(makeCase("typical", (l) => l % 16 < 12))
  // Worst case: every other line the agent's, so nearly every line is a range of its own.
  measure(makeCase("worst case", (l) => l % 2 === 0))

  // The HEAD check, in a real repository.
  const world = makeGitWorld("cvg-trace-bench-")
  const repo = world.repo("repo")
  git(repo, "rev-parse", "HEAD")
  const run = nodeGit()
  const empty = mkdtempSync(join(tmpdir(), "cvg-trace-bench-cwd-"))
  const heads: number[] = []
  const spawns: number[] = []
  for (let round = 0; round < GIT_ROUNDS; round++) {
    heads.push(await wallMs(() => Effect.runPromise(headOf(run, repo))))
    spawns.push(await wallMs(() => Effect.runPromise(run(empty, ["--version"]))))
  }
  world.cleanup()
  rmSync(empty, { recursive: true, force: true })
  const headMs = median(heads)
  const spawnMs = median(spawns)
  console.log(`HEAD check after a tool call: ${headMs.toFixed(1)} ms wall (median of ${GIT_ROUNDS})`)
  console.log(`  git --version (floor: starting git at all): ${spawnMs.toFixed(1)} ms wall`)
  console.log(`(checksum ${sink > 0 ? "ok" : "none"})`)
  console.log(
    `trace: a ${FILES * LINES}-line commit's record ${typical.toFixed(2)}x its floor; HEAD check ${(headMs / spawnMs).toFixed(2)}x a bare git start (${headMs.toFixed(1)} ms)`,
  )
  return {
    "record over floor": typical,
    "HEAD check ms": headMs,
    "HEAD check over git start": headMs / spawnMs,
  }
}
