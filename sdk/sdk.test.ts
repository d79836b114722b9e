import { Effect, Fiber, type Scope, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { diffStats, unifiedDiff } from "./diff.ts"
import { frameLine, lines, parseLine } from "./lines.ts"
import { handleMcp, NOTIFICATION_ACK } from "./mcp.ts"
import { basename, dirname, expandHome, isWithin, join, normalize } from "./paths.ts"
import { Process } from "./plugin-api.ts"
import { withBroker } from "./context.ts"
import { makeFakePeer } from "./testing/fake-peer.ts"
import { makeMemoryBroker } from "./testing/memory-broker.ts"

const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Effect.scoped(effect))

describe("paths", () => {
  it("normalizes and refuses to climb above the root", () => {
    expect(normalize("/a/b/../c/./d//e")).toBe("/a/c/d/e")
    expect(normalize("/../../etc")).toBe("/etc")
    expect(join("/home/u", ".claude", "projects")).toBe("/home/u/.claude/projects")
    expect(dirname("/a/b/c.jsonl")).toBe("/a/b")
    expect(basename("/a/b/c.jsonl", ".jsonl")).toBe("c")
    expect(expandHome("~/.claude", "/home/u")).toBe("/home/u/.claude")
  })
  it("isWithin does not match a sibling with the same prefix", () => {
    expect(isWithin("/home/u/.claude/x", "/home/u/.claude")).toBe(true)
    expect(isWithin("/home/u/.claude_personal/x", "/home/u/.claude")).toBe(false)
    expect(isWithin("/home/u/.claude/../.ssh", "/home/u/.claude")).toBe(false)
  })
})

describe("lines", () => {
  it("splits across chunk boundaries and keeps a last unterminated line", async () => {
    const enc = new TextEncoder()
    const chunks = ['{"a":', '1}\n{"b"', ":2}\r\n\n", '{"c":3}'].map((s) => enc.encode(s))
    const out = await Effect.runPromise(Stream.runCollect(lines(Stream.fromIterable(chunks))))
    expect([...out].filter((l) => l !== "").map(parseLine)).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }])
    expect(frameLine({ x: 1 })).toBe('{"x":1}\n')
  })
})

describe("diff", () => {
  it("makes a unified diff with a/ b/ headers and hunk counts", () => {
    const patch = unifiedDiff("/ws/a.txt", "one\ntwo\nthree\n", "one\n2\nthree\n")
    expect(patch).toContain("--- a/ws/a.txt")
    expect(patch).toContain("+++ b/ws/a.txt")
    expect(patch).toContain("-two")
    expect(patch).toContain("+2")
    expect(diffStats("one\ntwo\n", "one\n2\nthree\n")).toEqual({ added: 2, removed: 1 })
  })
})

describe("mcp over the control channel", () => {
  const spec = {
    name: "convergence",
    version: "0.2.0",
    tools: [{ name: "shout", description: "Upper-cases", inputSchema: { type: "object" } }],
    callTool: (_name: string, input: unknown) =>
      Effect.succeed({
        content: [{ type: "text" as const, text: String((input as { text: string }).text).toUpperCase() }],
      }),
  }
  it("answers initialize, tools/list, tools/call and notifications", async () => {
    const init = (await Effect.runPromise(
      handleMcp(spec, {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25" },
      }),
    )) as { result: { serverInfo: { name: string } } }
    expect(init.result.serverInfo.name).toBe("convergence")
    expect(
      await Effect.runPromise(handleMcp(spec, { jsonrpc: "2.0", method: "notifications/initialized" })),
    ).toEqual(NOTIFICATION_ACK)
    const list = (await Effect.runPromise(
      handleMcp(spec, { jsonrpc: "2.0", id: 1, method: "tools/list" }),
    )) as {
      result: { tools: Array<{ name: string }> }
    }
    expect(list.result.tools.map((t) => t.name)).toEqual(["shout"])
    const call = await Effect.runPromise(
      handleMcp(spec, {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "shout", arguments: { text: "hi" } },
      }),
    )
    expect(call).toMatchObject({ id: 2, result: { content: [{ type: "text", text: "HI" }], isError: false } })
    const unknown = await Effect.runPromise(
      handleMcp(spec, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "nope" } }),
    )
    expect(unknown).toMatchObject({ id: 3, error: { code: -32602 } })
  })
})

