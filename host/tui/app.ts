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
import { createInterface, type Interface } from "node:readline"
import { styleText } from "node:util"
import { type AutoContinue, makeAutoContinue } from "../core/auto-continue.ts"
import type { Host } from "../core/host.ts"
import type { AgentEvent } from "../../sdk/protocol.ts"
import { completeLine, runSlashLine } from "./commands/index.ts"
import { attach } from "./commands/run.ts"
import {
  type AgentCall,
  type ChatContext,
  type ChatOptions,
  type ChatState,
  type Format,
  oneLine,
} from "./context.ts"
import { droppedImage } from "./images.ts"
import { LineAssembler } from "./input.ts"
import { PendingAnswers } from "./pending.ts"
import { appendHistory, loadHistory } from "./prompt-history.ts"
import { makeRenderer, type Renderer } from "./render.ts"
import { exitCodeFor, RunTracker } from "./runs.ts"
import { Screen } from "./screen.ts"
import { newSession, startChat } from "./sessions.ts"
import { statusOf } from "./status.ts"

export type { ChatOptions } from "./context.ts"
export { exitCodeFor } from "./runs.ts"

const SECOND_CTRL_C_MS = 3000
const IDLE_SPINNER_MS = 600

export class Chat implements ChatContext {
  readonly state: ChatState
  readonly screen: Screen
  readonly runs = new RunTracker()
  readonly pending: PendingAnswers
  private rl: Interface | undefined
  private assembler: LineAssembler | undefined
  private mode: "interactive" | "once" = "interactive"
  private lastCtrlC = 0
  private idleTimer: NodeJS.Timeout | undefined
  /** Typed lines waiting for their turn. */
  private readonly queue: string[] = []
  private pumping = false
  /** Woken on every event: a piped line waits for the run before it. */
  private wake: (() => void) | undefined
  private quitWith: ((code: number) => void) | undefined
  private unsubscribe: () => void
  private readonly auto: AutoContinue

  constructor(readonly options: ChatOptions) {
    const terminal =
      options.output.isTTY === true && options.input.isTTY === true && process.env.TERM !== "dumb"
    this.screen = new Screen({ output: options.output, interactive: terminal, color: options.color })
    this.state = {
      host: options.host,
      agentId: options.agentId,
      cwd: options.cwd,
      info: undefined,
      knownInfo: undefined,
      sessionId: undefined,
      sessionInfo: undefined,
      sessionOptions: { ...options.sessionOptions },
      renderer: this.newRenderer(),
      held: undefined,
      userItems: [],
      lastList: undefined,
      skills: undefined,
      attachments: [],
    }
    this.pending = new PendingAnswers(this)
    this.auto = makeAutoContinue({
      mode: options.autoContinue ?? "off",
      send: (sessionId, text) => (sessionId === this.state.sessionId ? this.send(text) : undefined),
      notify: (sessionId, text) =>
        sessionId === this.state.sessionId ? this.say(this.paint("dim", `  ⏱ ${text}`)) : undefined,
    })
    this.unsubscribe = this.subscribe()
  }

  private subscribe(): () => void {
    return this.state.host.events.subscribe((h) => {
      if (h.kind === "agent_event" && h.agentId === this.state.agentId) this.onEvent(h.event)
      if (h.kind === "info_changed" && h.agentId === this.state.agentId) {
        // Asked again when needed; the status line keeps what it knew meanwhile.
        if (this.state.info) this.state.knownInfo = this.state.info
        this.state.info = undefined
      }
    })
  }

  readonly reloadHost = async (reload: () => Promise<Host>): Promise<void> => {
    this.unsubscribe()
    this.state.host = await reload()
    this.unsubscribe = this.subscribe()
  }

  readonly paint = (format: Format, text: string): string =>
    this.options.color && text !== "" ? styleText(format, text, { validateStream: false }) : text

  readonly newRenderer = (): Renderer =>
    makeRenderer({ color: this.options.color, width: () => this.options.output.columns ?? 100 })

