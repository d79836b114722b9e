/**
 * The chat: one agent session driven from the terminal. Typed lines become
 * prompts (steering a run in progress), answers to approvals and questions
 * (pending.ts), front-end commands (the table in commands/), or (any other
 * line starting with `/`) skills and slash commands for the agent. Events of
 * the session are rendered as they come (render.ts) above the status and
 * input lines (screen.ts). Ctrl-C cancels the run; twice quits.
 *
 * Rules it keeps: an approval or question is answered before any queued
 * command; a line read from a pipe waits for the run before it (a script is
 * one line after another) and the end of input waits for every queued line
 * and open run; every open run is tracked by id (runs.ts), so a run the
 * agent opens by itself ends on screen like any other and gives the prompt
 * back.
 */
import { randomUUID } from "node:crypto"
import { styleText } from "node:util"
import { type AutoContinue, makeAutoContinue } from "../core/auto-continue.ts"
import type { Host } from "../core/host.ts"
import type { AgentEvent } from "../../sdk/protocol.ts"
import { runSlashLine } from "./commands/index.ts"
import { attach } from "./commands/run.ts"
import { resumeStored } from "./commands/sessions.ts"
import {
  type AgentCall,
  type ChatContext,
  type ChatOptions,
  type ChatState,
  type Format,
  initialState,
  NO_AGENT,
  oneLine,
} from "./context.ts"
import { droppedImage } from "./images.ts"
import { type InputLine, openInputLine } from "./input-line.ts"
import { PendingAnswers } from "./pending.ts"
import { MessageQueue } from "./queue.ts"
import { makeRenderer, type Renderer } from "./render.ts"
import { exitCodeFor, RunTracker } from "./runs.ts"
import { Screen } from "./screen.ts"
import { newSession, startChat } from "./sessions.ts"
import { statusOf } from "./status.ts"
import { Steers } from "./steering.ts"

export type { ChatOptions } from "./context.ts"
export { exitCodeFor } from "./runs.ts"

const SECOND_CTRL_C_MS = 3000
const IDLE_SPINNER_MS = 600

export class Chat implements ChatContext {
  readonly state: ChatState
  readonly screen: Screen
  readonly runs = new RunTracker()
  readonly pending: PendingAnswers
  private readonly steers = new Steers()
  private input: InputLine | undefined
  /** Resolved once the host is up (or known to be missing): typed lines wait for it. */
  private ready: Promise<boolean> = Promise.resolve(true)
  private booted = true
  private mode: "interactive" | "once" = "interactive"
  private lastCtrlC = 0
  private idleTimer: NodeJS.Timeout | undefined
  private readonly queue = new MessageQueue({
    ready: () => this.ready,
    asked: () => this.pending.waiting,
    answer: (line) => this.answer(line),
    // Lines from a pipe run one after another: each waits for the run before it.
    mustWait: () => !this.screen.interactive && this.options.input.isTTY !== true && this.runs.running,
    handle: (message) => this.take(message),
  })
  private quitWith: ((code: number) => void) | undefined
  private unsubscribe: () => void = () => {}
  private readonly auto: AutoContinue

  constructor(readonly options: ChatOptions) {
    const terminal =
      options.output.isTTY === true && options.input.isTTY === true && process.env.TERM !== "dumb"
    this.screen = new Screen({ output: options.output, interactive: terminal, color: options.color })
    this.state = initialState(options, this.newRenderer())
    this.pending = new PendingAnswers(this)
    this.auto = makeAutoContinue({
      mode: options.autoContinue ?? "off",
      send: (sessionId, text) => (sessionId === this.state.sessionId ? this.send(text) : undefined),
      notify: (sessionId, text) =>
        sessionId === this.state.sessionId ? this.say(this.paint("dim", `  ⏱ ${text}`)) : undefined,
    })
    if (options.host) this.connect(options.host, this.state.agentId, options.cwd)
  }

