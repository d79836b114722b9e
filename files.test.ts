import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import {
  decodeText,
  endsReader,
  LinePrefix,
  LineSplitter,
  readHead,
  readJson,
  readJsonl,
  readEnds,
  readLines,
  readTail,
  readText,
} from "./files.ts"
import { brokerContext } from "./sdk/context.ts"
import type { FsShape } from "./sdk/plugin-api.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const split = (chunks: string[], filter?: (prefix: Uint8Array) => boolean) => {
  const lines: string[] = []
  const splitter = new LineSplitter((bytes) => lines.push(decoder.decode(bytes)), filter)
  for (const chunk of chunks) splitter.push(encoder.encode(chunk))
  splitter.end()
  return lines
}

describe("LineSplitter", () => {
  it("joins lines across chunk boundaries and drops \\r before \\n", () => {
    expect(split(['{"a":', '1}\r\n{"b"', ":2}\n", "\n", '{"c":3}\n'])).toEqual([
      '{"a":1}',
      '{"b":2}',
      '{"c":3}',
    ])
  })

  it("hands over a torn last line at the end", () => {
    expect(split(['{"a":1}\n{"b":', "2"])).toEqual(['{"a":1}', '{"b":2'])
  })

  it("skips a line by its first bytes, even when it spans many chunks", () => {
    const big = `{"type":"api-request-blob","message":"${"x".repeat(3 * LinePrefix)}"}`
    const seen: number[] = []
    const chunks = [
      '{"type":"user"}\n',
      big.slice(0, 100),
      big.slice(100, 900),
      `${big.slice(900)}\n`,
      '{"type":"assistant"}\n',
    ]
    const lines = split(chunks, (prefix) => {
      seen.push(prefix.length)
      return !decoder.decode(prefix).includes("api-request")
    })
    expect(lines).toEqual(['{"type":"user"}', '{"type":"assistant"}'])
    // The filter saw at most LinePrefix bytes of the big line, once.
    expect(seen).toEqual([15, LinePrefix, 20])
  })

  it("keeps a long wanted line whole across chunks", () => {
    const long = `{"type":"user","text":"${"é".repeat(2000)}"}`
    const bytes = encoder.encode(`${long}\n`)
    const lines: string[] = []
    const splitter = new LineSplitter(
      (b) => lines.push(decoder.decode(b)),
      () => true,
    )
    for (let at = 0; at < bytes.length; at += 333) splitter.push(bytes.slice(at, at + 333))
    splitter.end()
    expect(lines).toEqual([long])
  })
})

/** Push `bytes` through one buffer of `size`, lent and scribbled over after each push (as a lent stream's), then end. */
const feedLent = (splitter: LineSplitter, bytes: Uint8Array, size: number) => {
  const lent = Buffer.alloc(size)
  for (let at = 0; at < bytes.length; at += lent.length) {
    const n = Math.min(lent.length, bytes.length - at)
    lent.set(bytes.subarray(at, at + n))
    splitter.push(lent.subarray(0, n))
    lent.fill(0x7a)
  }
  splitter.end()
}

