/**
 * The chat's session: asking the agent about itself, checking option values
 * against its own choices, opening a session (new, resumed, forked) while
 * holding the events that arrive before its id is known, and naming a stored
 * session by its number in the last /sessions list or a start of its id.
 */
import type { AgentInfo, SessionInfoPayload, SessionSummary, TranscriptItem } from "../../sdk/protocol.ts"
import { choicesFor, OPTION, resolveChoice, rootWithoutSandbox } from "./choices.ts"
import type { ChatContext } from "./context.ts"
import { shortPath } from "./status.ts"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const loadInfo = async (ctx: ChatContext): Promise<AgentInfo | undefined> => {
  const info = await ctx.attempt("Checking Claude Code…", "is `claude --version` working? try --demo", () =>
    ctx.call("initialize"),
  )
  if (info) ctx.state.info = info
  ctx.updateStatus()
  return info
}

/** The choices an option offers now (efforts depend on the model). */
export const choices = (ctx: ChatContext, info: AgentInfo, optionId: string, model = currentModel(ctx)) =>
  choicesFor(info, optionId, {
    ...(model !== undefined && { model }),
    rootWithoutSandbox: rootWithoutSandbox(ctx.options.env ?? process.env),
    ...(ctx.state.fullRefused !== undefined && { fullRefused: ctx.state.fullRefused }),
  })

export const currentModel = (ctx: ChatContext): string | undefined => {
  const { sessionInfo, sessionOptions } = ctx.state
  const value = sessionInfo?.options?.[OPTION.model] ?? sessionOptions[OPTION.model]
  return typeof value === "string" ? value : sessionInfo?.model
}

/** Every option value checked against the agent's own choices: the first refusal, or undefined. */
export const checkOptions = (
  ctx: ChatContext,
  info: AgentInfo,
  values: Readonly<Record<string, string | boolean>>,
): string | undefined => {
  const model = typeof values[OPTION.model] === "string" ? (values[OPTION.model] as string) : undefined
  for (const [id, label] of [
    [OPTION.model, "model"],
    [OPTION.effort, "effort"],
    [OPTION.approval, "approval mode"],
  ] as const) {
    const value = values[id]
    if (typeof value !== "string") continue
    const resolved = resolveChoice(choices(ctx, info, id, model), value, label)
    if (!resolved.ok) return resolved.message
  }
  return undefined
}

/** Ask the agent about itself, check the chosen options, open a session (a new one by default). false when that failed. */
export const startChat = async (
  ctx: ChatContext,
  open: () => Promise<boolean> = () => newSession(ctx),
): Promise<boolean> => {
  const info = await loadInfo(ctx)
  if (!info) return false
  if (info.status !== "Ready") {
    ctx.say(
      ctx.paint(
        "yellow",
        `! ${info.name}: ${info.status}${info.statusMessage ? ` — ${info.statusMessage}` : ""}`,
      ),
      ctx.paint("dim", "  /login signs this account in; /account switches; --demo runs offline"),
    )
  }
  const refused = checkOptions(ctx, info, ctx.state.sessionOptions)
  if (refused) {
    ctx.say(
      `${ctx.paint("red", `✗ ${refused}`)}${ctx.paint("dim", ` — ${ctx.options.program ?? "cvg"} --help`)}`,
    )
    return false
  }
  applyRemembered(ctx, info)
  return open()
}

/** Last time's choices, where no flag overrides them and the agent still offers them. */
const applyRemembered = (ctx: ChatContext, info: AgentInfo): void => {
  const { sessionOptions } = ctx.state
  for (const [id, value] of Object.entries(ctx.options.remembered ?? {})) {
    if (sessionOptions[id] !== undefined) continue
    const model =
      typeof sessionOptions[OPTION.model] === "string" ? (sessionOptions[OPTION.model] as string) : undefined
    const resolved = resolveChoice(choices(ctx, info, id, model), value, id)
    if (resolved.ok) sessionOptions[id] = resolved.value
    else ctx.say(ctx.paint("dim", `  your last ${id} ${value} is not offered now; the default runs`))
  }
}

/** The chat now shows `sessionId`: a fresh renderer, no open runs or pending answers. */
const switchTo = (ctx: ChatContext, sessionId: string, fresh: boolean): void => {
  ctx.state.sessionId = sessionId
  ctx.state.renderer = ctx.newRenderer(fresh)
  ctx.runs.reset()
  ctx.pending.clear()
  ctx.updatePrompt()
}