  /** Talk to `agentId` of `host`, in `cwd` (the host started after the input line was up). */
  connect(host: Host, agentId: string, cwd: string): void {
    this.unsubscribe()
    Object.assign(this.state, { host, agentId, cwd })
    this.unsubscribe = this.subscribe()
    this.updateStatus()
  }

  private subscribe(): () => void {
    const host = this.state.host
    if (!host) return () => {}
    return host.events.subscribe((h) => {
      if (h.kind === "agent_event" && h.agentId === this.state.agentId) this.onEvent(h.event)
      if (h.kind === "info_changed" && h.agentId === this.state.agentId) {
        // Asked again when needed; the status line keeps what it knew meanwhile.
        if (this.state.info) this.state.knownInfo = this.state.info
        this.state.info = undefined
      }
    })
  }

  readonly reloadHost = async (reload: () => Promise<Host | undefined>): Promise<void> => {
    this.unsubscribe()
    this.state.host = await reload()
    this.unsubscribe = this.subscribe()
  }

  readonly paint = (format: Format, text: string): string =>
    this.options.color && text !== "" ? styleText(format, text, { validateStream: false }) : text

  readonly newRenderer = (fresh = false): Renderer =>
    makeRenderer({
      color: this.options.color,
      width: () => this.options.output.columns ?? 100,
      oneShot: this.mode === "once",
      ...(fresh && { costBefore: 0 }),
    })

  readonly call: AgentCall = (method, ...params) => {
    if (!this.state.host) return Promise.reject(new Error(NO_AGENT))
    return (
      this.state.host.call as (
        agentId: string,
        m: typeof method,
        ...p: typeof params
      ) => ReturnType<AgentCall>
    )(this.state.agentId, method, ...params)
  }

  /** Lines the front end writes (banner, command output). */
  readonly say = (...lines: ReadonlyArray<string>): void => {
    this.screen.write(this.state.renderer.flush())
    this.screen.lines(...lines)
  }

  readonly fail = (error: unknown, hint: string): void => {
    this.say(`${this.paint("red", `✗ ${oneLine(error)}`)}${this.paint("dim", ` — ${hint}`)}`)
  }

  readonly attempt = async <A>(
    label: string | undefined,
    hint: string,
    run: () => Promise<A>,
  ): Promise<A | undefined> => {
    if (label) this.screen.spin(label)
    try {
      return await run()
    } catch (error) {
      this.screen.spin(undefined)
      this.fail(error, hint)
      return undefined
    } finally {
      if (label) this.screen.spin(undefined)
    }
  }

  readonly quit = (code: number): void => this.quitWith?.(code)

  /** Ask the agent about itself, check the chosen options, open a new session. false when that failed. */
  start(): Promise<boolean> {
    const resume = this.options.resume
    return startChat(this, resume ? () => resumeStored(this, resume) : undefined)
  }

  // -- events --------------------------------------------------------------------

  readonly onEvent = (e: AgentEvent): void => {
    if (e.session_id !== this.state.sessionId) {
      this.state.held?.push(e)
      return
    }
    this.screen.spin(undefined)
    this.auto.onEvent(e)
    switch (e.type) {
      case "RunStarted":
        // No prompt of ours opened it: the agent went on by itself (a steer left for it, a background task's end).
        if (!this.runs.started(e.run_id) && this.mode === "interactive")
          this.say(this.paint("dim", this.steers.selfStarted()))
        break
      case "RunEnded":
        this.runs.ended(e)
        if (!this.runs.running) this.pending.clear()
        break
      case "Skills":
        this.state.skills = e.skills
        break
      case "SessionInfo":
        this.state.sessionInfo = { ...this.state.sessionInfo, ...e.info }
        break
      case "Notice":
        // The plugin learns at a launch that the CLI refuses full access here (agent.ts): it says so once.
        if (/^Full access is unavailable/.test(e.text)) this.state.fullRefused = e.text
        break
      case "approval_resolved":
        this.pending.resolved(e.approval_id)
        break
      case "question_resolved":
        this.pending.resolved(e.question_id)
        break
    }
    this.screen.write(this.state.renderer.event(e))
    for (const line of this.steers.onEvent(e)) this.say(this.paint("dim", `  ${line}`))
    if (e.type === "ApprovalRequested") this.pending.onApproval(e)
    if (e.type === "QuestionAsked") this.pending.onQuestion(e)
    this.updatePrompt()
    this.updateStatus()
    this.armIdleSpinner()
    this.queue.wake()
  }

