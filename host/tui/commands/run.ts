/**
 * Commands about the run and what it showed: skills, images for the next
 * prompt, /expand of what was cut short, the task tree and stopping a task,
 * the rate limits, cancelling the run and leaving.
 */
import type { ChatContext } from "../context.ts"
import { readImage } from "../images.ts"
import { loadInfo } from "../sessions.ts"
import { shortPath } from "../status.ts"
import { compactNumber, resetTime } from "../text.ts"
import { type Command, note, warn } from "./command.ts"

const showSkills = async (ctx: ChatContext): Promise<void> => {
  const skills = ctx.state.skills ?? (ctx.state.info ?? (await loadInfo(ctx)))?.skills ?? []
  if (skills.length === 0) return note(ctx, "no skills")
  const { paint } = ctx
  ctx.say(
    ...skills.map(
      (s) =>
        `  ${paint("bold", `/${s.name}`)} ${paint("dim", `${s.source}${s.manual_only ? " · manual only" : ""}${s.hidden_from_picker ? " · model only" : ""}`)}${s.description ? ` ${s.description}` : ""}`,
    ),
    paint("dim", "  /<name> [arguments] runs one: the line goes to the agent as typed"),
  )
}

/** An image file for the next prompt (also a path dropped on the prompt). */
export const attach = (ctx: ChatContext, path: string): void => {
  try {
    const { image, path: full, bytes } = readImage(path, ctx.state.cwd)
    ctx.state.attachments.push({ image, path: full })
    ctx.updateStatus()
    const info = ctx.state.info
    ctx.say(
      ctx.paint(
        "green",
        `📎 ${shortPath(full)} (${compactNumber(bytes)}B) goes with your next prompt${info && !info.capabilities.images ? " — but this agent takes no images" : ""}`,
      ),
    )
  } catch (error) {
    ctx.fail(error, "/image <path> takes a PNG, JPEG, GIF or WebP file")
  }
}

const expand = (ctx: ChatContext, arg: string | undefined) => {
  const renderer = ctx.state.renderer
  const count = renderer.folds()
  const n = arg === undefined ? count : Number(arg)
  const text = Number.isInteger(n) ? renderer.expand(n) : undefined
  if (text === undefined)
    return note(ctx, count === 0 ? "nothing was cut short in this session" : `/expand takes 1 to ${count}`)
  ctx.say(
    ctx.paint("dim", `── /expand ${n}`),
    ...text.replace(/\n$/, "").split("\n"),
    ctx.paint("dim", `── end of ${n}`),
  )
}

const stopTask = async (ctx: ChatContext, ref: string | undefined): Promise<void> => {
  const tasks = ctx.state.renderer.tasks()
  const task = ref && /^\d+$/.test(ref) ? tasks[Number(ref) - 1] : tasks.find((t) => t.id === ref)
  if (!task) {
    if (tasks.length === 0) return note(ctx, "no tasks in this session")
    return ctx.say(
      ...tasks.map(
        (t, i) =>
          `  ${ctx.paint("bold", `${i + 1}.`)} ${t.title} ${ctx.paint("dim", `· ${t.status} · ${t.id}`)}`,
      ),
      ctx.paint("dim", "  /stop <n> stops one"),
    )
  }
  const sessionId = ctx.state.sessionId!
  await ctx.attempt(undefined, "it may have finished already", () =>
    ctx.call("cancelTask", { sessionId, taskId: task.id }),
  )
}

const usage = async (ctx: ChatContext): Promise<void> => {
  const limits = await ctx.attempt("Asking for usage…", "usage needs a signed-in account", () =>
    ctx.call("getUsage"),
  )
  if (!limits) return
  const cost = ctx.state.renderer.sessionCost()
  if (cost !== undefined) ctx.say(`  this session: $${cost.toFixed(4)} so far (as Claude Code counts it)`)
  if (limits.windows.length === 0)
    return note(ctx, "no rate limits reported for this account (an API key reports none)")
  ctx.say(
    ...limits.windows.map(
      (w) =>
        `  ${w.label.padEnd(12)} ${String(Math.round(w.used * 100)).padStart(3)}%${w.resets_at ? ctx.paint("dim", ` · resets ${resetTime(w.resets_at, new Date())}`) : ""}`,
    ),
  )
}

const cancel = async (ctx: ChatContext): Promise<void> => {
  if (!ctx.runs.running) return note(ctx, "no run to cancel")
  const sessionId = ctx.state.sessionId!
  await ctx.attempt(undefined, "Ctrl-C twice quits", () => ctx.call("cancel", { sessionId }))
}

export const runCommands: ReadonlyArray<Command> = [
  {
    name: "skills",
    usage: [["/skills", "list the skills and slash commands; /<name> [args] runs one"]],
    run: showSkills,
  },
  {
    name: "image",
    usage: [["/image <path>", "attach an image to the next prompt (or drop the file on the prompt)"]],
    complete: () => "path",
    needsAgent: false,
    run: (ctx, arg) => (arg ? attach(ctx, arg) : warn(ctx, "/image <path> attaches a file")),
  },
  {
    name: "expand",
    usage: [["/expand <n>", "show all of a cut-short output, diff, file or thinking"]],
    complete: (ctx) => Array.from({ length: ctx.state.renderer.folds() }, (_, i) => String(i + 1)),
    needsAgent: false,
    run: expand,
  },
]

export const taskCommands: ReadonlyArray<Command> = [
  {
    name: "tasks",
    usage: [["/tasks", "show the task tree; /stop <n|id> stops a task"]],
    run: (ctx) =>
      ctx.say(ctx.state.renderer.taskTree().trimEnd() || ctx.paint("dim", "no tasks in this session")),
  },
  { name: "stop", usage: [], run: stopTask },
  { name: "usage", usage: [["/usage", "the session's cost so far and the rate limits"]], run: usage },
]

export const endCommands: ReadonlyArray<Command> = [
  { name: "cancel", usage: [["/cancel", "cancel the run (or Ctrl-C)"]], run: cancel },
  {
    name: "quit",
    aliases: ["exit", "q"],
    usage: [["/quit", "leave (or Ctrl-C twice)"]],
    needsAgent: false,
    run: (ctx) => ctx.quit(0),
  },
]