describe("LineSplitter over lent chunks", () => {
  // A lending host (StreamOptions.lend) reads every chunk into one Buffer. Buffer's `slice` is a view,
  // not a copy: a splitter that kept `slice()`s of its pieces read the next chunk's bytes back.
  const lentSplit = (text: string, chunkBytes: number, longLineBytes = 4 * 1024 * 1024) => {
    const bytes = encoder.encode(text)
    const lent = Buffer.alloc(chunkBytes)
    const lines: string[] = []
    const splitter = new LineSplitter((b) => lines.push(decoder.decode(b)), undefined, {
      longLineBytes,
      longStringBytes: 64,
    })
    for (let at = 0; at < bytes.length; at += chunkBytes) {
      const n = Math.min(chunkBytes, bytes.length - at)
      lent.set(bytes.subarray(at, at + n))
      splitter.push(lent.subarray(0, n))
      lent.fill(0x7a) // the host reads the next chunk into the same buffer
    }
    splitter.end()
    return lines
  }

  it("keeps lines that span lent chunks whole", () => {
    const lines = Array.from({ length: 40 }, (_, i) => `{"n":${i},"text":"${"ab".repeat(i * 37)}"}`)
    expect(lentSplit(`${lines.join("\n")}\n`, 97)).toEqual(lines)
  })

  it("hands over every line that spans chunks from one buffer it reuses, each line still its own bytes", () => {
    const lines = Array.from({ length: 200 }, (_, i) => `{"n":${i},"text":"${"cd".repeat(50 + i * 13)}"}`)
    const bytes = encoder.encode(`${lines.join("\n")}\n`)
    const seen: string[] = []
    const buffers = new Set<ArrayBufferLike>()
    const splitter = new LineSplitter((b) => {
      seen.push(decoder.decode(b))
      buffers.add(b.buffer)
    })
    feedLent(splitter, bytes, 1000)
    expect(seen).toEqual(lines)
    // The chunk's buffer, and the splitter's own grown a few times (a fresh array per line and per piece before).
    expect(buffers.size).toBeLessThan(12)
  })

  it("hands over the text's own lines on every path (carried, carried and pieces, cut) at several chunkings", () => {
    // Lines under the 1 MiB carry, past it (the rest in pieces), and past the 4 MiB limit (cut);
    // skipped by the filter or kept; CRLF; two-byte characters; with and without a last newline.
    const sizes = [0, 3, 600, 70_000, 300_000, 1_600_000, 3_900_000, 4_300_000]
    let seed = 7
    const pick = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return Math.floor((seed / 2147483648) * n) // the high bits: the low ones of this generator cycle
    }
    const skipped = (line: string) => line.startsWith('{"type":"skip"')
    for (let round = 0; round < 16; round++) {
      const lines = Array.from({ length: 6 }, () => {
        const n = sizes[pick(sizes.length)] as number
        const kind = pick(3)
        if (kind === 0) return `{"type":"user","t":"${"a".repeat(n)}"}`
        if (kind === 1) return `{"type":"skip","t":"${"b".repeat(n)}"}`
        return `{"type":"user","t":"${"é".repeat(n >> 1)}"}\r`
      })
      const bytes = encoder.encode(lines.join("\n") + (pick(2) === 0 ? "\n" : ""))
      const out: string[] = []
      const splitter = new LineSplitter(
        (b) => out.push(decoder.decode(b)),
        (prefix) => !skipped(decoder.decode(prefix)),
        { longLineBytes: 4 * 1024 * 1024, longStringBytes: 1000 },
      )
      feedLent(splitter, bytes, [997, 65_536, 262_144, 1 << 20][pick(4)] as number)
      const want = lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l)).filter((l) => !skipped(l))
      expect(out).toHaveLength(want.length)
      want.forEach((line, i) => {
        const got = out[i] as string
        if (encoder.encode(line).length <= 4 * 1024 * 1024) expect(got === line).toBe(true)
        else expect((JSON.parse(got) as { t: string }).t).toMatch(/ \[… truncated: /)
      })
    }
  })

  it("cuts a long line that spans lent chunks from its own bytes", () => {
    const fields = Array.from({ length: 30 }, (_, i) => `field ${i}`)
    const long = `{"type":"user","text":"${"é".repeat(400)}","fields":${JSON.stringify(fields)},"tail":"end"}`
    const [line, next] = lentSplit(`${long}\n{"n":1}\n`, 37, 128)
    expect(JSON.parse(line as string)).toMatchObject({ type: "user", fields, tail: "end" })
    expect((JSON.parse(line as string) as { text: string }).text).toMatch(/^é+ \[… truncated: /)
    expect(next).toBe('{"n":1}')
  })
})

describe("decodeText", () => {
  it("decodes valid text, and a character cut at a range end as U+FFFD", () => {
    expect(decodeText(encoder.encode("héllo"))).toBe("héllo")
    expect(decodeText(encoder.encode("hé").subarray(0, 2))).toBe("h\uFFFD")
  })
})

describe("reads through the broker", () => {
  const broker = makeMemoryBroker({
    files: {
      "/home/user/.claude/a.txt": "0123456789",
      "/home/user/.claude/t.jsonl": '{"n":1}\n{"n":2}\n{"n":',
      "/home/user/.claude/x.json": '{"customTitle":"T"}',
    },
  })
  const run = <A>(effect: Effect.Effect<A, never, never>) => Effect.runPromise(effect)
  const ctx = brokerContext(broker.api)
  const provide = <A, R>(effect: Effect.Effect<A, never, R>) =>
    run(Effect.provideContext(effect, ctx) as Effect.Effect<A, never, never>)

  it("reads text, a head and a tail", async () => {
    expect(await provide(readText("/home/user/.claude/a.txt"))).toBe("0123456789")
    expect(await provide(readHead("/home/user/.claude/a.txt", 4))).toBe("0123")
    expect(await provide(readTail("/home/user/.claude/a.txt", 3))).toBe("789")
    expect(await provide(readTail("/home/user/.claude/a.txt", 3, 10))).toBe("789")
    expect(await provide(readJson("/home/user/.claude/x.json"))).toEqual({ customTitle: "T" })
  })

  it("answers null for a missing file", async () => {
    expect(await provide(readText("/home/user/.claude/none"))).toBeNull()
    expect(await provide(readHead("/home/user/.claude/none", 4))).toBeNull()
    expect(await provide(readTail("/home/user/.claude/none", 4))).toBeNull()
    expect(await provide(readJsonl("/home/user/.claude/none"))).toBeNull()
    expect(await provide(readJson("/home/user/.claude/a.txt"))).toBeNull()
  })

  it("streams JSONL lines and drops a torn last line", async () => {
    expect(await provide(readLines("/home/user/.claude/t.jsonl"))).toEqual(['{"n":1}', '{"n":2}', '{"n":'])
    expect(await provide(readJsonl("/home/user/.claude/t.jsonl"))).toEqual([{ n: 1 }, { n: 2 }])
  })
})