  /** While a run is open and nothing arrives for a moment, show that it is still working. */
  private armIdleSpinner(): void {
    clearTimeout(this.idleTimer)
    if (!this.runs.running || this.pending.waiting) return
    this.idleTimer = setTimeout(() => {
      if (this.runs.running && !this.pending.waiting) this.screen.spin("Working…  (Ctrl-C cancels)")
    }, IDLE_SPINNER_MS)
    this.idleTimer.unref()
  }

  private promptText(): string | undefined {
    const asked = this.pending.prompt()
    if (asked !== undefined) return asked
    if (this.input?.continuing()) return `${this.paint("dim", "…")} `
    if (this.mode === "once" && !this.runs.running) return undefined
    if (this.runs.running) return `${this.paint("dim", "running · type to steer")} › `
    return `${this.paint(["cyan", "bold"], "›")} `
  }

  readonly updatePrompt = (): void => this.screen.setPrompt(this.promptText())

  readonly updateStatus = (): void => this.screen.setStatus(statusOf(this.state, this.runs.lastUsage))

  // -- input ---------------------------------------------------------------------

  private answer(line: string): void {
    this.echo(line, this.promptText())
    this.pending.answer(line)
    this.updatePrompt()
  }

  /** A typed message's turn: echoed as the scrollback keeps it, then handled. */
  private async take(message: string): Promise<void> {
    this.echo(message)
    await this.handle(message.trim() === "" ? "" : message.replace(/^\s+|\s+$/g, ""))
    this.updatePrompt()
  }

  /** The line as the scrollback keeps it: after the prompt it answered. */
  private echo(message: string, prompt = `${this.paint(["cyan", "bold"], "›")} `): void {
    if (message.trim() === "") return
    const [first = "", ...rest] = message.split("\n")
    this.say(`${prompt}${first}`, ...rest.map((l) => `  ${l}`))
  }

  /** Ctrl-C: cancel the open run; a second press within 3 s quits; before the start is done, quits. */
  interrupt(): void {
    if (!this.booted) {
      this.quit(130)
      return
    }
    const now = Date.now()
    const twice = now - this.lastCtrlC < SECOND_CTRL_C_MS
    this.lastCtrlC = now
    if (twice) {
      this.quit(this.mode === "once" ? 130 : 0)
      return
    }
    if (this.runs.running) {
      this.say(this.paint("yellow", "⊘ Cancelling the run… (Ctrl-C again to quit)"))
      const sessionId = this.state.sessionId!
      void this.attempt(undefined, "Ctrl-C again to quit", () => this.call("cancel", { sessionId }))
      return
    }
    if (this.mode === "once") {
      this.quit(130)
      return
    }
    this.input?.rl.write(null, { ctrl: true, name: "u" })
    this.say(this.paint("dim", "(Ctrl-C again, or /quit, to leave)"))
  }

  readonly send = async (text: string, note?: string): Promise<void> => {
    const { state } = this
    if (!state.host) return this.say(this.paint("yellow", NO_AGENT))
    if (!state.sessionId && !(await newSession(this))) return
    const sessionId = state.sessionId!
    this.auto.sent(sessionId)
    const itemId = randomUUID()
    const images = state.attachments
    if (images.length > 0 && state.info && !state.info.capabilities.images) {
      this.say(this.paint("yellow", "this agent takes no images; the attachments stay for another account"))
      return
    }
    // Said before the call: the run's own lines may arrive before the call's answer does.
    if (note) this.say(this.paint("dim", `  ↳ ${note}`))
    const deliveryId = randomUUID()
    if (this.runs.running) this.steers.sent(deliveryId, text)
    else this.screen.spin("Waiting for the model…")
    this.runs.sending++
    const accepted = await this.attempt(undefined, "try again, or /new for a fresh session", () =>
      this.call("prompt", {
        sessionId,
        text,
        itemId,
        deliveryId,
        ...(images.length > 0 && { images: images.map((a) => a.image) }),
      }),
    ).finally(() => {
      this.runs.sending--
    })
    if (!accepted) return
    state.attachments = []
    state.userItems.push({ id: itemId, text })
    const steered = this.steers.accepted(deliveryId, accepted)
    if (steered) this.say(this.paint("dim", `  ${steered}`))
    this.runs.accepted(accepted.run_id)
    this.updateStatus()
  }

