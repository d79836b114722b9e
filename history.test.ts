import { readdirSync, readFileSync } from "node:fs"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { NodeFsLayer, nodeFs } from "./testkit/node-fs.ts"
import {
  chainOf,
  encodeCwd,
  type ListParams,
  listShardKey,
  listSessions,
  projectDir,
  promptCount,
  promptUuidAt,
  readChain,
  readSession,
  rewindTarget,
} from "./history.ts"
import { type FileEnds, Fs, type FsShape, Storage } from "./sdk/plugin-api.ts"
import type { SessionTranscript } from "./sdk/protocol.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"

const HOME = "/home/user"
const CONFIG = `${HOME}/.claude`
const WS = "/work/app"
const PROJECT = `${CONFIG}/projects/-work-app`

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`
const jsonl = (records: ReadonlyArray<unknown>) => `${records.map((r) => JSON.stringify(r)).join("\n")}\n`

/** Records shaped like CLI 2.1.332's (key order included: the reader looks at first bytes). */
const rec = {
  queue: (op: string) => ({
    type: "queue-operation",
    operation: op,
    timestamp: "2026-11-01T10:00:00.000Z",
    sessionId: "s",
  }),
  user: (id: string, parent: string | null, text: string, extra: Record<string, unknown> = {}) => ({
    parentUuid: parent,
    isSidechain: false,
    promptId: "p",
    type: "user",
    message: { role: "user", content: [{ type: "text", text }] },
    uuid: id,
    timestamp: "2026-11-01T10:00:01.000Z",
    cwd: WS,
    sessionId: "s",
    gitBranch: "main",
    ...extra,
  }),
  assistant: (id: string, parent: string, text: string) => ({
    parentUuid: parent,
    isSidechain: false,
    message: { id: `msg_${id}`, type: "message", role: "assistant", content: [{ type: "text", text }] },
    type: "assistant",
    uuid: id,
    timestamp: "2026-11-01T10:00:02.000Z",
    cwd: WS,
    gitBranch: "main",
  }),
  attachment: (id: string, parent: string, payload: unknown = { type: "date", date: "2026-11-01" }) => ({
    parentUuid: parent,
    isSidechain: false,
    attachment: payload,
    type: "attachment",
    uuid: id,
    timestamp: "2026-11-01T10:00:01.500Z",
    rendered: [{ content: "<system-reminder>today</system-reminder>" }],
    gitBranch: "main",
  }),
  blob: (size: number) => ({
    type: "api-request-blob",
    sessionId: "s",
    hash: "h",
    message: { text: "x".repeat(size) },
  }),
  customTitle: (title: string) => ({ type: "custom-title", customTitle: title, sessionId: "s" }),
  aiTitle: (title: string) => ({ type: "ai-title", aiTitle: title, sessionId: "s" }),
}

/** A memory broker's Fs with chosen modification times, recording what is read. */
const world = (files: Record<string, string>, mtimes: Record<string, number> = {}) => {
  const broker = makeMemoryBroker({ home: HOME, files })
  const reads: Array<{ op: string; path: string; bytes?: number }> = []
  const base = broker.api.fs
  const fs: FsShape = {
    ...base,
    stat: (path) => {
      reads.push({ op: "stat", path })
      return Effect.map(base.stat(path), (s) =>
        s === null ? s : { ...s, mtimeMs: mtimes[path] ?? s.mtimeMs },
      )
    },
    readEnds: (paths, head, tail, visit) =>
      base.readEnds!(paths, head, tail, (i, ends) => {
        const path = paths[i] as string
        // Sizes only (no bytes asked for) stand for a stat.
        if (head === 0 && tail === 0) reads.push({ op: "stat", path })
        else reads.push({ op: "ends", path, bytes: (ends?.head.length ?? 0) + (ends?.tail.length ?? 0) })
        visit(i, ends === null ? ends : { ...ends, mtimeMs: mtimes[path] ?? ends.mtimeMs })
      }),
    readRange: (path, start, end) => {
      reads.push({ op: "range", path, bytes: end - start })
      return base.readRange(path, start, end)
    },
    read: (path) => {
      reads.push({ op: "read", path })
      return base.read(path)
    },
    stream: (path, start) => {
      reads.push({ op: "stream", path })
      return base.stream(path, start)
    },
  }
  /** The storage keys written, in order. */
  const writes: string[] = []
  const storage = {
    ...broker.api.storage,
    set: (key: string, value: unknown) => {
      writes.push(key)
      return broker.api.storage.set(key, value)
    },
  }
  const run = <A>(effect: Effect.Effect<A, never, Fs | Storage>) =>
    Effect.runPromise(
      effect.pipe(Effect.provide(Layer.succeed(Fs, fs)), Effect.provide(Layer.succeed(Storage, storage))),
    )
  return { run, reads, broker, fs, writes }
}

const onDisk = <A>(effect: Effect.Effect<A, never, Fs | Storage>) =>
  Effect.runPromise(
    effect.pipe(
      Effect.provide(NodeFsLayer),
      Effect.provide(Layer.succeed(Storage, makeMemoryBroker().api.storage)),
    ),
  )
const recordedSession = (scenario: string) => {
  const file =
    readdirSync(`testdata/${scenario}/projects/-home-dev-ws`).find((f) => f.endsWith(".jsonl")) ?? ""
  return { config: `testdata/${scenario}`, cwd: "/home/dev/ws", id: file.replace(".jsonl", "") }
}

afterEach(() => vi.restoreAllMocks())

describe("where sessions live", () => {
  it("encodes every character that is not a letter, digit or hyphen", () => {
    expect(encodeCwd("/home/dev/my_app.v2")).toBe("-home-dev-my-app-v2")
    expect(encodeCwd("/tmp/ä-b")).toBe("-tmp---b")
  })

  it("caps a long folder name and adds the CLI's hash of the path", () => {
    const long = `/home/dev/${"x".repeat(300)}`
    const encoded = encodeCwd(long)
    expect(encoded.slice(0, 200)).toBe(long.replace(/[^A-Za-z0-9-]/g, "-").slice(0, 200))
    expect(encoded).toMatch(/^.{200}-[0-9a-z]+$/)
  })

  it("resolves the working directory before encoding it", async () => {
    const broker = makeMemoryBroker({
      home: HOME,
      files: { "/real/app/x": "" },
      links: { [WS]: "/real/app" },
    })
    const dir = await Effect.runPromise(
      Effect.provide(projectDir(CONFIG, WS), Layer.succeed(Fs, broker.api.fs)),
    )
    expect(dir).toBe(`${CONFIG}/projects/-real-app`)
  })
})

describe("list_sessions", () => {
  const prompt = (n: number, text: string) => [
    rec.queue("enqueue"),
    rec.queue("dequeue"),
    rec.user(uuid(n * 10 + 1), null, text),
    rec.assistant(uuid(n * 10 + 2), uuid(n * 10 + 1), "answer"),
  ]
  const files = {
    // custom title wins over the AI title and the prompt
    [`${PROJECT}/${uuid(1)}.jsonl`]: jsonl([
      ...prompt(1, "first prompt A"),
      rec.aiTitle("AI A"),
      rec.customTitle("Custom A"),
    ]),
    // AI title over the prompt
    [`${PROJECT}/${uuid(2)}.jsonl`]: jsonl([...prompt(2, "first prompt B"), rec.aiTitle("AI B")]),
    // the prompt's first line (a meta record before it is no prompt)
    [`${PROJECT}/${uuid(3)}.jsonl`]: jsonl([
      rec.user(uuid(39), null, "<local-command-caveat>x</local-command-caveat>", { isMeta: true }),
      ...prompt(3, "\nFix the parser\nand more"),
    ]),
    // the rename's sidecar wins over the records
    [`${PROJECT}/${uuid(4)}.jsonl`]: jsonl([...prompt(4, "first prompt D"), rec.customTitle("Old D")]),
    [`${PROJECT}/${uuid(4)}/custom-title.json`]: JSON.stringify({ customTitle: "Renamed D" }),
    // large: the title sits in the tail, megabytes of records in between
    [`${PROJECT}/${uuid(5)}.jsonl`]: jsonl([
      ...prompt(5, "big session"),
      ...Array.from({ length: 40 }, () => rec.blob(50_000)),
      rec.customTitle("Big title"),
    ]),
    // not sessions
    [`${PROJECT}/agent-a1.jsonl`]: jsonl(prompt(6, "old sidechain file")),
    [`${PROJECT}/notes.txt`]: "hello",
    [`${PROJECT}/${uuid(7)}.jsonl`]: jsonl([rec.user(uuid(71), null, "side", { isSidechain: true })]),
    [`${PROJECT}/${uuid(8)}.jsonl`]: jsonl([rec.queue("enqueue")]),
    // another project
    [`${CONFIG}/projects/-other/${uuid(9)}.jsonl`]: jsonl(prompt(9, "elsewhere")),
  }
  const mtimes = Object.fromEntries(
    [1, 2, 3, 4, 5, 7, 8].map((n) => [`${PROJECT}/${uuid(n)}.jsonl`, 1_000_000 + n * 1000]),
  )
  mtimes[`${CONFIG}/projects/-other/${uuid(9)}.jsonl`] = 1_000_000 + 3500

  it("titles by priority, newest first, with times, cwd, branch and size", async () => {
    const { run } = world(files, mtimes)
    const page = await run(listSessions(CONFIG, { cwd: WS }))
    expect(page.sessions.map((s) => [s.session_id, s.title])).toEqual([
      [uuid(5), "Big title"],
      [uuid(4), "Renamed D"],
      [uuid(3), "Fix the parser"],
      [uuid(2), "AI B"],
      [uuid(1), "Custom A"],
    ])
    expect(page.cursor).toBeUndefined()
    expect(page.sessions[0]).toMatchObject({
      cwd: WS,
      branch: "main",
      created_at: "2026-11-01T10:00:00.000Z",
      modified_at: new Date(1_005_000).toISOString(),
    })
    expect(page.sessions[0]?.size_bytes).toBe(
      new TextEncoder().encode(files[`${PROJECT}/${uuid(5)}.jsonl`]).length,
    )
  })

  it("reads only a head and a tail of each file", async () => {
    const { run, reads } = world(files, mtimes)
    await run(listSessions(CONFIG, { cwd: WS }))
    expect(reads.filter((r) => r.op === "stream")).toEqual([])
    const big = reads.filter((r) => r.path === `${PROJECT}/${uuid(5)}.jsonl`)
    // One open for both ends, size and times: no stat, no second read.
    expect(big.map((r) => r.op)).toEqual(["ends"])
    expect(big.reduce((n, r) => n + (r.bytes ?? 0), 0)).toBeLessThan(16 * 1024)
  })

  it("lists every project without a cwd", async () => {
    const { run } = world(files, mtimes)
    const page = await run(listSessions(CONFIG))
    expect(page.sessions.map((s) => s.title)).toEqual([
      "Big title",
      "Renamed D",
      "elsewhere",
      "Fix the parser",
      "AI B",
      "Custom A",
    ])
  })

  it("pages with an opaque cursor, skipping files that are no sessions", async () => {
    const { run } = world(files, mtimes)
    const seen: string[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = await run(listSessions(CONFIG, { cwd: WS, limit: 2, ...(cursor ? { cursor } : {}) }))
      seen.push(...page.sessions.map((s) => s.title))
      cursor = page.cursor
      pages++
    } while (cursor !== undefined && pages < 10)
    expect(seen).toEqual(["Big title", "Renamed D", "Fix the parser", "AI B", "Custom A"])
  })

  it("answers an empty page for a folder that does not exist", async () => {
    const { run } = world(files, mtimes)
    expect(await run(listSessions(CONFIG, { cwd: "/nowhere" }))).toEqual({ sessions: [] })
  })

  it("lists recorded sessions with the first prompt as title", async () => {
    const page = await onDisk(listSessions("testdata/resume"))
    expect(page.sessions.length).toBe(2)
    for (const s of page.sessions) expect(s).toMatchObject({ title: "Question one", cwd: "/home/dev/ws" })
  })

  it("a page smaller than the folder stats every file and reads only what the page needs", async () => {
    const { run, reads } = world(files, mtimes)
    const page = await run(listSessions(CONFIG, { cwd: WS, limit: 2 }))
    expect(page.sessions.map((s) => s.title)).toEqual(["Big title", "Renamed D"])
    expect(reads.filter((r) => r.op === "stat").length).toBe(7)
    // Newest first: two files that are no sessions make room for the next two.
    expect(reads.filter((r) => r.op === "ends").map((r) => r.path)).toEqual(
      [8, 7, 5, 4].map((n) => `${PROJECT}/${uuid(n)}.jsonl`),
    )
  })

  it("works on a host without readEnds: stat and byte ranges instead", async () => {
    const { fs } = world(files, mtimes)
    const { readEnds: _none, ...ranges } = fs
    const page = await Effect.runPromise(
      listSessions(CONFIG, { cwd: WS }).pipe(
        Effect.provide(Layer.succeed(Fs, ranges)),
        Effect.provide(Layer.succeed(Storage, makeMemoryBroker().api.storage)),
      ),
    )
    const { run } = world(files, mtimes)
    expect(page).toEqual(await run(listSessions(CONFIG, { cwd: WS })))
  })
})

describe("list_sessions over an asynchronous broker", () => {
  it("reads every file in one readEnds call, takes visits in any order, and lists the same page", async () => {
    const many: Record<string, string> = {}
    const mtimes: Record<string, number> = {}
    for (let n = 1; n <= 60; n++) {
      const path = `${PROJECT}/${uuid(n)}.jsonl`
      many[path] = jsonl([rec.queue("enqueue"), rec.user(uuid(1000 + n), null, `prompt ${n}`)])
      mtimes[path] = 1_000_000 + n
    }
    const { fs } = world(many, mtimes)
    const calls: number[] = []
    // Each file visited after its own delay, so visits arrive out of order, and
    // its bytes overwritten once the visit returns (they are lent).
    const slow: FsShape = {
      ...fs,
      readEnds: (paths, head, tail, visit) =>
        Effect.gen(function* () {
          calls.push(paths.length)
          const lent: Array<FileEnds | null> = []
          yield* fs.readEnds!(paths, head, tail, (i, e) => {
            lent[i] = e && { ...e, head: e.head.slice(), tail: e.tail.slice() }
          })
          yield* Effect.forEach(
            paths,
            (path, i) =>
              Effect.gen(function* () {
                yield* Effect.sleep(`${(path.charCodeAt(path.length - 7) % 5) + 1} millis`)
                const e = lent[i] ?? null
                visit(i, e)
                e?.head.fill(0)
                e?.tail.fill(0)
              }),
            { concurrency: "unbounded", discard: true },
          )
        }),
    }
    const page = await Effect.runPromise(
      listSessions(CONFIG, { cwd: WS, limit: 100 }).pipe(
        Effect.provide(Layer.succeed(Fs, slow)),
        Effect.provide(Layer.succeed(Storage, makeMemoryBroker().api.storage)),
      ),
    )
    expect(page.sessions.map((s) => s.title)).toEqual(
      Array.from({ length: 60 }, (_, i) => `prompt ${60 - i}`),
    )
    expect(calls).toEqual([60])
  })
})

describe("list_sessions: the first prompt cut by the head", () => {
  /** A session whose first prompt is `text`, with `before` records ahead of it. */
  const session = (text: string, before: ReadonlyArray<unknown> = []) =>
    jsonl([
      rec.queue("enqueue"),
      ...before,
      rec.user(uuid(1), null, text),
      rec.assistant(uuid(2), uuid(1), "answer"),
    ])
  const titleOf = async (content: string) => {
    const { run, reads } = world({ [`${PROJECT}/${uuid(1)}.jsonl`]: content })
    const page = await run(listSessions(CONFIG, { cwd: WS }))
    return { title: page.sessions[0]?.title, reads }
  }
  /** A prompt whose JSON escape of `char` is cut by the head's end after its first `keep` bytes. */
  const cutAt = (char: string, keep: number) => {
    const probe = session("@")
    const textStart = probe.indexOf('"text":"@"') + '"text":"'.length
    return `${"A".repeat(2048 - keep - textStart)}${char} and more\n${"B".repeat(5000)}`
  }

  it("takes the first line of a long prompt from the head, escapes decoded", async () => {
    const first = 'Fix "the" parser ✓ now'
    const { title, reads } = await titleOf(session(`\n  ${first}  \nsecond line ${"x".repeat(10_000)}`))
    expect(title).toBe(first)
    expect(reads.filter((r) => r.op !== "ends")).toEqual([])
  })

  it("drops an escape the head's end cuts in two", async () => {
    const A = (text: string, char: string) => "A".repeat(text.indexOf(char))
    // `\` of `\"` is the head's last byte
    const quote = cutAt('"', 1)
    expect((await titleOf(session(quote))).title).toBe(A(quote, '"'))
    // `\u00` of `\u0001`
    const control = cutAt("\u0001", 4)
    expect((await titleOf(session(control))).title).toBe(A(control, "\u0001"))
    // `\\` (an escaped backslash) whole at the end: kept
    const backslash = cutAt("\\", 2)
    expect((await titleOf(session(backslash))).title).toBe(`${A(backslash, "\\")}\\`)
  })

  it("reads further when the first prompt lies beyond the head", async () => {
    const padding = Array.from({ length: 3 }, (_, i) =>
      rec.attachment(uuid(50 + i), uuid(49), { pad: "p".repeat(1000) }),
    )
    const { title, reads } = await titleOf(session("Deep prompt", padding))
    expect(title).toBe("Deep prompt")
    expect(reads.filter((r) => r.op === "range").map((r) => r.bytes)).toEqual([64 * 1024])
  })
})