  readonly call: AgentCall = (method, ...params) =>
    (
      this.state.host.call as (
        agentId: string,
        m: typeof method,
        ...p: typeof params
      ) => ReturnType<AgentCall>
    )(this.state.agentId, method, ...params)

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
    return startChat(this)
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
        this.runs.started(e.run_id)
        // No prompt of ours opened it: the agent went on by itself (a queued steer, a background task's end).
        if (this.runs.sending === 0 && this.mode === "interactive")
          this.say(this.paint("dim", "↻ the agent started a turn by itself (Ctrl-C cancels it)"))
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
      case "approval_resolved":
        this.pending.resolved(e.approval_id)
        break
      case "question_resolved":
        this.pending.resolved(e.question_id)
        break
    }
    this.screen.write(this.state.renderer.event(e))
    if (e.type === "ApprovalRequested") this.pending.onApproval(e)
    if (e.type === "QuestionAsked") this.pending.onQuestion(e)
    this.updatePrompt()
    this.updateStatus()
    this.armIdleSpinner()
    this.wake?.()
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
    if (this.assembler?.continuing) return `${this.paint("dim", "…")} `
    if (this.mode === "once" && !this.runs.running) return undefined
    if (this.runs.running) return `${this.paint("dim", "running · type to steer")} › `
    return `${this.paint(["cyan", "bold"], "›")} `
  }

  readonly updatePrompt = (): void => this.screen.setPrompt(this.promptText())

  readonly updateStatus = (): void => this.screen.setStatus(statusOf(this.state, this.runs.lastUsage))

  // -- input ---------------------------------------------------------------------

  /** A whole message typed (or pasted, or piped): answers first, the rest in order. */
  private onMessage(message: string): void {
    if (this.pending.waiting && this.queue.length === 0 && !this.pumping) {
      this.answer(message)
      return
    }
    this.queue.push(message)
    void this.pump()
  }

  private answer(line: string): void {
    this.echo(line, this.promptText())
    this.pending.answer(line)
    this.updatePrompt()
  }

  /** Lines from a pipe run one after another: each waits for the run before it. */
  private get scripted(): boolean {
    return !this.screen.interactive && this.options.input.isTTY !== true
  }

  private async pump(): Promise<void> {
    if (this.pumping) return
    this.pumping = true
    try {
      while (this.queue.length > 0) {
        if (this.pending.waiting) {
          this.answer(this.queue.shift()!)
          continue
        }
        if (this.scripted && this.runs.running) {
          await new Promise<void>((resolve) => {
            this.wake = resolve
          })
          this.wake = undefined
          continue
        }
        const message = this.queue.shift()!
        this.echo(message)
        await this.handle(message.trim() === "" ? "" : message.replace(/^\s+|\s+$/g, ""))
        this.updatePrompt()
      }
    } finally {
      this.pumping = false
      this.wake?.()
    }
  }

  /** Once nothing is queued, being handled or (for a script) running. */
  private async settled(): Promise<void> {
    while (this.pumping || this.queue.length > 0 || (this.scripted && this.runs.running)) {
      await new Promise<void>((resolve) => {
        this.wake = resolve
      })
      this.wake = undefined
    }
  }

  /** The line as the scrollback keeps it: after the prompt it answered. */
  private echo(message: string, prompt = `${this.paint(["cyan", "bold"], "›")} `): void {
    if (message.trim() === "") return
    const [first = "", ...rest] = message.split("\n")
    this.say(`${prompt}${first}`, ...rest.map((l) => `  ${l}`))
  }

  /** Ctrl-C: cancel the open run; a second press within 3 s quits. */
  interrupt(): void {
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
    this.rl?.write(null, { ctrl: true, name: "u" })
    this.say(this.paint("dim", "(Ctrl-C again, or /quit, to leave)"))
  }

  readonly send = async (text: string, note?: string): Promise<void> => {
    const { state } = this
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
    if (!this.runs.running) this.screen.spin("Waiting for the model…")
    this.runs.sending++
    const accepted = await this.attempt(undefined, "try again, or /new for a fresh session", () =>
      this.call("prompt", {
        sessionId,
        text,
        itemId,
        ...(images.length > 0 && { images: images.map((a) => a.image) }),
      }),
    ).finally(() => {
      this.runs.sending--
    })
    if (!accepted) return
    state.attachments = []
    state.userItems.push({ id: itemId, text })
    if (accepted.steered) this.say(this.paint("dim", "  ↳ sent to the running turn (steering)"))
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

  private openInput(): Interface {
    const terminal = this.screen.interactive
    const historyFile = this.options.historyFile
    const history = historyFile && terminal ? loadHistory(historyFile) : []
    const rl = createInterface({
      input: this.options.input,
      output: this.options.output,
      terminal,
      historySize: 500,
      history: [...history].reverse(),
      removeHistoryDuplicates: true,
      ...(terminal && { completer: (line: string) => completeLine(this, line) }),
    })
    this.rl = rl
    this.screen.attach(rl)
    this.assembler = new LineAssembler(terminal, (message) => {
      if (historyFile && terminal && !message.includes("\n") && !this.pending.waiting)
        appendHistory(historyFile, message)
      this.onMessage(message)
    })
    rl.on("line", (line) => {
      this.screen.lineEntered(line)
      this.assembler?.push(line)
      // A continuation or paste shows its own prompt until the message is whole.
      setImmediate(() => this.updatePrompt())
    })
    rl.on("SIGINT", () => this.interrupt())
    return rl
  }

  /** Read input until `run` resolves the exit code; Ctrl-C outside the terminal's raw mode too. */
  private async serve(mode: "interactive" | "once", run: (resolve: (code: number) => void) => void) {
    this.mode = mode
    if (mode === "once") this.updatePrompt()
    const rl = this.openInput()
    const onSignal = () => this.interrupt()
    process.on("SIGINT", onSignal)
    const code = await new Promise<number>((resolve) => {
      this.quitWith = resolve
      run(resolve)
      if (mode === "interactive")
        rl.on("close", () => {
          if (this.screen.interactive) return resolve(0)
          // A script's end: every line it sent, and the runs they started, first.
          void this.settled().then(() =>
            resolve(this.runs.lastOutcome === undefined ? 0 : exitCodeFor(this.runs.lastOutcome)),
          )
        })
    })
    process.off("SIGINT", onSignal)
    this.end()
    return code
  }

  /** The interactive chat, until /quit, Ctrl-C twice or the end of input. Resolves with the exit code. */
  interactive(): Promise<number> {
    return this.serve("interactive", () => this.updatePrompt())
  }

  /** Run one prompt to its end; the exit code says how it ended. */
  once(text: string): Promise<number> {
    return this.serve("once", (resolve) => {
      this.say(`${this.paint(["cyan", "bold"], "›")} ${text}`)
      void (async () => {
        this.screen.spin("Waiting for the model…")
        const sessionId = this.state.sessionId!
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
    this.rl?.close()
    this.unsubscribe()
    this.auto.dispose()
  }
}
