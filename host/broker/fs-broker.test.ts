import { execFileSync } from "node:child_process"
import { linkSync, mkdirSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { Effect, Stream } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type HostBroker, makeBroker } from "./broker.ts"
import { lexicallyGranted } from "./fs-broker.ts"
import { loadManifest, type Manifest } from "../core/manifest.ts"
import { makeScopeSet } from "./scopes.ts"
import { makeTempWorld, type TempWorld } from "../testing/testing.ts"
import type { FileEnds } from "../../sdk/plugin-api.ts"

const repoRoot = join(import.meta.dirname, "../..")
const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)

let world: TempWorld
let manifest: Manifest
let broker: HostBroker
const managedLinux = "/etc/claude-code/managed-settings.json"
const managedMac = "/Library/Application Support/ClaudeCode/managed-settings.json"

beforeEach(async () => {
  world = makeTempWorld()
  manifest = await loadManifest(repoRoot)
  broker = await makeBroker(manifest, {
    home: world.home,
    hostDataDir: world.hostData,
    env: { HOME: world.home, PATH: "/usr/bin:/bin" },
    // The managed-settings scopes, moved into the temp world.
    scopePaths: {
      [managedLinux]: join(world.root, "etc/claude-code/managed-settings.json"),
      [managedMac]: join(world.root, "Library/ClaudeCode/managed-settings.json"),
    },
  })
})

afterEach(async () => {
  await broker.close()
  world.cleanup()
})

const fs = () => broker.api.fs

/** The event loop's turns counted as they pass (one step a turn, as other host work would run), until stopped. */
const countTurns = () => {
  let ticking = true
  const counter = {
    turns: 0,
    stop: () => {
      ticking = false
    },
  }
  const tick = () => {
    counter.turns++
    if (ticking) setImmediate(tick)
  }
  setImmediate(tick)
  return counter
}
const read = (path: string) => run(fs().read(path))
const refusals = () => broker.logger.refusals().map((e) => e.message)