/** Open a session with `run`; its events heard before the answer are replayed after it. */
export const openSession = async (
  ctx: ChatContext,
  label: string,
  hint: string,
  run: () => Promise<{ session_id: string; info: SessionInfoPayload }>,
  fresh = false,
): Promise<boolean> => {
  ctx.state.held = []
  const opened = await ctx.attempt(label, hint, run)
  const held = ctx.state.held
  ctx.state.held = undefined
  if (!opened) return false
  switchTo(ctx, opened.session_id, fresh)
  ctx.state.sessionInfo = opened.info
  for (const e of held) if (e.session_id === opened.session_id) ctx.onEvent(e)
  ctx.updateStatus()
  return true
}

export const newSession = async (
  ctx: ChatContext,
  options: Readonly<Record<string, string | boolean>> = ctx.state.sessionOptions,
): Promise<boolean> => {
  const ok = await openSession(
    ctx,
    "Starting Claude Code…",
    "check `claude --version`, or start with --demo",
    () =>
      ctx.call("createSession", {
        cwd: ctx.state.cwd,
        ...(Object.keys(options).length > 0 && { options }),
      }),
    true,
  )
  if (ok) ctx.state.userItems = []
  return ok
}

/** End a session this chat left; its failure changes nothing. */
export const closeQuietly = (ctx: ChatContext, agentId: string, sessionId: string | undefined): void => {
  if (sessionId) void ctx.state.host?.call(agentId, "closeSession", { sessionId })?.catch(() => {})
}

export const fetchList = async (ctx: ChatContext): Promise<ReadonlyArray<SessionSummary> | undefined> => {
  const page = await ctx.attempt("Reading sessions…", "is the workspace readable?", () =>
    ctx.call("listSessions", { cwd: ctx.state.cwd, limit: 20 }),
  )
  if (page) ctx.state.lastList = page.sessions
  return page?.sessions
}

/** A session named by its number in the last /sessions list or (a start of) its id. */
export const resolveSession = async (
  ctx: ChatContext,
  ref: string | undefined,
): Promise<string | undefined> => {
  const warn = (text: string) => ctx.say(ctx.paint("yellow", text))
  if (!ref) {
    warn("name a session: /sessions lists them, then /open <n> or /open <id>")
    return undefined
  }
  const list = ctx.state.lastList ?? (await fetchList(ctx))
  if (!list) return undefined
  if (/^\d+$/.test(ref)) {
    const found = list[Number(ref) - 1]?.session_id
    if (!found)
      warn(
        list.length === 0
          ? "this workspace has no stored sessions"
          : `there is no session ${ref}: /sessions lists ${list.length} (1 to ${list.length})`,
      )
    return found
  }
  const matches = list.filter((s) => s.session_id.startsWith(ref))
  if (matches.length === 1) return matches[0]!.session_id
  if (matches.length > 1) {
    warn(`${ref} starts ${matches.length} session ids; type more of it`)
    return undefined
  }
  // A whole id may name a session the short list left out.
  if (UUID.test(ref)) return ref
  warn(`no stored session ${ref} in ${shortPath(ctx.state.cwd)}: /sessions lists them`)
  return undefined
}

export const readStored = async (
  ctx: ChatContext,
  ref: string | undefined,
): Promise<{ id: string; items: ReadonlyArray<TranscriptItem>; title?: string } | undefined> => {
  const sessionId = await resolveSession(ctx, ref)
  if (!sessionId) return undefined
  const transcript = await ctx.attempt("Reading the session…", "check the id with /sessions", () =>
    ctx.call("readSession", { sessionId, cwd: ctx.state.cwd }),
  )
  // The list's title (the first prompt) when the transcript has no title of its own.
  const listed = ctx.state.lastList?.find((s) => s.session_id === sessionId)?.title
  const title = transcript?.title ?? listed
  return transcript && { id: sessionId, items: transcript.items, ...(title !== undefined && { title }) }
}

/** Continue `sessionId` in a new process (after a restart or a reload). */
export const resumeSession = (
  ctx: ChatContext,
  sessionId: string,
  label = "Resuming…",
  hint = "/new starts a session",
  options?: Readonly<Record<string, string | boolean>>,
) =>
  openSession(ctx, label, hint, () =>
    ctx.call("resumeSession", { sessionId, cwd: ctx.state.cwd, ...(options && { options }) }),
  )
