/**
 * The one rewind lookup (history.ts `rewindIn`) on hand-built prompts, and
 * through `rewindTarget` on a recording: only a prompt of the conversation as
 * it stands is a rewind point, by its record uuid or by the index older
 * session state kept.
 */
import { readdirSync } from "node:fs"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { NodeFsLayer } from "../testkit/node-fs.ts"
import { readChain } from "./chain.ts"
import { readPrompts, rewindIn, rewindTarget, type StoredPrompts } from "../history.ts"
import type { StoredRecord } from "../records.ts"

const user = (uuid: string, parentUuid: string | null, content: unknown): StoredRecord => ({
  type: "user",
  uuid,
  parentUuid,
  message: { role: "user", content },
})
const stored = (prompts: StoredRecord[]): StoredPrompts => ({ found: true, prompts })

describe("rewindIn", () => {
  const prompts = stored([user("u1", null, "one"), user("u2", "a1", "two"), user("u3", "a2", "three")])

  it("resumes at the prompt's parent and keeps the prompts before it", () => {
    expect(rewindIn(prompts, "u3")).toEqual({ resumeAt: "a2", kept: new Set(["u1", "u2"]) })
    expect(rewindIn(prompts, 1)).toEqual({ resumeAt: "a1", kept: new Set(["u1"]) })
  })
  it("the first prompt leaves nothing", () => {
    expect(rewindIn(prompts, "u1")).toEqual({ kept: new Set() })
    expect(rewindIn(prompts, 0)).toEqual({ kept: new Set() })
  })
  it("a later prompt with no parent is refused, not rewound to nothing", () => {
    const orphan = stored([user("u1", null, "one"), user("u2", null, "two")])
    expect(rewindIn(orphan, "u2")).toEqual({ refused: "the message u2 has no parent to resume at" })
    expect(rewindIn(orphan, "u1")).toEqual({ kept: new Set() })
  })
  it("anything else is no rewind point", () => {
    expect(rewindIn(prompts, "a1")).toBeUndefined()
    expect(rewindIn(prompts, 3)).toBeUndefined()
    expect(rewindIn(stored([]), "u1")).toBeUndefined()
  })
})

describe("rewindTarget over a recording", () => {
  const dir = "testdata/text_thinking/projects/-home-dev-ws"
  const id = (readdirSync(dir).find((f) => f.endsWith(".jsonl")) ?? "").replace(".jsonl", "")
  const config = "testdata/text_thinking"
  const onDisk = <A>(effect: Effect.Effect<A, never, never>) => Effect.runPromise(effect)

  it("refuses an assistant record: only prompts are rewind points", async () => {
    const chain = await onDisk(readChain(`${dir}/${id}.jsonl`).pipe(Effect.provide(NodeFsLayer)))
    const reply = chain.records.find((r) => r.type === "assistant" && typeof r.parentUuid === "string")
    expect(reply).toBeDefined()
    const target = await onDisk(
      rewindTarget(config, "/home/dev/ws", id, String(reply?.uuid)).pipe(Effect.provide(NodeFsLayer)),
    )
    expect(target).toHaveProperty("error")
  })
  it("reads the prompts once for every lookup", async () => {
    const read = await onDisk(readPrompts(config, "/home/dev/ws", id).pipe(Effect.provide(NodeFsLayer)))
    expect(read.found).toBe(true)
    const keptOf = (uuid: string) => {
      const point = rewindIn(read, uuid)
      return point !== undefined && "kept" in point ? point.kept.size : undefined
    }
    expect(read.prompts.map((p) => keptOf(p.uuid as string))).toEqual(read.prompts.map((_, i) => i))
  })
})