describe("fs.read scopes", () => {
  it("~/.claude/**: inside is read (by ~ and by absolute path), a sibling of it is not", async () => {
    world.write(join(world.home, ".claude/settings.json"), '{"a":1}')
    world.write(join(world.home, ".ssh/id_rsa"), "secret")
    world.write(join(world.home, ".claude.json"), "{}")
    expect(await read("~/.claude/settings.json")).toBe('{"a":1}')
    expect(await read(join(world.home, ".claude/settings.json"))).toBe('{"a":1}')
    expect(await read("~/.ssh/id_rsa")).toBeNull()
    expect(await read(join(world.home, ".claude.json"))).toBeNull()
    expect(refusals()).toHaveLength(2)
    expect(refusals()[0]).toContain(".ssh/id_rsa")
  })

  it("~/.agents/skills/**: inside is read, the rest of ~/.agents is not", async () => {
    world.write(join(world.home, ".agents/skills/shared/SKILL.md"), "# shared")
    world.write(join(world.home, ".agents/config.json"), "{}")
    expect(await read("~/.agents/skills/shared/SKILL.md")).toBe("# shared")
    expect(await read("~/.agents/config.json")).toBeNull()
  })

  it("workspace: readable once the host registers it, its neighbours never", async () => {
    const settings = world.write(join(world.workspace, ".claude/settings.json"), "{}")
    world.write(join(world.outside, "secret.txt"), "no")
    expect(await read(settings)).toBeNull()
    broker.addWorkspace(world.workspace)
    expect(await read(settings)).toBe("{}")
    expect(await read(join(world.outside, "secret.txt"))).toBeNull()
    broker.removeWorkspace(world.workspace)
    expect(await read(settings)).toBeNull()
  })

  it("data: the plugin's data folder, not the rest of the host's data (its storage file included)", async () => {
    const legacy = world.write(join(broker.pluginDataDir, "legacy/instances.json"), "[]")
    await run(broker.api.storage.set("k", 1))
    expect(await read(legacy)).toBe("[]")
    expect(fs().paths).toEqual({ home: world.home, data: broker.pluginDataDir })
    expect(await read(broker.storage.file)).toBeNull()
  })

  it("the managed-settings files: exactly those paths, not their folders or siblings", async () => {
    const linux = world.write(join(world.root, "etc/claude-code/managed-settings.json"), '{"linux":1}')
    const mac = world.write(join(world.root, "Library/ClaudeCode/managed-settings.json"), '{"mac":1}')
    const sibling = world.write(join(world.root, "etc/claude-code/other.json"), "{}")
    expect(await read(linux)).toBe('{"linux":1}')
    expect(await read(mac)).toBe('{"mac":1}')
    expect(await read(sibling)).toBeNull()
    expect(await run(fs().list(join(world.root, "etc/claude-code")))).toBeNull()
  })

  it("the scope matcher grants the real managed-settings paths and nothing else in /etc or /Library", () => {
    const scopes = makeScopeSet(
      (manifest.grants["fs.read"] ?? []).map((s) => s.scope),
      { home: "/home/u", data: "/data/p", workspaces: () => ["/work/project"] },
    )
    const granted = (p: string) => lexicallyGranted(scopes.roots(), p, "/home/u")
    expect(granted(managedLinux)).toBe(true)
    expect(granted(managedMac)).toBe(true)
    expect(granted("/etc/passwd")).toBe(false)
    expect(granted("/etc/claude-code")).toBe(false)
    expect(granted("/etc/claude-code/managed-settings.json/../../passwd")).toBe(false)
    expect(granted("/Library/Application Support/ClaudeCode/other.json")).toBe(false)
    expect(granted("~/.claude/projects/x.jsonl")).toBe(true)
    expect(granted("/home/u/.claude")).toBe(true)
    expect(granted("/home/u/.claudex/a")).toBe(false)
    expect(granted("/work/project/src/a.ts")).toBe(true)
    expect(granted("/work/projectile/a.ts")).toBe(false)
    expect(granted("/data/p/legacy/instances.json")).toBe(true)
    expect(granted("relative/path")).toBe(false)
    expect(scopes.unknown).toEqual([])
  })

  it("`..` that climbs out of a scope is refused; one that stays inside is fine", async () => {
    world.write(join(world.home, ".ssh/id_rsa"), "secret")
    world.write(join(world.home, ".claude/settings.json"), "{}")
    world.write(join(world.outside, "secret.txt"), "no")
    broker.addWorkspace(world.workspace)
    expect(await read("~/.claude/../.ssh/id_rsa")).toBeNull()
    expect(await read(join(world.home, ".claude/projects/../../.ssh/id_rsa"))).toBeNull()
    expect(await read(join(world.workspace, "../outside/secret.txt"))).toBeNull()
    expect(await run(fs().list("~/.claude/.."))).toBeNull()
    expect(await read("~/.claude/projects/../settings.json")).toBe("{}")
    expect(refusals().length).toBe(4)
  })

  it("a relative path is refused", async () => {
    expect(await read(".claude/settings.json")).toBeNull()
    expect(refusals()[0]).toContain("not an absolute path")
  })

  it("a link from ~/.claude/skills into ~/.agents/skills is followed", async () => {
    world.write(join(world.home, ".agents/skills/shared/SKILL.md"), "---\nname: shared\n---\n")
    mkdirSync(join(world.home, ".claude/skills"), { recursive: true })
    symlinkSync(join(world.home, ".agents/skills/shared"), join(world.home, ".claude/skills/shared"))
    expect(await read("~/.claude/skills/shared/SKILL.md")).toContain("name: shared")
    expect(await run(fs().list("~/.claude/skills"))).toEqual([{ name: "shared", kind: "link" }])
    expect(await run(fs().realpath("~/.claude/skills/shared"))).toBe(
      join(world.home, ".agents/skills/shared"),
    )
    expect((await run(fs().stat("~/.claude/skills/shared")))?.kind).toBe("directory")
    expect(refusals()).toEqual([])
  })

  it("a link from ~/.claude/skills into /etc is refused, for a folder link and a file link", async () => {
    mkdirSync(join(world.home, ".claude/skills"), { recursive: true })
    symlinkSync("/etc", join(world.home, ".claude/skills/evil"))
    symlinkSync("/etc/passwd", join(world.home, ".claude/skills/passwd"))
    expect(await read("~/.claude/skills/evil/passwd")).toBeNull()
    expect(await read("~/.claude/skills/passwd")).toBeNull()
    expect(await run(fs().list("~/.claude/skills/evil"))).toBeNull()
    expect(await run(fs().stat("~/.claude/skills/evil"))).toBeNull()
    expect(await run(fs().realpath("~/.claude/skills/evil"))).toBeNull()
    expect(refusals().length).toBe(5)
    expect(refusals()[0]).toContain("/etc")
  })

  it("a link that leaves every scope and a second link that leads back in is still refused", async () => {
    world.write(join(world.home, ".agents/skills/shared/SKILL.md"), "x")
    mkdirSync(join(world.home, ".claude"), { recursive: true })
    symlinkSync(world.outside, join(world.home, ".claude/out"))
    symlinkSync(join(world.home, ".agents/skills/shared"), join(world.outside, "back"))
    expect(await read("~/.claude/out/back/SKILL.md")).toBeNull()
    expect(refusals()[0]).toContain(`the link ${join(world.home, ".claude/out")}`)
  })

  it("CLAUDE_CONFIG_DIR outside ~/.claude is not readable", async () => {
    const configDir = join(world.root, "claude-alt")
    world.write(join(configDir, "settings.json"), "{}")
    world.write(join(configDir, "projects/-ws/s.jsonl"), "{}\n")
    const b = await makeBroker(manifest, {
      home: world.home,
      hostDataDir: join(world.root, "host-data-2"),
      env: { HOME: world.home, CLAUDE_CONFIG_DIR: configDir },
    })
    try {
      const dir = await run(b.api.env.get("CLAUDE_CONFIG_DIR"))
      expect(dir).toBe(configDir)
      expect(await run(b.api.fs.read(`${dir}/settings.json`))).toBeNull()
      expect(await run(b.api.fs.list(`${dir}/projects`))).toBeNull()
      expect(b.logger.refusals()).toHaveLength(2)
    } finally {
      await b.close()
    }
  })
})

