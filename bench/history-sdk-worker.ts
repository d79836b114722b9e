/**
 * One measured call of the Claude Agent SDK's session readers, in a process
 * of its own: the SDK's side of the history benchmark (bench/history.ts).
 * Bundled like ours with esbuild, the SDK itself left as a package import,
 * and run with plain `node`.
 *
 *   node history-sdk-worker.mjs sdk-list|sdk-read    (CLAUDE_CONFIG_DIR and BENCH_CORPUS in the environment)
 */
import { getSessionMessages, listSessions } from "@anthropic-ai/claude-agent-sdk"
import type { Corpus } from "./corpus.ts"
import { measureCall } from "./measure.ts"

const corpus = JSON.parse(process.env.BENCH_CORPUS ?? "{}") as Corpus
const mode = process.argv[2]

const call =
  mode === "sdk-list"
    ? async () => (await listSessions()).length
    : async () => (await getSessionMessages(corpus.readSessionId, { dir: corpus.readCwd })).length

measureCall(call).then(
  (sample) => {
    process.stdout.write(`${JSON.stringify(sample)}\n`)
    process.exit(0)
  },
  (error) => {
    console.error(error)
    process.exit(1)
  },
)
