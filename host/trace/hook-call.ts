/**
 * One call of the Claude Code plugin's hooks, on Node: the payload parsed,
 * the session's lock taken, trace/hook.ts run over the Node broker
 * (hook-broker.ts). It never throws and prints nothing on stdout; with
 * CLAUDE_AGENT_TRACE_DEBUG=1 it says on stderr what it did and what went
 * wrong.
 */
import { writeSync } from "node:fs"
import { Effect } from "effect"
import { runHook } from "../../trace/hook.ts"
import { traceKey } from "../../trace/tracker.ts"
import { asRecord, asString } from "../../values.ts"
import { hookBroker, storageFile } from "./hook-broker.ts"
import { withLock } from "./session-lock.ts"

export const DEBUG_KNOB = "CLAUDE_AGENT_TRACE_DEBUG"

const writeErr = (text: string) => {
  try {
    writeSync(2, text)
  } catch {}
}

/** One hook call: `stdin` is the payload's text. Never throws. */
export const hookCall = async (stdin: string, env: NodeJS.ProcessEnv): Promise<void> => {
  const debug = /^(1|true|yes|on)$/i.test(env[DEBUG_KNOB] ?? "")
  const say = (text: string) => (debug ? writeErr(`agent-trace: ${text}\n`) : undefined)
  try {
    const payload: unknown = JSON.parse(stdin)
    const data = env.CLAUDE_PLUGIN_DATA
    const session = asString(asRecord(payload).session_id)
    if (!data || !session) return say("no CLAUDE_PLUGIN_DATA or no session_id: nothing to do")
    const context = hookBroker({ env, data, debug, write: writeErr })
    const done = await withLock(`${storageFile(data, traceKey(session))}.lock`, () =>
      Effect.runPromise(runHook(payload).pipe(Effect.provideContext(context))),
    )
    if (done === undefined) say(`session ${session} stayed locked: this call was skipped`)
  } catch (error) {
    say(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  }
}