describe("fs operations", () => {
  it("a missing file is null and not a refusal", async () => {
    expect(await read("~/.claude/nothing.json")).toBeNull()
    expect(await run(fs().stat("~/.claude/nothing.json"))).toBeNull()
    expect(refusals()).toEqual([])
  })

  it("readRange clips to the size; stream starts at an offset; stat and list describe the tree", async () => {
    const file = world.write(join(world.home, ".claude/projects/-ws/s.jsonl"), "0123456789")
    world.write(join(world.home, ".claude/projects/-ws/sub/x.jsonl"), "")
    expect(new TextDecoder().decode((await run(fs().readRange(file, 2, 5)))!)).toBe("234")
    expect(new TextDecoder().decode((await run(fs().readRange(file, 8, 100)))!)).toBe("89")
    expect((await run(fs().readRange(file, 20, 30)))?.length).toBe(0)
    const stream = await run(fs().stream(file, 4))
    const text = await run(stream!.pipe(Stream.decodeText(), Stream.mkString))
    expect(text).toBe("456789")
    expect(await run(fs().stream("~/.claude/projects"))).toBeNull()
    const st = await run(fs().stat(file))
    expect(st).toMatchObject({ kind: "file", size: 10 })
    expect(st!.mtimeMs).toBeGreaterThan(0)
    const entries = await run(fs().list("~/.claude/projects/-ws"))
    expect([...entries!].sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: "s.jsonl", kind: "file" },
      { name: "sub", kind: "directory" },
    ])
  })

  it("streams a file larger than one chunk whole", async () => {
    const big = "x".repeat(300_000)
    const file = world.write(join(world.home, ".claude/big.txt"), big)
    const stream = await run(fs().stream(file))
    const bytes = await run(
      Stream.runFold(
        stream!,
        () => 0,
        (n, chunk) => n + chunk.length,
      ),
    )
    expect(bytes).toBe(300_000)
  })

  it("stream chunks are the caller's to keep, unless it asks for them lent: then one buffer", async () => {
    const big = Array.from({ length: 40_000 }, (_, i) => `line ${i}`).join("\n")
    const file = world.write(join(world.home, ".claude/lines.txt"), big)
    // Kept: every chunk collected first, then read, is still the file (a reused buffer would repeat its last chunk).
    const kept = await run(Stream.runCollect((await run(fs().stream(file)))!))
    expect(new Set(kept.map((c) => c.buffer)).size).toBe(kept.length)
    expect(Buffer.concat(kept).toString()).toBe(big)
    // Lent: each chunk read as it comes is the file; all of them lie in one buffer.
    const buffers = new Set<ArrayBufferLike>()
    let text = ""
    await run(
      Stream.runForEach((await run(fs().stream(file, 0, { lend: true })))!, (chunk) =>
        Effect.sync(() => {
          buffers.add(chunk.buffer)
          text += Buffer.from(chunk).toString()
        }),
      ),
    )
    expect(text).toBe(big)
    expect(buffers.size).toBe(1)
  })

  it("lent streams one after another read into one buffer; a stream read while another is lent gets its own", async () => {
    const a = world.write(join(world.home, ".claude/a.txt"), "a".repeat(600_000))
    const b = world.write(join(world.home, ".claude/b.txt"), "b".repeat(600_000))
    const lentRead = async (file: string, during?: () => Promise<unknown>) => {
      const buffers = new Set<ArrayBufferLike>()
      let text = ""
      let first = true
      await run(
        Stream.runForEach((await run(fs().stream(file, 0, { lend: true })))!, (chunk) =>
          Effect.promise(async () => {
            buffers.add(chunk.buffer)
            text += Buffer.from(chunk).toString()
            if (first && during !== undefined) await during()
            first = false
          }),
        ),
      )
      return { buffers: [...buffers], text }
    }
    const first = await lentRead(a)
    const second = await lentRead(b)
    expect(second.text).toBe("b".repeat(600_000))
    // One buffer per lent stream before (a session's 233 agent files: 233 buffers waiting for a collection).
    expect(second.buffers).toHaveLength(1)
    expect(second.buffers[0] === first.buffers[0]).toBe(true)
    let inner: { buffers: ArrayBufferLike[]; text: string } | undefined
    const outer = await lentRead(a, async () => {
      inner = await lentRead(b)
    })
    expect(outer.text).toBe("a".repeat(600_000))
    expect(inner?.text).toBe("b".repeat(600_000))
    expect(inner?.buffers).toHaveLength(1)
    expect(outer.buffers[0] === inner?.buffers[0]).toBe(false)
  })

  it("a long stream lets the event loop turn at least every 4 MiB", async () => {
    const file = world.write(join(world.home, ".claude/long.txt"), "x".repeat(32 * 1024 * 1024))
    const loop = countTurns()
    const seen: number[] = []
    let bytes = 0
    await run(
      Stream.runForEach((await run(fs().stream(file, 0, { lend: true })))!, (chunk) =>
        Effect.sync(() => {
          seen.push(loop.turns)
          bytes += chunk.length
        }),
      ),
    )
    loop.stop()
    expect(bytes).toBe(32 * 1024 * 1024)
    // Chunks of 256 KiB: the loop turned within every 16 of them.
    for (let i = 16; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 16] as number)
  })
})

