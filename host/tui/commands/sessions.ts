/**
 * Commands over the chat's sessions: list the stored ones, show or continue
 * one, start a new one, fork this one, rewind it to before a prompt, and
 * move the agent to another folder (a new session there).
 */
import { statSync } from "node:fs"
import { resolve as resolvePath } from "node:path"
import type { ChatContext } from "../context.ts"
import { closeQuietly, fetchList, newSession, openSession, readStored, resumeSession } from "../sessions.ts"
import { compactNumber } from "../text.ts"
import { type Command, done, note, warn } from "./command.ts"

const listNumbers = (ctx: ChatContext) => (ctx.state.lastList ?? []).map((_, i) => String(i + 1))

const listSessions = async (ctx: ChatContext): Promise<void> => {
  const sessions = await fetchList(ctx)
  if (!sessions) return
  if (sessions.length === 0) return note(ctx, "no stored sessions for this workspace")
  const { paint } = ctx
  ctx.say(
    ...sessions.map((s, i) => {
      const mark = s.session_id === ctx.state.sessionId ? paint("cyan", " (this one)") : ""
      const when = new Date(s.modified_at).toLocaleString("en-GB", { dateStyle: "short", timeStyle: "short" })
      return `  ${paint("bold", `${i + 1}.`)} ${s.title}${mark} ${paint("dim", `· ${when} · ${compactNumber(s.size_bytes)}B · ${s.session_id}`)}`
    }),
    paint("dim", "  /open <n> shows one, /resume <n> continues it"),
  )
}

const openStored = async (ctx: ChatContext, ref: string | undefined): Promise<void> => {
  const stored = await readStored(ctx, ref)
  if (!stored) return
  ctx.say(ctx.paint("bold", `── ${stored.title ?? "Untitled"} · ${stored.id}`))
  ctx.screen.write(ctx.newRenderer().transcript(stored.items))
  note(ctx, `── end of session · /resume ${stored.id} continues it`)
}

/** Continue a stored session (its transcript shown first); false when it could not be. */
export const resumeStored = async (ctx: ChatContext, ref: string | undefined): Promise<boolean> => {
  const stored = await readStored(ctx, ref)
  if (!stored) return false
  if (!(await resumeSession(ctx, stored.id, "Resuming…", "check the id with /sessions"))) return false
  ctx.say(ctx.paint("bold", `── ${stored.title ?? "Untitled"} · ${stored.id}`))
  ctx.screen.write(ctx.state.renderer.transcript(stored.items))
  ctx.state.userItems = stored.items.flatMap((i) => (i.type === "user" ? [{ id: i.id, text: i.text }] : []))
  note(ctx, "── resumed: type to continue")
  return true
}

const fork = async (ctx: ChatContext): Promise<void> => {
  const origin = ctx.state.sessionId
  if (!origin) return warn(ctx, "no session to fork")
  const items = ctx.state.userItems
  const ok = await openSession(ctx, "Forking…", "a session forks once it has a prompt", () =>
    ctx.call("forkSession", { sessionId: origin, cwd: ctx.state.cwd }),
  )
  if (!ok) return
  // The fork's agent knows only prompts sent in it: rewinding starts from there.
  ctx.state.userItems = []
  done(ctx, `⑂ Forked ${origin} (${items.length} prompts) into ${ctx.state.sessionId}; you are in the fork`)
}

const rewind = async (ctx: ChatContext, arg: string | undefined): Promise<void> => {
  const items = ctx.state.userItems
  if (items.length === 0) return note(ctx, "no prompts to rewind to")
  if (arg === undefined)
    return ctx.say(
      ...items.map((u, i) => `  ${ctx.paint("bold", `${i + 1}.`)} ${u.text.split("\n")[0]}`),
      ctx.paint("dim", "  /rewind <n> rewinds to just before prompt n"),
    )
  const n = Number(arg)
  const target = Number.isInteger(n) ? items[n - 1] : undefined
  if (!target) return warn(ctx, `pick a prompt from 1 to ${items.length}`)
  if (ctx.runs.running) return warn(ctx, "cancel the run first (Ctrl-C)")
  const sessionId = ctx.state.sessionId!
  const rewound = await ctx.attempt("Rewinding…", "only prompts of this conversation can be rewound to", () =>
    ctx.call("rollback", { sessionId, itemId: target.id }).then(() => true),
  )
  if (!rewound) return
  ctx.state.userItems = items.slice(0, n - 1)
  done(ctx, `⟲ Rewound to just before “${target.text.split("\n")[0]}”`)
}

const changeFolder = async (ctx: ChatContext, arg: string | undefined): Promise<void> => {
  const { state } = ctx
  if (!arg) return note(ctx, `the agent works in ${state.cwd}; /cd <dir> changes it`)
  const target = resolvePath(state.cwd, arg.replace(/^~(?=$|\/)/, process.env.HOME ?? "~"))
  let isDir = false
  try {
    isDir = statSync(target).isDirectory()
  } catch {}
  if (!isDir) return warn(ctx, `${target} is not a folder`)
  if (ctx.runs.running) return warn(ctx, "cancel the run first (Ctrl-C)")
  const previous = { cwd: state.cwd, session: state.sessionId }
  state.cwd = target
  state.lastList = undefined
  if (!(await newSession(ctx))) {
    state.cwd = previous.cwd
    return
  }
  closeQuietly(ctx, state.agentId, previous.session)
  ctx.updateStatus()
  done(ctx, `the agent now works in ${target} (a new session)`)
}

export const sessionCommands: ReadonlyArray<Command> = [
  {
    name: "sessions",
    usage: [["/sessions", "list the stored sessions of this workspace"]],
    run: listSessions,
  },
  {
    name: "open",
    usage: [["/open <n|id>", "show a stored session"]],
    complete: listNumbers,
    run: openStored,
  },
  {
    name: "resume",
    usage: [["/resume <n|id>", "continue a stored session"]],
    complete: listNumbers,
    run: async (ctx, ref) => void (await resumeStored(ctx, ref)),
  },
  {
    name: "new",
    usage: [["/new", "start a new session"]],
    run: async (ctx) => {
      await newSession(ctx)
      if (ctx.state.sessionId) note(ctx, `new session ${ctx.state.sessionId}`)
    },
  },
  { name: "fork", usage: [["/fork", "fork this session into a new one"]], run: fork },
  {
    name: "rewind",
    usage: [["/rewind [n]", "list your prompts, or rewind to just before prompt n"]],
    run: rewind,
  },
]

export const folderCommand: Command = {
  name: "cd",
  usage: [["/cd <dir>", "work in another folder (a new session there)"]],
  complete: () => "path",
  run: changeFolder,
}