describe("memory broker", () => {
  it("follows links, lists folders and answers null for missing files", async () => {
    const broker = makeMemoryBroker({
      files: {
        "/home/user/.agents/skills/s/SKILL.md": "---\nname: s\n---\n",
        "/home/user/.claude/settings.json": "{}",
      },
      links: { "/home/user/.claude/skills/s": "/home/user/.agents/skills/s" },
    })
    const fs = broker.api.fs
    expect(await Effect.runPromise(fs.read("/home/user/.claude/skills/s/SKILL.md"))).toContain("name: s")
    expect(await Effect.runPromise(fs.read("/nope"))).toBeNull()
    expect(await Effect.runPromise(fs.list("/home/user/.claude"))).toEqual(
      expect.arrayContaining([{ name: "settings.json", kind: "file" }]),
    )
    expect(await Effect.runPromise(fs.realpath("/home/user/.claude/skills/s"))).toBe(
      "/home/user/.agents/skills/s",
    )
    const range = await Effect.runPromise(fs.readRange("/home/user/.claude/settings.json", 1, 100))
    expect(new TextDecoder().decode(range!)).toBe("}")
  })
})

describe("FakePeer", () => {
  it("plays the CLI side: control round trips both ways and stdout frames", async () => {
    await run(
      Effect.gen(function* () {
        const peer = yield* makeFakePeer
        const broker = makeMemoryBroker({ spawn: { claude: peer.spawn } })
        const program = Effect.gen(function* () {
          const process = yield* Process
          const handle = yield* process.spawn("claude", ["--session-id", "abc", "--add-dir", "/ws"], {
            cwd: "/ws",
          })
          const proc = yield* peer.nextProcess
          expect(proc.flag("--session-id")).toBe("abc")
          expect(proc.flags("--add-dir")).toEqual(["/ws"])
          yield* handle.write(
            frameLine({ type: "control_request", request_id: "r1", request: { subtype: "initialize" } }),
          )
          const init = yield* proc.expectControl("initialize")
          expect(init.request_id).toBe("r1")
          yield* proc.respond("r1", { models: [] })
          // The plugin's reader answers the CLI's own request.
          const reader = yield* Stream.runCollect(lines(handle.stdout).pipe(Stream.take(2))).pipe(
            Effect.forkChild,
          )
          const answer = proc.request({ subtype: "can_use_tool", tool_name: "Bash" })
          const answered = yield* Effect.forkChild(answer)
          yield* Effect.sleep(10)
          yield* handle.write(
            frameLine({
              type: "control_response",
              response: { subtype: "success", request_id: "cli_req_1", response: { behavior: "allow" } },
            }),
          )
          expect(yield* Fiber.join(answered)).toMatchObject({ response: { behavior: "allow" } })
          const frames = [...(yield* Fiber.join(reader))].map(parseLine)
          expect(frames[0]).toMatchObject({ type: "control_response" })
          expect(frames[1]).toMatchObject({ type: "control_request", request: { subtype: "can_use_tool" } })
          yield* proc.exit(1)
          expect(yield* handle.exit).toEqual({ code: 1, signal: null })
        })
        yield* withBroker(broker.api)(program)
      }),
    )
  })
})

describe("file ends", () => {
  it("plans one whole read when the ends meet, two otherwise, clipped to the size", async () => {
    const { endsOfWhole, planEnds } = await import("./file-ends.ts")
    expect(planEnds(10, 4, 4)).toEqual({ headLength: 4, tailLength: 4, whole: false })
    expect(planEnds(6, 4, 4)).toEqual({ headLength: 4, tailLength: 4, whole: true })
    expect(planEnds(3, 8, 8.7)).toEqual({ headLength: 3, tailLength: 3, whole: true })
    const bytes = new TextEncoder().encode("abcdef")
    const { head, tail } = endsOfWhole(bytes, planEnds(6, 4, 4))
    expect(new TextDecoder().decode(head)).toBe("abcd")
    expect(new TextDecoder().decode(tail)).toBe("cdef")
  })
})