const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes)
/** Every path's ends, copied out of the lent bytes as each is visited. */
const endsOf = async (paths: ReadonlyArray<string>, head: number, tail: number) => {
  const found = new Array<FileEnds | null | undefined>(paths.length)
  await run(
    fs().readEnds!(paths, head, tail, (i, e) => {
      expect(found[i]).toBeUndefined()
      found[i] = e && { ...e, head: e.head.slice(), tail: e.tail.slice() }
    }),
  )
  return found
}
const ends = async (path: string, head: number, tail: number) => (await endsOf([path], head, tail))[0]

describe("readEnds: head, tail, size and times with one open, under the same grant checks", () => {
  it("reads both ends of a large file, and a small file once", async () => {
    const body = `HEAD${"x".repeat(100_000)}TAIL`
    const file = world.write(join(world.home, ".claude/projects/-ws/s.jsonl"), body)
    const found = await ends(file, 4, 4)
    expect({ head: text(found?.head), tail: text(found?.tail), size: found?.size }).toEqual({
      head: "HEAD",
      tail: "TAIL",
      size: body.length,
    })
    const st = await run(fs().stat(file))
    expect(found?.mtimeMs).toBe(st?.mtimeMs)
    expect(found?.birthtimeMs).toBe(st?.birthtimeMs)
    const small = world.write(join(world.home, ".claude/projects/-ws/t.jsonl"), "tiny")
    const both = await ends(small, 1000, 2)
    expect([text(both?.head), text(both?.tail), both?.size]).toEqual(["tiny", "ny", 4])
    expect(await ends("~/.claude/projects/-ws/t.jsonl", 2, 2)).toMatchObject({ size: 4 })
  })

  it("reads many files in one call, each visited once with its own bytes, lent through one buffer per lane", async () => {
    const paths = Array.from({ length: 40 }, (_, n) =>
      world.write(join(world.home, `.claude/projects/-ws/f${n}.jsonl`), `H${n}:${"x".repeat(n * 997)}:T${n}`),
    )
    const asked = [
      ...paths,
      join(world.home, ".ssh/none"),
      join(world.home, ".claude/projects/-ws/gone.jsonl"),
    ]
    const found = await endsOf(asked, 4, 4)
    expect(found.map((e) => e && text(e.head).split(":")[0])).toEqual([
      ...paths.map((_, n) => `H${n}`),
      null,
      null,
    ])
    expect(found.slice(0, 40).map((e) => e && text(e.tail).split(":").pop())).toEqual(
      paths.map((_, n) => `T${n}`),
    )
    // The views handed to the visitor share buffers: sixteen lanes, not forty files' worth.
    const buffers = new Set<ArrayBufferLike>()
    await run(fs().readEnds!(paths, 4, 4, (_, e) => e && buffers.add(e.head.buffer)))
    expect(buffers.size).toBeLessThanOrEqual(16)
  })

  it("checks a folder once for its plain files, and a link or a path outside by the full check", async () => {
    const dir = join(world.home, ".claude/projects/-ws")
    const plain = world.write(join(dir, "a.jsonl"), "AAAA")
    world.write(join(world.home, ".agents/skills/x/SKILL.md"), "SKILL")
    world.write(join(world.home, ".ssh/id_rsa"), "secret")
    symlinkSync(join(world.home, ".agents/skills/x/SKILL.md"), join(dir, "in-scope.jsonl"))
    symlinkSync(join(world.home, ".ssh/id_rsa"), join(dir, "outside.jsonl"))
    const found = await endsOf(
      [
        plain,
        join(dir, "in-scope.jsonl"),
        join(dir, "outside.jsonl"),
        "~/.claude/projects/-ws/../../../.ssh/id_rsa",
      ],
      2,
      2,
    )
    expect(found.map((e) => e && text(e.head))).toEqual(["AA", "SK", null, null])
    expect(refusals()).toHaveLength(2)
    expect(refusals().some((r) => r.includes("outside.jsonl"))).toBe(true)
  })

  it("asked for no bytes, gives sizes and times like stat, a link by the full check", async () => {
    const dir = join(world.home, ".claude/projects/-ws")
    const file = world.write(join(dir, "a.jsonl"), "12345")
    world.write(join(world.home, ".ssh/id_rsa"), "secret")
    symlinkSync(join(world.home, ".ssh/id_rsa"), join(dir, "outside.jsonl"))
    const found = await endsOf([file, join(dir, "outside.jsonl"), dir], 0, 0)
    const st = await run(fs().stat(file))
    expect(found[0]).toMatchObject({ size: 5, mtimeMs: st?.mtimeMs, birthtimeMs: st?.birthtimeMs })
    expect(found[0]?.head.length).toBe(0)
    expect(found.slice(1)).toEqual([null, null])
    expect(refusals()).toHaveLength(1)
  })

  it("lets the host's event loop run while it reads a large batch", async () => {
    const paths = Array.from({ length: 600 }, (_, n) =>
      world.write(join(world.home, `.claude/projects/-many/f${n}.jsonl`), `${n}`),
    )
    const loop = countTurns()
    const found = await endsOf(paths, 4, 4)
    loop.stop()
    expect(found.every((e, n) => e !== null && text(e?.head) === `${n}`)).toBe(true)
    expect(loop.turns).toBeGreaterThanOrEqual(2)
  })

  it("reads calls side by side in turns of the event loop, one folder's chunk a turn, sizes alone at once", async () => {
    const folders = Array.from({ length: 8 }, (_, f) =>
      Array.from({ length: 5 }, (_, n) =>
        world.write(join(world.home, `.claude/projects/-f${f}/s${n}.jsonl`), `${f}:${n}`),
      ),
    )
    const loop = countTurns()
    /** Each folder's call at once, as the list makes them: the turns its files were visited in. */
    const turnsOf = (head: number, tail: number) =>
      Promise.all(
        folders.map(async (paths) => {
          const seen = new Set<number>()
          await run(fs().readEnds!(paths, head, tail, () => void seen.add(loop.turns)))
          return seen
        }),
      )
    const withBytes = await turnsOf(4, 4)
    const sizesOnly = await turnsOf(0, 0)
    loop.stop()
    // Each folder's files in one turn, and no two folders in the same one:
    // whatever one folder's reads sent on leaves before the next folder's reads.
    expect(withBytes.map((s) => s.size)).toEqual(folders.map(() => 1))
    const used = withBytes.map((s) => [...s][0] as number)
    expect(new Set(used).size).toBe(folders.length)
    // Sizes and times send next to nothing on: no turn waited for.
    expect(sizesOnly.every((s) => s.size === 1)).toBe(true)
  })

  it("refuses what every other call refuses: outside the scopes, `..` out of them, a link out of them", async () => {
    world.write(join(world.home, ".ssh/id_rsa"), "secret")
    mkdirSync(join(world.home, ".claude/skills"), { recursive: true })
    symlinkSync("/etc/passwd", join(world.home, ".claude/skills/passwd"))
    symlinkSync("/etc", join(world.home, ".claude/skills/evil"))
    expect(await ends(join(world.home, ".ssh/id_rsa"), 10, 10)).toBeNull()
    expect(await ends("~/.claude/../.ssh/id_rsa", 10, 10)).toBeNull()
    expect(await ends("~/.claude/skills/passwd", 10, 10)).toBeNull()
    expect(await ends("~/.claude/skills/evil/passwd", 10, 10)).toBeNull()
    expect(await ends(".claude/settings.json", 10, 10)).toBeNull()
    expect(refusals()).toHaveLength(5)
  })

  it("follows a link into another scope, as read does", async () => {
    world.write(join(world.home, ".agents/skills/shared/SKILL.md"), "---\nname: shared\n---\n")
    mkdirSync(join(world.home, ".claude/skills"), { recursive: true })
    symlinkSync(join(world.home, ".agents/skills/shared"), join(world.home, ".claude/skills/shared"))
    const found = await ends("~/.claude/skills/shared/SKILL.md", 3, 3)
    expect(text(found?.head)).toBe("---")
    expect(refusals()).toEqual([])
  })

  it("answers null, without a refusal, for a missing file, a folder and a FIFO (whose open does not block)", async () => {
    mkdirSync(join(world.home, ".claude/projects/-ws"), { recursive: true })
    const fifo = join(world.home, ".claude/projects/-ws/pipe.jsonl")
    execFileSync("mkfifo", [fifo])
    expect(await ends("~/.claude/projects/-ws/none.jsonl", 10, 10)).toBeNull()
    expect(await ends("~/.claude/projects/-ws", 10, 10)).toBeNull()
    expect(await ends(fifo, 10, 10)).toBeNull()
    expect(refusals()).toEqual([])
  })
})