describe("list_sessions: the summary cache in plugin storage", () => {
  const A = `${PROJECT}/${uuid(1)}.jsonl`
  const B = `${PROJECT}/${uuid(2)}.jsonl`
  const C = `${PROJECT}/${uuid(3)}.jsonl`
  const SHARD = listShardKey(PROJECT)
  const session = (n: number, text: string, extra: ReadonlyArray<unknown> = []) =>
    jsonl([rec.queue("enqueue"), rec.user(uuid(n * 10), null, text), ...extra])
  /** The background write of the cache lands after the answer. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20))
  const setup = () => {
    const mtimes: Record<string, number> = { [A]: 3000, [B]: 2000, [C]: 1000 }
    const w = world({ [A]: session(1, "alpha"), [B]: session(2, "beta"), [C]: session(3, "gamma") }, mtimes)
    const list = async (params: ListParams = { cwd: WS }) => {
      w.reads.length = 0
      w.writes.length = 0
      const page = await w.run(listSessions(CONFIG, params))
      await settle()
      return page
    }
    const ops = () => w.reads.map((r) => `${r.op} ${r.path.slice(PROJECT.length + 1, PROJECT.length + 9)}`)
    const shard = (key = SHARD) => JSON.parse(w.broker.storage.get(key) as string) as { files: object }
    return { ...w, mtimes, list, ops, shard }
  }

  it("a second list reads no file: every summary comes from storage, checked by size and mtime", async () => {
    const { list, ops, broker, writes } = setup()
    const first = await list()
    expect(first.sessions.map((s) => s.title)).toEqual(["alpha", "beta", "gamma"])
    expect(typeof broker.storage.get(SHARD)).toBe("string")
    expect(writes).toEqual([SHARD])
    const again = await list()
    expect(again).toEqual(first)
    expect(ops()).toEqual(["stat 00000000", "stat 00000000", "stat 00000000"])
    // Nothing changed: nothing written.
    expect(writes).toEqual([])
  })

  it("reads again a file whose size or mtime changed, and forgets a deleted one", async () => {
    const { list, reads, broker, mtimes, shard, writes } = setup()
    await list()
    // Same size, later mtime: read again.
    broker.files.set(A, session(1, "ALPHA"))
    mtimes[A] = 4000
    // A longer file, same mtime: read again.
    broker.files.set(B, session(2, "beta", [rec.customTitle("Beta renamed")]))
    broker.files.delete(C)
    const page = await list()
    expect(page.sessions.map((s) => s.title)).toEqual(["ALPHA", "Beta renamed"])
    expect(reads.filter((r) => r.op === "ends").map((r) => r.path)).toEqual([A, B])
    expect(Object.keys(shard().files).sort()).toEqual([uuid(1), uuid(2)])
    expect(writes).toEqual([SHARD])
    // Nothing changed since: nothing read, nothing written.
    await list()
    expect(reads.filter((r) => r.op !== "stat")).toEqual([])
    expect(writes).toEqual([])
  })

  it("a changed session rewrites only its own folder's shard, the others' entries kept as they were", async () => {
    const { list, broker, mtimes, shard, writes, reads } = setup()
    const otherDir = `${CONFIG}/projects/-other`
    const other = `${otherDir}/${uuid(9)}.jsonl`
    broker.files.set(other, session(9, "elsewhere"))
    await list({})
    expect(writes.sort()).toEqual([listShardKey(otherDir), SHARD].sort())
    const before = broker.storage.get(listShardKey(otherDir))
    const beforeA = (shard().files as Record<string, unknown>)[uuid(2)]
    broker.files.set(A, session(1, "ALPHA"))
    mtimes[A] = 4000
    const page = await list({})
    expect(page.sessions.map((s) => s.title)).toEqual(["ALPHA", "beta", "gamma", "elsewhere"])
    expect(reads.filter((r) => r.op === "ends").map((r) => r.path)).toEqual([A])
    expect(writes).toEqual([SHARD])
    expect(broker.storage.get(listShardKey(otherDir))).toBe(before)
    const files = shard().files as Record<string, unknown[]>
    expect(files[uuid(1)]?.[2]).toBe("ALPHA")
    expect(files[uuid(2)]).toEqual(beforeA)
  })

  it("a full list forgets the shard of a folder that is gone; a list of one folder keeps the others", async () => {
    const { list, broker } = setup()
    const otherDir = `${CONFIG}/projects/-other`
    broker.files.set(`${otherDir}/${uuid(9)}.jsonl`, session(9, "elsewhere"))
    broker.files.set(`${otherDir}/notes.txt`, "kept")
    await list({})
    expect(broker.storage.has(listShardKey(otherDir))).toBe(true)
    // Its session deleted, the folder still there: an empty shard.
    broker.files.delete(`${otherDir}/${uuid(9)}.jsonl`)
    await list({})
    expect(JSON.parse(broker.storage.get(listShardKey(otherDir)) as string)).toEqual({
      version: 2,
      files: {},
    })
    // The folder gone: a list of another folder keeps its shard, a full list forgets it.
    broker.files.delete(`${otherDir}/notes.txt`)
    await list()
    expect(broker.storage.has(listShardKey(otherDir))).toBe(true)
    await list({})
    expect(broker.storage.has(listShardKey(otherDir))).toBe(false)
    expect(broker.storage.has(SHARD)).toBe(true)
  })

  it("remembers files that are no sessions too", async () => {
    const { list, ops, broker } = setup()
    broker.files.set(`${PROJECT}/${uuid(4)}.jsonl`, jsonl([rec.queue("enqueue")]))
    expect((await list()).sessions).toHaveLength(3)
    await list()
    expect(ops().every((op) => op.startsWith("stat"))).toBe(true)
  })

  it("ignores a damaged or foreign shard, reads its files again and writes a good one", async () => {
    for (const damaged of [
      "not json",
      { version: 2, files: {} },
      JSON.stringify({ version: 99, files: {} }),
      JSON.stringify({ version: 2, files: [1, 2] }),
      JSON.stringify({ version: 2, files: { [uuid(1)]: "x", [uuid(2)]: [1, 2, 3] } }),
      42,
    ]) {
      const { list, reads, broker, shard } = setup()
      broker.storage.set(SHARD, damaged)
      expect((await list()).sessions.map((s) => s.title)).toEqual(["alpha", "beta", "gamma"])
      expect(reads.filter((r) => r.op === "ends")).toHaveLength(3)
      expect(shard()).toMatchObject({ version: 2 })
      expect(Object.keys(shard().files)).toHaveLength(3)
    }
  })

  it("keeps its shards under cache: (kept apart by the host) and removes the single caches earlier versions kept", async () => {
    const { list, broker } = setup()
    const oldest = `history:list:${CONFIG}/projects`
    const old = `cache:history:list:${CONFIG}/projects`
    broker.storage.set(oldest, JSON.stringify({ version: 1, files: {} }))
    broker.storage.set(old, JSON.stringify({ version: 1, files: {} }))
    await list()
    expect(SHARD.startsWith("cache:")).toBe(true)
    expect(broker.storage.has(oldest)).toBe(false)
    expect(broker.storage.has(old)).toBe(false)
    expect(broker.storage.has(SHARD)).toBe(true)
  })
})

const texts = (t: SessionTranscript | null) =>
  (t?.items ?? []).map((i) => (i.type === "user" || i.type === "assistant" ? `${i.type}: ${i.text}` : i.type))

describe("read_session", () => {
  it("follows the chain of a rewound conversation: two children of one parent, the last branch wins", async () => {
    const { config, cwd } = recordedSession("resume")
    const id = "d1e38c0d-bd89-4ab8-8fff-bc8dce6897ee"
    const raw = readFileSync(`${config}/projects/-home-dev-ws/${id}.jsonl`, "utf8")
    expect(raw).toContain("Question two")
    const transcript = await onDisk(readSession(config, cwd, id))
    expect(texts(transcript)).toEqual([
      "user: Question one",
      "assistant: Answer one.",
      "user: Question four",
      "assistant: Answer four (resumed at answer one).",
    ])
  })

  it("reads a hand-made branch by parentUuid, not by file order", () => {
    const chain = chainOf([
      rec.user("a", null, "one"),
      rec.assistant("b", "a", "two"),
      rec.user("c", "b", "three (abandoned)"),
      rec.assistant("d", "c", "four (abandoned)"),
      rec.user("e", "b", "three again"),
      rec.assistant("f", "e", "four again"),
    ])
    expect(chain.map((r) => r.uuid)).toEqual(["a", "b", "e", "f"])
  })

  it("tolerates a torn last line (a file still being written)", async () => {
    const records = [rec.user("a", null, "hello"), rec.assistant("b", "a", "hi")]
    const torn = `${jsonl(records)}${JSON.stringify(rec.user("c", "b", "next")).slice(0, 40)}`
    const { run } = world({ [`${PROJECT}/${uuid(1)}.jsonl`]: torn })
    expect(texts(await run(readSession(CONFIG, WS, uuid(1))))).toEqual(["user: hello", "assistant: hi"])
  })

  it("keeps the conversation before a compaction and shows its summary", async () => {
    const { config, cwd, id } = recordedSession("compact")
    const items = texts(await onDisk(readSession(config, cwd, id)))
    expect(items).toEqual([
      "user: Tell me something",
      "assistant: Here is a long answer about nothing in particular.",
      "compacted",
      "user: /compact",
      "user: Still there?",
      "assistant: After compaction I still answer.",
    ])
  })

  it("shows an interrupted turn as Stopped.", async () => {
    const { config, cwd, id } = recordedSession("interrupt")
    const transcript = await onDisk(readSession(config, cwd, id))
    expect(transcript?.items.find((i) => i.type === "notice")).toMatchObject({ text: "Stopped." })
  })

  it("takes the title from the custom-title record", async () => {
    const { run } = world({
      [`${PROJECT}/${uuid(1)}.jsonl`]: jsonl([
        rec.user("a", null, "hello"),
        rec.aiTitle("AI"),
        rec.customTitle("Mine"),
      ]),
    })
    expect((await run(readSession(CONFIG, WS, uuid(1))))?.title).toBe("Mine")
  })

  it("answers null for a session that is not stored", async () => {
    const { run } = world({})
    expect(await run(readSession(CONFIG, WS, uuid(1)))).toBeNull()
  })

  it("skips records it does not need without parsing them; attachments only link the chain", async () => {
    const broken = `{"parentUuid":"a","isSidechain":false,"attachment":{"type":"skill_listing","content":"${"y".repeat(5000)}" BROKEN},"type":"attachment","uuid":"att","timestamp":"t","rendered":[{"content":"z"}]}`
    const text = [
      JSON.stringify(rec.queue("enqueue")),
      JSON.stringify(rec.user("a", null, "hello")),
      broken,
      JSON.stringify(rec.blob(100_000)),
      JSON.stringify(rec.assistant("b", "att", "hi")),
      "",
    ].join("\n")
    const { run } = world({ [`${PROJECT}/${uuid(1)}.jsonl`]: text })
    const parse = vi.spyOn(JSON, "parse")
    const transcript = await run(readSession(CONFIG, WS, uuid(1)))
    const parsedLines = parse.mock.calls.map(([s]) => String(s))
    expect(parsedLines.some((s) => s.includes("api-request-blob") || s.includes("queue-operation"))).toBe(
      false,
    )
    expect(parsedLines.some((s) => s.includes("skill_listing"))).toBe(false)
    // The broken attachment still joins the assistant to the prompt.
    expect(texts(transcript)).toEqual(["user: hello", "assistant: hi"])
  })

  it("a subagent's attachments (their agentId before the attachment) only link its chain, never parsed", async () => {
    const agent = "a0123456789abcdef"
    const sidechain = (record: Record<string, unknown>) => {
      const { parentUuid, isSidechain: _, ...rest } = record
      return { parentUuid, isSidechain: true, agentId: agent, ...rest }
    }
    const broken = `{"parentUuid":"a","isSidechain":true,"agentId":"${agent}","attachment":{"type":"prompt_snapshot","snapshot":"${"y".repeat(5000)}" BROKEN},"type":"attachment","uuid":"att","timestamp":"t"}`
    const text = [
      JSON.stringify(sidechain(rec.user("a", null, "do the thing"))),
      broken,
      JSON.stringify(sidechain(rec.assistant("b", "att", "done"))),
      "",
    ].join("\n")
    const path = `${PROJECT}/${uuid(1)}/subagents/agent-${agent}.jsonl`
    const { run } = world({ [path]: text })
    const parse = vi.spyOn(JSON, "parse")
    const chain = await run(readChain(path, { sidechain: true }))
    expect(parse.mock.calls.some(([s]) => String(s).includes("prompt_snapshot"))).toBe(false)
    expect(chain.records.map((r) => r.uuid)).toEqual(["a", "b"])
  })

  it("reads a recorded file through the Node-backed Fs", async () => {
    const chain = await Effect.runPromise(
      readChain(
        `testdata/text_thinking/projects/-home-dev-ws/${recordedSession("text_thinking").id}.jsonl`,
      ).pipe(Effect.provide(Layer.succeed(Fs, nodeFs))),
    )
    expect(chain.found).toBe(true)
    expect(chain.records.length).toBeGreaterThan(0)
  })
})

describe("rewind points", () => {
  const { config, cwd, id } = recordedSession("text_thinking")

  it("resumes at the target prompt's parent", async () => {
    const second = await onDisk(promptUuidAt(config, cwd, id, 1))
    expect(second).toBeDefined()
    const chain = await onDisk(readChain(`${config}/projects/-home-dev-ws/${id}.jsonl`))
    const record = chain.records.find((r) => r.uuid === second)
    const target = await onDisk(rewindTarget(config, cwd, id, second ?? ""))
    expect(target).toEqual({ resumeAt: record?.parentUuid })
  })

  it("rewinding to the first prompt leaves nothing", async () => {
    const first = await onDisk(promptUuidAt(config, cwd, id, 0))
    expect(await onDisk(rewindTarget(config, cwd, id, first ?? ""))).toEqual({ toNothing: true })
  })

  it("an unknown message or conversation is an error", async () => {
    expect(await onDisk(rewindTarget(config, cwd, id, "nope"))).toHaveProperty("error")
    expect(await onDisk(rewindTarget(config, cwd, uuid(404), "nope"))).toHaveProperty("error")
  })

  it("counts the prompts the conversation holds", async () => {
    expect(await onDisk(promptCount(config, cwd, id))).toBe(2)
    expect(await onDisk(promptUuidAt(config, cwd, id, 2))).toBeUndefined()
  })

  it("an interrupt marker is no prompt: the prompt after it keeps its index", async () => {
    const rec = recordedSession("interrupt")
    expect(await onDisk(promptCount(rec.config, rec.cwd, rec.id))).toBe(2)
    const second = await onDisk(promptUuidAt(rec.config, rec.cwd, rec.id, 1))
    const chain = await onDisk(readChain(`${rec.config}/projects/-home-dev-ws/${rec.id}.jsonl`))
    const record = chain.records.find((r) => r.uuid === second)
    expect(JSON.stringify(record?.message)).toContain("Are you still there?")
  })
})
