/**
 * The bench's long stored chat (`npm run bench -- acp`'s session/load): a
 * session file in the CLI's record format under the sandbox's HOME, each
 * turn a prompt, a Bash call and its result, and an answer. Its own file so
 * a scratch measurement can write the same chat.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { encodeProjectPath, type Sandbox } from "../testkit/cli.ts"

/** A long stored chat in the CLI's record format: prompt, a Bash call and its result, an answer, per turn. */
export const writeLongChat = (sandbox: Sandbox, sessionId: string, turns: number): number => {
  const dir = join(sandbox.home, ".claude", "projects", encodeProjectPath(sandbox.ws))
  mkdirSync(dir, { recursive: true })
  const lines: string[] = []
  let parent: string | null = null
  let n = 0
  const base = Date.parse("2026-11-01T08:00:00Z")
  const record = (type: "user" | "assistant", message: unknown, extra: Record<string, unknown> = {}) => {
    const uuid = `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`
    lines.push(
      JSON.stringify({
        parentUuid: parent,
        isSidechain: false,
        type,
        message,
        uuid,
        timestamp: new Date(base + n * 1000).toISOString(),
        userType: "external",
        cwd: sandbox.ws,
        sessionId,
        version: "2.1.332",
        ...extra,
      }),
    )
    parent = uuid
  }
  const filler = "lorem ipsum dolor sit amet ".repeat(20)
  for (let turn = 0; turn < turns; turn++) {
    record("user", { role: "user", content: [{ type: "text", text: `Question ${turn}: ${filler}` }] })
    const id = `toolu_load_${turn}`
    record("assistant", {
      id: `msg_load_${turn}_a`,
      type: "message",
      role: "assistant",
      model: "claude-opus-5-5",
      content: [
        { type: "tool_use", id, name: "Bash", input: { command: `echo ${turn}`, description: "Echo" } },
      ],
      stop_reason: "tool_use",
      usage: { input_tokens: 100, output_tokens: 20 },
    })
    record(
      "user",
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: id, content: `${turn}\n${filler}`, is_error: false }],
      },
      { toolUseResult: { stdout: `${turn}`, stderr: "", interrupted: false } },
    )
    record("assistant", {
      id: `msg_load_${turn}_b`,
      type: "message",
      role: "assistant",
      model: "claude-opus-5-5",
      content: [{ type: "text", text: `Answer ${turn}: ${filler}` }],
      stop_reason: "end_turn",
      usage: { input_tokens: 100, output_tokens: 50 },
    })
  }
  const body = `${lines.join("\n")}\n`
  writeFileSync(join(dir, `${sessionId}.jsonl`), body)
  return body.length
}
