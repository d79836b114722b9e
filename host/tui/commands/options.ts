/**
 * /model, /effort, /approval: list an option's choices, or choose one. A
 * value is set live where the agent can; one it cannot set live (`full`, or
 * a live switch the CLI refused) restarts the session with the flags it
 * needs, and the conversation goes on.
 */
import { needsRestart, OPTION, resolveChoice } from "../choices.ts"
import type { ChatContext } from "../context.ts"
import { choices, closeQuietly, loadInfo, newSession, resumeSession } from "../sessions.ts"
import { type Command, done, note, warn } from "./command.ts"

/** The session again, its process launched with the flags `optionId = value` needs. */
const restartWith = async (ctx: ChatContext, optionId: string, value: string): Promise<boolean> => {
  const { state } = ctx
  const options = { ...state.sessionInfo?.options, ...state.sessionOptions, [optionId]: value }
  const session = state.sessionId
  if (session === undefined || state.userItems.length === 0) {
    // Nothing said yet: a new session started in that mode loses nothing.
    if (!(await newSession(ctx, options))) return false
    closeQuietly(ctx, state.agentId, session)
    note(ctx, `  a new session started for ${value}`)
    return true
  }
  if (ctx.runs.running) {
    warn(ctx, `${value} needs the session restarted: cancel the run first (Ctrl-C)`)
    return false
  }
  await ctx.call("closeSession", { sessionId: session }).catch(() => {})
  const items = state.userItems
  const ok = await resumeSession(
    ctx,
    session,
    `Restarting for ${value}…`,
    `${value} could not start; /approval lists what works`,
    options,
  )
  if (!ok) {
    // Back to the conversation as it was, in the mode it had.
    delete state.sessionOptions[optionId]
    await resumeSession(ctx, session)
    return false
  }
  state.userItems = items
  note(ctx, `  the session restarted with the flags ${value} needs; the conversation goes on`)
  return true
}

const listChoices = (
  ctx: ChatContext,
  optionId: string,
  current: unknown,
  list: ReturnType<typeof choices>,
) => {
  const { paint } = ctx
  const command = optionId === OPTION.approval ? "approval" : optionId
  ctx.say(
    ...list.map(
      (c) =>
        `  ${c.value === current ? paint("cyan", "●") : " "} ${paint(c.unavailable ? "dim" : "bold", c.value)} ${paint("dim", c.unavailable ? `not available: ${c.unavailable}` : c.label)}`,
    ),
    paint("dim", `  /${command} <value> chooses`),
  )
}

const chooseOption = async (ctx: ChatContext, optionId: string, value: string | undefined): Promise<void> => {
  const { state } = ctx
  const info = state.info ?? (await loadInfo(ctx))
  if (!info) return
  const option = info.options.find((o) => o.id === optionId)
  const list = choices(ctx, info, optionId)
  const current =
    state.sessionInfo?.options?.[optionId] ??
    state.sessionOptions[optionId] ??
    (optionId === OPTION.model ? state.sessionInfo?.model : undefined) ??
    option?.default
  if (value === undefined) return listChoices(ctx, optionId, current, list)
  const label = option?.label ?? optionId
  const resolved = resolveChoice(list, value, label.toLowerCase())
  if (!resolved.ok) return warn(ctx, resolved.message)
  const sessionId = state.sessionId
  if (!sessionId) return warn(ctx, "no session")
  const chosen = resolved.value
  const live =
    !needsRestart(optionId, chosen) &&
    (await ctx.attempt(
      undefined,
      `${label} ${chosen} could not be set live; restarting the session for it`,
      () => ctx.call("setOption", { sessionId, optionId, value: chosen }).then(() => true),
    ))
  state.sessionOptions = { ...state.sessionOptions, [optionId]: chosen }
  if (!live && !(await restartWith(ctx, optionId, chosen))) return
  state.sessionInfo = { ...state.sessionInfo, options: { ...state.sessionInfo?.options, [optionId]: chosen } }
  ctx.updateStatus()
  ctx.options.remember?.(optionId, chosen)
  const later = option?.appliesAtNextStart ? " (applies at the next start)" : ""
  done(ctx, `${label}: ${chosen}${later}`)
}

/** The values Tab offers for an option: every choice available here, and its aliases. */
const values = (ctx: ChatContext, optionId: string): string[] => {
  // The info kept from before an info_changed event: fresher info is asked for only when needed.
  const info = ctx.state.info ?? ctx.state.knownInfo
  return info
    ? choices(ctx, info, optionId).flatMap((c) => (c.unavailable ? [] : [c.value, ...c.aliases]))
    : []
}

const optionCommand = (name: string, optionId: string, form: string, what: string): Command => ({
  name,
  usage: [[form, what]],
  complete: (ctx) => values(ctx, optionId),
  run: (ctx, arg) => chooseOption(ctx, optionId, arg),
})

export const optionCommands: ReadonlyArray<Command> = [
  optionCommand("model", OPTION.model, "/model [value]", "list the models, or choose one"),
  optionCommand("effort", OPTION.effort, "/effort [level]", "list the effort levels, or choose one"),
  optionCommand("approval", OPTION.approval, "/approval [mode]", "list the approval modes, or choose one"),
]
