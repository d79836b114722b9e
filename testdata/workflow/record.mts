// Records testdata/workflow/ from the REAL CLI (2.1.332) against testkit's
// scripted model: a dynamic workflow of two phases and three agents (alpha and
// beta in parallel in "Gather", gamma in "Report"); beta waits for a slot first.
// Run from the repo root: npx tsx testdata/workflow/record.mts
// The sandbox root is replaced by /sandbox everywhere; the CLI's system prompt
// records (api-request*, prompt_snapshot) and rendered attachment text are dropped.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { startModelServer, text, thinking, toolUse } from "../../testkit/model-server.ts"
import { allow, initialize, makeSandbox, nextResult, spawnClaude, standardArgs } from "../../testkit/cli.ts"

const out = new URL(".", import.meta.url).pathname
const script = `export const meta = {
  name: 'probe-flow',
  description: 'Gather facts then report',
  phases: [{ title: 'Gather' }, { title: 'Report' }],
}
phase('Gather')
const found = await parallel([
  () => agent('WFAGENT_ALPHA: list the files', { label: 'alpha', phase: 'Gather' }),
  () => agent('WFAGENT_BETA: count the lines', { label: 'beta', phase: 'Gather' }),
])
log('gathered ' + found.length)
phase('Report')
const report = await agent('WFAGENT_GAMMA: write the report from ' + found.join(' | '), { label: 'gamma', phase: 'Report' })
return { report }
`
const server = await startModelServer({
  main: [
    [thinking("A workflow fits."), toolUse("Workflow", { script }, "toolu_wf_1")],
    [text("Workflow started.")],
    [text("The workflow finished.")],
  ],
  subagents: [
    {
      match: "WFAGENT_ALPHA",
      turns: [[toolUse("Bash", { command: "ls", description: "List" }, "toolu_alpha_bash")], [text("alpha: three files")]],
    },
    { match: "WFAGENT_BETA", turns: [[thinking("Counting."), text("beta: 42 lines")]] },
    { match: "WFAGENT_GAMMA", turns: [[text("gamma: report done")]] },
  ],
})
const sb = makeSandbox()
const p = spawnClaude(standardArgs(), { sandbox: sb, server, env: { CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS: "1" } })
p.onControlRequest("can_use_tool", (r: Record<string, unknown>) => allow(r.input))
await initialize(p)
p.sendUser("Run the workflow")
await nextResult(p, 60_000)
await nextResult(p, 90_000)
await new Promise((r) => setTimeout(r, 1500))
await p.close(2000)

const encodedRoot = sb.root.replace(/[^A-Za-z0-9-]/g, "-")
const scrubText = (s: string) => s.split(sb.root).join("/sandbox").split(encodedRoot).join("-sandbox")
const dropped = new Set(["api-request-shape", "api-request-blob", "api-request"])
const scrubRecord = (line: string): string | undefined => {
  if (line.trim() === "") return undefined
  const r = JSON.parse(line)
  if (dropped.has(r.type)) return undefined
  if (r.type === "attachment" && r.attachment?.type === "prompt_snapshot") return undefined
  delete r.rendered
  return scrubText(JSON.stringify(r))
}
for (const d of ["projects", "tasks"]) rmSync(join(out, d), { recursive: true, force: true })
const copyTree = (from: string, to: string) => {
  for (const name of readdirSync(from)) {
    const src = join(from, name)
    const dst = join(to, scrubText(name))
    if (statSync(src).isDirectory()) {
      if (name === "memory") continue
      mkdirSync(dst, { recursive: true })
      copyTree(src, dst)
    } else if (name.endsWith(".jsonl")) {
      const lines = readFileSync(src, "utf8").split("\n").map(scrubRecord).filter((l) => l !== undefined)
      writeFileSync(dst, lines.map((l) => `${l}\n`).join(""))
    } else writeFileSync(dst, scrubText(readFileSync(src, "utf8")))
  }
}
mkdirSync(join(out, "projects"), { recursive: true })
copyTree(sb.projects, join(out, "projects"))
// The output_file record lives in the CLI's temporary folder (no plugin grant covers it).
const findOutputs = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n)
    return statSync(p).isDirectory() ? (n === "cc-socks" ? [] : findOutputs(p)) : p.endsWith(".output") ? [p] : []
  })
for (const f of findOutputs(sb.tmp)) {
  const dst = join(out, "tasks", scrubText(relative(sb.tmp, f)))
  mkdirSync(join(dst, ".."), { recursive: true })
  writeFileSync(dst, scrubText(readFileSync(f, "utf8")))
}
const frames = p.frames.filter((f) => !(f.type === "control_response"))
writeFileSync(join(out, "stdout.jsonl"), p.frames.map((f) => `${scrubText(JSON.stringify(f))}\n`).join(""))
writeFileSync(join(out, "stdin.jsonl"), p.sent.map((f) => `${scrubText(JSON.stringify(f))}\n`).join(""))
writeFileSync(
  join(out, "notes.json"),
  JSON.stringify({ cli: "2.1.332", recorded: new Date().toISOString(), sandboxRoot: "/sandbox", frames: frames.length }, null, 2),
)
await server.close()
sb.cleanup()