describe("both ends of a file", () => {
  const text = "HEAD-0123456789-middle-0123456789-TAIL"
  const broker = makeMemoryBroker({
    files: { "/c/t.jsonl": text, "/c/small.jsonl": "tiny", "/c/dir/x": "" },
  })
  const ends = broker.api.fs
  // A host without readEnds: stat and byte ranges stand in for it.
  const { readEnds: _omitted, ...rest } = broker.api.fs
  const calls: string[] = []
  const ranges: FsShape = {
    ...rest,
    stat: (path) => {
      calls.push(`stat ${path}`)
      return rest.stat(path)
    },
    readRange: (path, start, end) => {
      calls.push(`range ${start}-${end}`)
      return rest.readRange(path, start, end)
    },
  }
  const show = (e: { head: Uint8Array; tail: Uint8Array; size: number } | null) =>
    e === null ? null : { head: decoder.decode(e.head), tail: decoder.decode(e.tail), size: e.size }
  const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)

  /** One file's ends through `endsReader(fs)`, shown as text while lent. */
  const one = (fs: FsShape) => (path: string, head: number, tail: number) => {
    let shown: ReturnType<typeof show> | undefined
    return Effect.map(
      endsReader(fs)([path], head, tail, (_, e) => {
        shown = show(e)
      }),
      () => shown,
    )
  }

  it("gives the head, the tail and the size, by readEnds or by stat and ranges alike", async () => {
    for (const fs of [ends, ranges]) {
      const read = one(fs)
      expect(await run(read("/c/t.jsonl", 4, 4))).toEqual({
        head: "HEAD",
        tail: "TAIL",
        size: text.length,
      })
      // The head holds the whole file: the tail is its end.
      expect(await run(read("/c/small.jsonl", 100, 2))).toEqual({ head: "tiny", tail: "ny", size: 4 })
      expect(await run(read("/c/none", 4, 4))).toBeNull()
      expect(await run(read("/c/dir", 4, 4))).toBeNull()
    }
    expect(endsReader(ends)).toBe(ends.readEnds)
  })

  it("visits every path of a call once, by readEnds or by stat and ranges alike", async () => {
    for (const fs of [ends, ranges]) {
      const seen: Array<[number, string | null]> = []
      await run(
        endsReader(fs)(["/c/none", "/c/t.jsonl", "/c/small.jsonl", "/c/dir"], 2, 2, (i, e) => {
          seen.push([i, e && decoder.decode(e.head)])
        }),
      )
      expect(seen.sort((a, b) => a[0] - b[0])).toEqual([
        [0, null],
        [1, "HE"],
        [2, "ti"],
        [3, null],
      ])
    }
  })

  it("asked for no bytes, gives only the size and times: without readEnds, one stat and no range", async () => {
    for (const fs of [ends, ranges]) {
      calls.length = 0
      expect(await run(one(fs)("/c/t.jsonl", 0, 0))).toEqual({ head: "", tail: "", size: text.length })
    }
    expect(calls).toEqual(["stat /c/t.jsonl"])
  })

  it("without readEnds: one stat, then one range when the ends meet, two when they do not", async () => {
    calls.length = 0
    await run(one(ranges)("/c/t.jsonl", 4, 4))
    expect(calls).toEqual(["stat /c/t.jsonl", "range 0-4", `range ${text.length - 4}-${text.length}`])
    calls.length = 0
    await run(one(ranges)("/c/t.jsonl", 30, 30))
    expect(calls).toEqual(["stat /c/t.jsonl", `range 0-${text.length}`])
  })

  it("reads through the Fs service", async () => {
    const found = await run(Effect.provideContext(readEnds("/c/t.jsonl", 4, 4), brokerContext(broker.api)))
    expect(show(found)).toEqual({ head: "HEAD", tail: "TAIL", size: text.length })
  })
})
