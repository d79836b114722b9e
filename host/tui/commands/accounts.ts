/**
 * Commands over accounts: list them with their status, switch to one, store
 * a new one (the plugin is reloaded to register it, and the conversation
 * goes on), sign in and out, and update Claude Code where its installer
 * lets the plugin.
 */
import type { AccountEntry } from "../accounts.ts"
import { type ChatContext, hostOf, oneLine } from "../context.ts"
import { closeQuietly, loadInfo, newSession, resumeSession, startChat } from "../sessions.ts"
import { type Command, done, warn } from "./command.ts"

// accounts.ts (effect, the plugin's own account rule) loads when a command needs it, not with the input line.
const accounts = () => import("../accounts.ts")

/** How an account signs in, as /account lists it. */
const howOf = (id: string, entry: AccountEntry | undefined, maskKey: (key: string) => string): string => {
  if (entry?.configDir) return `config ${entry.configDir}`
  const env = entry?.env
  if (env?.ANTHROPIC_BASE_URL || env?.ANTHROPIC_API_KEY)
    return [env.ANTHROPIC_API_KEY && `key ${maskKey(env.ANTHROPIC_API_KEY)}`, env.ANTHROPIC_BASE_URL]
      .filter(Boolean)
      .join(" · ")
  return id === "claude" ? "the login default" : ""
}

const listAccounts = async (ctx: ChatContext, ids: ReadonlyArray<string>): Promise<void> => {
  const host = hostOf(ctx)
  const { ACCOUNT_ADD_USAGE, maskKey, storedAccounts } = await accounts()
  const stored = await storedAccounts(host.storage).catch(() => [])
  ctx.screen.spin("Asking each account…")
  const infos = await Promise.allSettled(ids.map((id) => host.call(id, "initialize")))
  ctx.screen.spin(undefined)
  const { paint } = ctx
  ctx.say(
    ...ids.map((id, i) => {
      const result = infos[i]
      const info = result?.status === "fulfilled" ? result.value : undefined
      const entry = stored.find((a) => `claude:${a.id}` === id)
      const how = howOf(id, entry, maskKey)
      const status = info
        ? `${info.status}${info.description ? ` · ${info.description}` : ""}`
        : `unavailable: ${oneLine(result?.status === "rejected" ? result.reason : "")}`
      return `  ${id === ctx.state.agentId ? paint("cyan", "●") : " "} ${paint("bold", id)} ${info?.name ?? entry?.name ?? ""} ${paint("dim", `· ${status}${how ? ` · ${how}` : ""}`)}`
    }),
    paint("dim", `  /account <id> switches (a new session) · ${ACCOUNT_ADD_USAGE}`),
    paint("dim", `  stored in ${host.storage.file} (key "instances")`),
  )
}

const switchAccount = async (ctx: ChatContext, arg: string | undefined): Promise<void> => {
  const { state } = ctx
  const ids = [...hostOf(ctx).agents.keys()]
  if (!arg) return listAccounts(ctx, ids)
  const target = ids.find((id) => id === arg || id === `claude:${arg}`)
  if (!target) return warn(ctx, `no account ${arg}; have: ${ids.join(", ")}`)
  const previous = { agentId: state.agentId, sessionId: state.sessionId, info: state.info }
  state.agentId = target
  state.info = undefined
  state.skills = undefined
  if (!(await startChat(ctx))) {
    state.agentId = previous.agentId
    state.sessionId = previous.sessionId
    state.info = previous.info
    ctx.updateStatus()
    return
  }
  closeQuietly(ctx, previous.agentId, previous.sessionId)
  done(ctx, `switched to ${target}`)
}

const addStoredAccount = async (ctx: ChatContext, words: ReadonlyArray<string>): Promise<void> => {
  const { state } = ctx
  const [{ addAccount, parseAccountAdd }, { Result }] = await Promise.all([accounts(), import("effect")])
  const parsed = parseAccountAdd(words)
  if (Result.isFailure(parsed)) return warn(ctx, parsed.failure)
  const entry = parsed.success
  const added = await ctx.attempt(undefined, "/account lists what is stored", () =>
    addAccount(hostOf(ctx).storage, entry).then(() => true),
  )
  if (!added) return
  const agentId = `claude:${entry.id}`
  const reload = ctx.options.reload
  if (!reload) return done(ctx, `stored ${agentId}; it registers at the next start`)
  const reloaded = await ctx.attempt("Reloading the plugin…", "restart npm start to load it", async () => {
    const session = state.sessionId
    await ctx.reloadHost(reload)
    state.info = undefined
    const host = hostOf(ctx)
    if (!host.agents.has(agentId))
      await host.events.waitFor((e) => e.kind === "agent_provided" && e.agentId === agentId, 10_000)
    return session
  })
  if (reloaded === undefined && state.sessionId === undefined) return
  done(ctx, `added ${agentId}; /account ${entry.id} switches to it`)
  // The reload ended this chat's process; continue the same conversation.
  const session = state.sessionId
  if (session && state.userItems.length > 0) await resumeSession(ctx, session)
  else await newSession(ctx)
}

const login = async (ctx: ChatContext): Promise<void> => {
  const started = await ctx.attempt("Starting the sign-in…", "the CLI's `auth login` did not start", () =>
    ctx.call("signIn"),
  )
  if (!started) return
  ctx.say(
    ctx.paint("green", started.message),
    ...(started.url ? [`  open ${ctx.paint("bold", started.url)}`] : []),
  )
  ctx.state.info = undefined
}

const logout = async (ctx: ChatContext): Promise<void> => {
  const signedOut = await ctx.attempt("Signing out…", "/account shows the accounts", () =>
    ctx.call("signOut").then(() => true),
  )
  if (signedOut) done(ctx, `${ctx.state.agentId} signed out; /login signs in again`)
  ctx.state.info = undefined
}

const update = async (ctx: ChatContext): Promise<void> => {
  const info = ctx.state.info ?? (await loadInfo(ctx))
  if (info?.maintenance && !info.maintenance.can_update)
    return warn(
      ctx,
      `Claude Code ${info.maintenance.version ?? ""} at ${info.maintenance.path ?? "?"} is not updated from here: its installer is not one this plugin may run`,
    )
  const updated = await ctx.attempt(
    "Updating Claude Code…",
    "/update again, or update it the way it was installed",
    () => ctx.call("update"),
  )
  if (updated) done(ctx, updated.message)
}

export const accountCommands: ReadonlyArray<Command> = [
  {
    name: "account",
    usage: [
      ["/account [id]", "list the accounts with their status, or switch to one"],
      ["/account add …", "store an account: <id> --config-dir <dir> | --api-key <key> [--base-url <url>]"],
    ],
    complete: (ctx) => [
      "add",
      ...[...(ctx.state.host?.agents.keys() ?? [])].map((id) => id.replace(/^claude:/, "")),
    ],
    run: (ctx, arg, words) =>
      words[0] === "add" ? addStoredAccount(ctx, words.slice(1)) : switchAccount(ctx, arg),
  },
  {
    name: "login",
    usage: [["/login, /logout", "sign this account in (prints the sign-in page) or out"]],
    run: login,
  },
  { name: "logout", usage: [], run: logout },
  { name: "update", usage: [["/update", "update Claude Code, when its installer allows"]], run: update },
]