describe("what is not a plain file of one name inside a scope", () => {
  it("a hard link inside ~/.claude to a file outside is refused, by read, stat and readEnds, and logged", async () => {
    const outside = world.write(join(world.root, "secret.txt"), "secret")
    mkdirSync(join(world.home, ".claude/projects/-ws"), { recursive: true })
    const linked = join(world.home, ".claude/projects/-ws/linked.jsonl")
    linkSync(outside, linked)
    expect(await read(linked)).toBeNull()
    expect(await run(fs().stat(linked))).toBeNull()
    expect(await ends(linked, 4, 4)).toBeNull()
    expect(await endsOf([linked], 0, 0)).toEqual([null])
    expect(refusals().filter((r) => r.includes("hard links")).length).toBe(4)
  })

  it("fs.read, readRange and stream of a FIFO answer null at once (the open never blocks)", async () => {
    mkdirSync(join(world.home, ".claude/projects/-ws"), { recursive: true })
    const fifo = join(world.home, ".claude/projects/-ws/pipe.jsonl")
    execFileSync("mkfifo", [fifo])
    const answers = await Promise.race([
      Promise.all([read(fifo), run(fs().readRange(fifo, 0, 10)), run(fs().stream(fifo))]),
      new Promise((resolve) => setTimeout(() => resolve("blocked"), 2_000)),
    ])
    expect(answers).toEqual([null, null, null])
    expect((await run(fs().stat(fifo)))?.kind).toBe("other")
  })
})