  private async handle(line: string): Promise<void> {
    if (line === "") return
    if (line.startsWith("/")) return runSlashLine(this, line)
    const image = droppedImage(line, this.state.cwd)
    if (image) return attach(this, image)
    return this.send(line)
  }

  // -- the two ways to run -------------------------------------------------------

  /**
   * Read input until `run` resolves the exit code (Ctrl-C outside the terminal's
   * raw mode too). The input line is up at once; typed lines wait for `ready`
   * (false: the start failed and said why, the chat ends with 1).
   */
  private async serve(
    mode: "interactive" | "once",
    ready: Promise<boolean>,
    run: (resolve: (code: number) => void) => void,
  ) {
    this.mode = mode
    this.booted = false
    if (!this.state.host) this.screen.spin("Starting…")
    this.input = openInputLine(this, {
      message: (m) => this.queue.push(m),
      interrupt: () => this.interrupt(),
    })
    const rl = this.input.rl
    const onSignal = () => this.interrupt()
    process.on("SIGINT", onSignal)
    const code = await new Promise<number>((resolve) => {
      this.quitWith = resolve
      this.ready = ready.then(
        (ok) => {
          this.booted = true
          this.screen.spin(undefined)
          if (!ok) resolve(1)
          return ok
        },
        (error: unknown) => {
          this.fail(error, "run it again, or report it with the command you ran")
          resolve(1)
          return false
        },
      )
      this.updatePrompt()
      run(resolve)
      if (mode === "interactive")
        rl.on("close", () => {
          if (this.screen.interactive) return resolve(0)
          // A script's end: every line it sent, and the runs they started, first.
          void this.queue
            .settled()
            .then(() => resolve(this.runs.lastOutcome === undefined ? 0 : exitCodeFor(this.runs.lastOutcome)))
        })
    })
    process.off("SIGINT", onSignal)
    this.end()
    return code
  }

  /** The interactive chat, until /quit, Ctrl-C twice or the end of input. Resolves with the exit code. */
  interactive(ready: Promise<boolean> = Promise.resolve(true)): Promise<number> {
    return this.serve("interactive", ready, () => {})
  }

  /** Run one prompt to its end once `ready`; the exit code says how it ended. */
  once(text: string, ready: Promise<boolean> = Promise.resolve(true)): Promise<number> {
    return this.serve("once", ready, (resolve) => {
      void (async () => {
        if (!(await this.ready)) return
        if (!this.state.host) {
          this.say(this.paint("yellow", NO_AGENT))
          return resolve(1)
        }
        const sessionId = this.state.sessionId
        if (!sessionId) return resolve(1)
        this.say(`${this.paint(["cyan", "bold"], "›")} ${text}`)
        this.screen.spin("Waiting for the model…")
        const accepted = await this.attempt(
          undefined,
          "check the account with `claude auth status`, or use --demo",
          () => this.call("prompt", { sessionId, text, itemId: randomUUID() }),
        )
        if (!accepted) return resolve(1)
        this.runs.accepted(accepted.run_id)
        resolve(exitCodeFor((await this.runs.waitFor(accepted.run_id)).outcome))
      })()
    })
  }

  /** Stop reading and drawing (the chat is over, or its output went away). */
  end(): void {
    clearTimeout(this.idleTimer)
    this.screen.write(this.state.renderer.flush())
    this.screen.close()
    this.input?.rl.close()
    this.unsubscribe()
    this.auto.dispose()
  }
}
