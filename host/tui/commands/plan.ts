/**
 * /plan [on|off]: plan mode, the plugin's toggle beside the approval mode
 * (`plan_mode`): the model explores and writes a plan, and hands it in for
 * approval (ExitPlanMode) before it changes anything; accepting it leaves
 * plan mode for the approval mode the session had. Set live on the session,
 * and kept for the next session this chat opens. Bare /plan says which.
 */
import type { ChatContext } from "../context.ts"
import { type Command, done, note, warn } from "./command.ts"

export const PLAN_OPTION = "plan_mode"

const isOn = (value: unknown): boolean => value === true || value === "true"

/** Plan mode as the session has it (the agent's word first), else as the next session will. */
const planOn = (ctx: ChatContext): boolean =>
  isOn(ctx.state.sessionInfo?.options?.[PLAN_OPTION] ?? ctx.state.sessionOptions[PLAN_OPTION])

const WORDS: Readonly<Record<string, boolean>> = { on: true, off: false, true: true, false: false }

export const planCommand: Command = {
  name: "plan",
  usage: [["/plan [on|off]", "plan mode: the model plans and asks before it changes anything"]],
  complete: () => ["on", "off"],
  run: async (ctx, arg) => {
    if (arg === undefined)
      return note(ctx, `  plan mode is ${planOn(ctx) ? "on" : "off"}; /plan on or /plan off switches it`)
    const value = WORDS[arg.trim().toLowerCase()]
    if (value === undefined) return warn(ctx, `/plan takes on or off, not ${arg}`)
    const { state } = ctx
    const sessionId = state.sessionId
    if (sessionId !== undefined) {
      const set = await ctx.attempt(undefined, "plan mode is unchanged; /plan shows it", () =>
        ctx.call("setOption", { sessionId, optionId: PLAN_OPTION, value }).then(() => true),
      )
      if (set !== true) return
      state.sessionInfo = {
        ...state.sessionInfo,
        options: { ...state.sessionInfo?.options, [PLAN_OPTION]: value },
      }
    }
    state.sessionOptions = { ...state.sessionOptions, [PLAN_OPTION]: value }
    ctx.updateStatus()
    done(
      ctx,
      `Plan mode: ${value ? "on" : "off"}${sessionId === undefined ? " (from the next session)" : ""}`,
    )
  },
}
