import { Effect, Result } from "effect"
import { describe, expect, it } from "vitest"
import {
  type Account,
  agentIdFor,
  DEFAULT_ACCOUNT,
  INSTANCES_KEY,
  loadAccounts,
  saveAccounts,
  validateAccount,
} from "./instances.ts"
import { withBroker } from "./sdk/context.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"

const run = <A, E, R>(broker: ReturnType<typeof makeMemoryBroker>, effect: Effect.Effect<A, E, R>) =>
  Effect.runPromise(withBroker(broker.api)(effect) as Effect.Effect<A, E, never>)

describe("agent ids", () => {
  it("is `claude` for the default account and `claude:<id>` for the others", () => {
    expect(agentIdFor(DEFAULT_ACCOUNT)).toBe("claude")
    expect(agentIdFor({ id: "personal", name: "Personal" })).toBe("claude:personal")
  })
})

describe("validateAccount", () => {
  it("accepts id, name, configDir and env, naming a nameless account", () => {
    const ok = validateAccount({
      id: "openrouter",
      configDir: "~/.claude_or",
      env: { ANTHROPIC_BASE_URL: "x" },
    })
    expect(Result.isSuccess(ok)).toBe(true)
    if (Result.isSuccess(ok))
      expect(ok.success).toEqual({
        id: "openrouter",
        name: "Claude Code (openrouter)",
        configDir: "~/.claude_or",
        env: { ANTHROPIC_BASE_URL: "x" },
      })
  })
  it.each(["HOME", "CLAUDE_CONFIG_DIR"])("refuses an env that sets %s, with a clear message", (name) => {
    const bad = validateAccount({ id: "work", env: { [name]: "/tmp/x" } })
    expect(Result.isFailure(bad)).toBe(true)
    if (Result.isFailure(bad)) {
      expect(bad.failure).toContain(`account "work" is refused`)
      expect(bad.failure).toContain(name)
    }
  })
  it("refuses a missing id, a non-string env value and the default account's id", () => {
    expect(Result.isFailure(validateAccount({ name: "x" }))).toBe(true)
    expect(Result.isFailure(validateAccount({ id: "a", env: { X: 1 } }))).toBe(true)
    expect(Result.isFailure(validateAccount({ id: "a b" }))).toBe(true)
    expect(Result.isFailure(validateAccount({ id: "claude" }))).toBe(true)
  })
})

describe("loadAccounts", () => {
  it("loads valid accounts, logs and skips refused ones and repeated ids", async () => {
    const broker = makeMemoryBroker({
      storage: {
        [INSTANCES_KEY]: [
          { id: "personal", name: "Claude Personal", configDir: "~/.claude_personal" },
          { id: "evil", env: { HOME: "/tmp" } },
          { id: "personal", name: "again" },
          "garbage",
          { id: "proxy", env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:1" } },
        ],
      },
    })
    const accounts = await run(broker, loadAccounts)
    expect(accounts.map((a) => a.id)).toEqual(["personal", "proxy"])
    expect(accounts[0]?.name).toBe("Claude Personal")
    const errors = broker.logs.filter((l) => l.level === "error").map((l) => l.message)
    expect(errors.some((m) => m.includes(`"evil" is refused`) && m.includes("HOME"))).toBe(true)
    expect(errors.some((m) => m.includes("listed twice"))).toBe(true)
    expect(errors).toHaveLength(3)
  })
  it("answers [] when nothing is stored, and logs a value that is not a list", async () => {
    const empty = makeMemoryBroker()
    expect(await run(empty, loadAccounts)).toEqual([])
    const wrong = makeMemoryBroker({ storage: { [INSTANCES_KEY]: { id: "x" } } })
    expect(await run(wrong, loadAccounts)).toEqual([])
    expect(wrong.logs[0]?.level).toBe("error")
  })
  it("round-trips through saveAccounts, never storing the default account", async () => {
    const broker = makeMemoryBroker()
    const accounts: Account[] = [DEFAULT_ACCOUNT, { id: "a", name: "A", configDir: "~/.a", env: { K: "v" } }]
    await run(broker, saveAccounts(accounts))
    expect(broker.storage.get(INSTANCES_KEY)).toEqual([
      { id: "a", name: "A", configDir: "~/.a", env: { K: "v" } },
    ])
    expect(await run(broker, loadAccounts)).toEqual([accounts[1]])
  })
})
