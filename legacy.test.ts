import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { INSTANCES_KEY } from "./instances.ts"
import { importLegacy, LEGACY_FLAG_KEY } from "./legacy.ts"
import { withBroker } from "./sdk/context.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"

const data = "/data/plugins/convergence-claude"
const run = (broker: ReturnType<typeof makeMemoryBroker>) =>
  Effect.runPromise(withBroker(broker.api)(importLegacy))

const legacyFiles = {
  [`${data}/legacy/instances.json`]: JSON.stringify([
    { id: "personal", name: "Claude Personal (legacy)", configDir: "~/.claude_personal" },
    {
      id: "openrouter",
      configDir: "~/.claude_openrouter",
      env: { ANTHROPIC_BASE_URL: "https://openrouter.ai/api" },
    },
    { name: "no id" },
  ]),
  [`${data}/legacy/sessions/s-1.json`]: JSON.stringify({ cli: "c-1", sent: { "item-1": 0 } }),
  [`${data}/legacy/sessions/s-2.json`]: JSON.stringify({ sent: { "item-9": 3 } }),
  [`${data}/legacy/sessions/broken.json`]: "{ not json",
  [`${data}/legacy/sessions/notes.txt`]: "ignored",
}

describe("importLegacy", () => {
  it("merges legacy accounts and session states without overwriting what storage holds", async () => {
    const broker = makeMemoryBroker({
      data,
      files: legacyFiles,
      storage: {
        [INSTANCES_KEY]: [{ id: "personal", name: "Mine", configDir: "~/.mine" }],
        "session:s-2": { cli: "kept", sent: {} },
      },
    })
    await run(broker)
    expect(broker.storage.get(INSTANCES_KEY)).toEqual([
      { id: "personal", name: "Mine", configDir: "~/.mine" },
      {
        id: "openrouter",
        configDir: "~/.claude_openrouter",
        env: { ANTHROPIC_BASE_URL: "https://openrouter.ai/api" },
      },
    ])
    expect(broker.storage.get("session:s-1")).toEqual({ cli: "c-1", sent: { "item-1": 0 } })
    expect(broker.storage.get("session:s-2")).toEqual({ cli: "kept", sent: {} })
    expect(broker.storage.has("session:broken")).toBe(false)
    expect(broker.storage.has("session:notes")).toBe(false)
    expect(broker.storage.get(LEGACY_FLAG_KEY)).toBe(true)
    expect(broker.logs.some((l) => l.level === "warn" && l.message.includes("broken.json"))).toBe(true)
  })

  it("runs once: a second activation changes nothing even if storage was edited since", async () => {
    const broker = makeMemoryBroker({ data, files: legacyFiles })
    await run(broker)
    expect((broker.storage.get(INSTANCES_KEY) as unknown[]).length).toBe(2)
    broker.storage.set(INSTANCES_KEY, [])
    broker.storage.delete("session:s-1")
    await run(broker)
    expect(broker.storage.get(INSTANCES_KEY)).toEqual([])
    expect(broker.storage.has("session:s-1")).toBe(false)
  })

  it("marks nothing while there is no legacy folder, so one moved in later is still read", async () => {
    const broker = makeMemoryBroker({ data })
    await run(broker)
    expect(broker.storage.has(LEGACY_FLAG_KEY)).toBe(false)
    broker.files.set(`${data}/legacy/instances.json`, JSON.stringify([{ id: "late" }]))
    await run(broker)
    expect(broker.storage.get(INSTANCES_KEY)).toEqual([{ id: "late" }])
    expect(broker.storage.get(LEGACY_FLAG_KEY)).toBe(true)
  })

  it("warns about an instances file that is not a list and still imports the sessions", async () => {
    const broker = makeMemoryBroker({
      data,
      files: {
        [`${data}/legacy/instances.json`]: "{}",
        [`${data}/legacy/sessions/s-3.json`]: "{}",
      },
    })
    await run(broker)
    expect(broker.storage.has(INSTANCES_KEY)).toBe(false)
    expect(broker.storage.get("session:s-3")).toEqual({})
    expect(broker.logs.some((l) => l.level === "warn" && l.message.includes("instances.json"))).toBe(true)
  })
})
