// Scenarios of what the CLI stores for commands: a control request's record
// beside commands the user typed, from a client that sends its prompts
// without a uuid (another client's, an older host's).

import { initialize, nextResult } from "../cli.ts"
import { text } from "../model-server.ts"
import type { ScenarioDef } from "../scenario-run.ts"

/** A prompt frame with no `uuid`, as a client that does not set one writes it. */
const withoutUuid = (content: string) => ({
  type: "user",
  message: { role: "user", content: [{ type: "text", text: content }] },
  parent_tool_use_id: null,
  session_id: "",
})

export const localCommands: ScenarioDef = {
  name: "local_commands",
  description:
    "Prompts without a uuid: a prompt, set_model (its /model record), a typed /model, a typed /compact (summarization as a side request), a prompt.",
  setup: () => ({
    model: { main: [[text("First answer.")], [text("Second answer.")]] },
    async drive(ctx) {
      const p = ctx.spawn()
      await initialize(p)
      const turn = async (content: string) => {
        p.send(withoutUuid(content))
        return nextResult(p)
      }
      await turn("alpha")
      ctx.note("set_model", await p.request({ subtype: "set_model", model: "sonnet" }))
      await turn("/model haiku")
      await turn("/compact")
      await turn("beta")
    },
  }),
}
