/**
 * The chat: one agent session driven from the terminal. Typed lines become
 * prompts (steering a run in progress), answers to approvals and questions,
 * front-end commands, or (any other line starting with `/`) skills and slash
 * commands for the agent. Events of the session are rendered as they come
 * (render.ts) above the status and input lines (screen.ts). Ctrl-C cancels
 * the run; twice quits.
 *
 * Rules it keeps: an approval or question is answered before any queued
 * command; a line read from a pipe waits for the run before it (a script is
 * one line after another) and the end of input waits for every queued line
 * and open run; every open run is tracked by id, so a run the agent opens by
 * itself ends on screen like any other and gives the prompt back.
 */
import { randomUUID } from "node:crypto"
import { statSync } from "node:fs"
import { createInterface, type Interface } from "node:readline"
import { styleText } from "node:util"
import { resolve as resolvePath } from "node:path"
import { Result } from "effect"
import type { Host } from "../core/host.ts"
import type {
  AgentEvent,
  AgentInfo,
  ApprovalDecision,
  ImageInput,
  Question,
  RunOutcome,
  RunUsage,
  SessionInfoPayload,
  SessionSummary,
  SkillInfo,
  TranscriptItem,
} from "../../sdk/protocol.ts"
import { ACCOUNT_ADD_USAGE, addAccount, maskKey, parseAccountAdd, storedAccounts } from "./accounts.ts"
import { answerFor, parseApprovalAnswer, parseQuestionReply } from "./answers.ts"
import { choicesFor, needsRestart, OPTION, resolveChoice, rootWithoutSandbox } from "./choices.ts"
import { commonPrefix, complete } from "./completion.ts"
import { droppedImage, readImage } from "./images.ts"
import { LineAssembler } from "./input.ts"
import { traceCommand } from "../trace/trace-report.ts"
import { grantLines } from "./plugins.ts"
import { appendHistory, loadHistory } from "./prompt-history.ts"
import { makeMarkdown } from "./markdown.ts"
import { type AutoContinue, type AutoContinueMode, makeAutoContinue } from "../core/auto-continue.ts"
import { compactNumber, makeRenderer, type Renderer, resetTime } from "./render.ts"
import { Screen } from "./screen.ts"
import { shortPath, statusText } from "./status.ts"

type Format = Parameters<typeof styleText>[0]
type RunEnded = Extract<AgentEvent, { type: "RunEnded" }>

export interface ChatOptions {
  readonly host: Host
  readonly agentId: string
  /** The workspace: the session's cwd. */
  readonly cwd: string
  readonly input: NodeJS.ReadableStream & { isTTY?: boolean }
  readonly output: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }
  readonly color: boolean
  /** Option values for new sessions (model, effort, approval_mode). */
  readonly sessionOptions?: Readonly<Record<string, string | boolean>>
  /** Approvals answered at the prompt, or by policy (one-shot runs). Default "ask". */
  readonly approvals?: "ask" | "allow" | "deny"
  /** Questions answered at the prompt, or with each question's first option. Default "ask". */
  readonly questions?: "ask" | "first"
  /** Why approvals are answered by policy, shown beside each automatic answer. */
  readonly policyReason?: string
  /** The prompt history file (kept across restarts); none: history lasts the chat. */
  readonly historyFile?: string
  /** Stop the plugin and load it again (after /account add); none: applies at the next start. */
  readonly reload?: () => Promise<Host>
  /** The environment the CLI runs in (which approval modes it allows). Default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Send one "continue" when a blocked run's usage window reopens (host/core/auto-continue.ts). Default off. */
  readonly autoContinue?: AutoContinueMode
}

/** The exit code that says how a run ended. */
export const exitCodeFor = (outcome: RunOutcome): number =>
  outcome === "Completed" ? 0 : outcome === "Cancelled" ? 130 : 1

type Pending =
  | { readonly kind: "approval"; readonly id: string; readonly tool: string; readonly canAlways: boolean }
  | {
      readonly kind: "question"
      readonly id: string
      readonly questions: ReadonlyArray<Question>
      readonly answers: Record<string, string | ReadonlyArray<string>>
      response?: string
    }

const SECOND_CTRL_C_MS = 3000
const IDLE_SPINNER_MS = 600

/** What "always" holds for: the plugin answers with a session-scoped rule, never a saved one. */
const ALWAYS_HOLDS = "until this session ends (not saved to settings)"

const HELP = [
  ["/sessions", "list the stored sessions of this workspace"],
  ["/open <n|id>", "show a stored session"],
  ["/resume <n|id>", "continue a stored session"],
  ["/new", "start a new session"],
  ["/fork", "fork this session into a new one"],
  ["/rewind [n]", "list your prompts, or rewind to just before prompt n"],
  ["/account [id]", "list the accounts with their status, or switch to one"],
  ["/account add …", "store an account: <id> --config-dir <dir> | --api-key <key> [--base-url <url>]"],
  ["/login, /logout", "sign this account in (prints the sign-in page) or out"],
  ["/update", "update Claude Code, when its installer allows"],
  ["/model [value]", "list the models, or choose one"],
  ["/effort [level]", "list the effort levels, or choose one"],
  ["/approval [mode]", "list the approval modes, or choose one"],
  ["/skills", "list the skills and slash commands; /<name> [args] runs one"],
  ["/image <path>", "attach an image to the next prompt (or drop the file on the prompt)"],
  ["/expand <n>", "show all of a cut-short output, diff, file or thinking"],
  ["/cd <dir>", "work in another folder (a new session there)"],
  ["/tasks", "show the task tree; /stop <n|id> stops a task"],
  ["/usage", "show the rate limits"],
  ["/plugins", "the loaded plugin, its version and every grant with its reason"],
  ["/trace report --base <rev> [--head <rev>]", "Agent Trace: which lines of those commits the agent wrote"],
  ["/cancel", "cancel the run (or Ctrl-C)"],
  ["/quit", "leave (or Ctrl-C twice)"],
] as const

/** The front end's own commands; any other `/word` goes to the agent. */
const COMMANDS = [
  "help",
  "quit",
  "exit",
  "cancel",
  "new",
  "sessions",
  "open",
  "resume",
  "fork",
  "rewind",
  "account",
  "login",
  "logout",
  "update",
  "model",
  "effort",
  "approval",
  "skills",
  "image",
  "expand",
  "cd",
  "tasks",
  "stop",
  "usage",
  "plugins",
  "trace",
] as const

const oneLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split("\n").find((l) => l.trim() !== "") ??
  "unknown error"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export class Chat {
  private host: Host
  private readonly screen: Screen
  private cwd: string
  private agentId: string
  private info: AgentInfo | undefined
  /** The last info the agent gave, for the status line while a fresh one is not asked for. */
  private knownInfo: AgentInfo | undefined
  private sessionId: string | undefined
  private renderer: Renderer
  /** Events of the agent held while a session opens (its id is not known yet). */
  private held: AgentEvent[] | undefined
  /** Every run open in this session, by id (the CLI may open one by itself). */
  private readonly openRuns = new Set<string>()
  private readonly runEnds = new Map<string, RunEnded>()
  private readonly runWaiters = new Map<string, (e: RunEnded) => void>()
  private lastOutcome: RunOutcome | undefined
  private lastUsage: RunUsage | undefined
  private readonly pending: Pending[] = []
  private userItems: Array<{ id: string; text: string }> = []
  private lastList: ReadonlyArray<SessionSummary> | undefined
  private skills: ReadonlyArray<SkillInfo> | undefined
  private sessionInfo: SessionInfoPayload | undefined
  private sessionOptions: Record<string, string | boolean>
  private attachments: Array<{ image: ImageInput; path: string }> = []
  private rl: Interface | undefined
  private assembler: LineAssembler | undefined
  private mode: "interactive" | "once" = "interactive"
  private lastCtrlC = 0
  /** Prompts sent and not yet answered: a run starting meanwhile is theirs. */
  private sending = 0
  private idleTimer: NodeJS.Timeout | undefined
  /** Typed lines waiting for their turn. */
  private readonly queue: string[] = []
  private pumping = false
  /** Woken on every event: a piped line waits for the run before it. */
  private wake: (() => void) | undefined
  private quit: ((code: number) => void) | undefined
  private unsubscribe: () => void
  private readonly auto: AutoContinue

  constructor(private readonly options: ChatOptions) {
    this.host = options.host
    this.agentId = options.agentId
    this.cwd = options.cwd
    this.sessionOptions = { ...options.sessionOptions }
    const terminal =
      options.output.isTTY === true && options.input.isTTY === true && process.env.TERM !== "dumb"
    this.screen = new Screen({ output: options.output, interactive: terminal, color: options.color })
    this.renderer = this.newRenderer()
    this.auto = makeAutoContinue({
      mode: options.autoContinue ?? "off",
      send: (sessionId, text) => (sessionId === this.sessionId ? this.send(text) : undefined),
      notify: (sessionId, text) =>
        sessionId === this.sessionId ? this.say(this.paint("dim", `  ⏱ ${text}`)) : undefined,
    })
    this.unsubscribe = this.subscribe()
  }

  private subscribe(): () => void {
    return this.host.events.subscribe((h) => {
      if (h.kind === "agent_event" && h.agentId === this.agentId) this.onEvent(h.event)
      if (h.kind === "info_changed" && h.agentId === this.agentId) {
        // Asked again when needed; the status line keeps what it knew meanwhile.
        if (this.info) this.knownInfo = this.info
        this.info = undefined
      }
    })
  }

  private paint(format: Format, text: string): string {
    return this.options.color && text !== "" ? styleText(format, text, { validateStream: false }) : text
  }

  private newRenderer(): Renderer {
    return makeRenderer({ color: this.options.color, width: () => this.options.output.columns ?? 100 })
  }

  private get running(): boolean {
    return this.openRuns.size > 0
  }

  /** Lines the front end writes (banner, command output). */
  say(...lines: ReadonlyArray<string>): void {
    this.screen.write(this.renderer.flush())
    this.screen.lines(...lines)
  }

  private fail(error: unknown, hint: string): void {
    this.say(`${this.paint("red", `✗ ${oneLine(error)}`)}${this.paint("dim", ` — ${hint}`)}`)
  }

  /** Run one call under a spinner; a failure is one line with what to do, and undefined. */
  private async attempt<A>(
    label: string | undefined,
    hint: string,
    run: () => Promise<A>,
  ): Promise<A | undefined> {
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

  // -- sessions ----------------------------------------------------------------

  /** Ask the agent about itself, check the chosen options, open a new session. false when that failed. */
  async start(): Promise<boolean> {
    const info = await this.loadInfo()
    if (!info) return false
    if (info.status !== "Ready") {
      this.say(
        this.paint(
          "yellow",
          `! ${info.name}: ${info.status}${info.statusMessage ? ` — ${info.statusMessage}` : ""}`,
        ),
        this.paint("dim", "  /login signs this account in; /account switches; --demo runs offline"),
      )
    }
    const refused = this.checkOptions(info, this.sessionOptions)
    if (refused) {
      this.say(`${this.paint("red", `✗ ${refused}`)}${this.paint("dim", " — npm start -- --help")}`)
      return false
    }
    return this.newSession()
  }

  /** Every option value checked against the agent's own choices: the first refusal, or undefined. */
  private checkOptions(info: AgentInfo, values: Readonly<Record<string, string | boolean>>) {
    const model = typeof values[OPTION.model] === "string" ? (values[OPTION.model] as string) : undefined
    for (const [id, label] of [
      [OPTION.model, "model"],
      [OPTION.effort, "effort"],
      [OPTION.approval, "approval mode"],
    ] as const) {
      const value = values[id]
      if (typeof value !== "string") continue
      const resolved = resolveChoice(this.choices(info, id, model), value, label)
      if (!resolved.ok) return resolved.message
    }
    return undefined
  }

  private choices(info: AgentInfo, optionId: string, model = this.currentModel()) {
    return choicesFor(info, optionId, {
      ...(model !== undefined && { model }),
      rootWithoutSandbox: rootWithoutSandbox(this.options.env ?? process.env),
    })
  }

  private currentModel(): string | undefined {
    const value = this.sessionInfo?.options?.[OPTION.model] ?? this.sessionOptions[OPTION.model]
    return typeof value === "string" ? value : this.sessionInfo?.model
  }

  private async loadInfo(): Promise<AgentInfo | undefined> {
    const info = await this.attempt(
      "Checking Claude Code…",
      "is `claude --version` working? try --demo",
      () => this.host.call(this.agentId, "initialize"),
    )
    if (info) this.info = info
    this.updateStatus()
    return info
  }

  private async open(
    label: string,
    hint: string,
    run: () => Promise<{ session_id: string; info: SessionInfoPayload }>,
  ): Promise<boolean> {
    this.held = []
    const opened = await this.attempt(label, hint, run)
    const held = this.held
    this.held = undefined
    if (!opened) return false
    this.switchTo(opened.session_id)
    this.sessionInfo = opened.info
    for (const e of held) if (e.session_id === opened.session_id) this.onEvent(e)
    this.updateStatus()
    return true
  }

  private switchTo(sessionId: string): void {
    this.sessionId = sessionId
    this.renderer = this.newRenderer()
    this.openRuns.clear()
    this.pending.length = 0
    this.lastUsage = undefined
    this.updatePrompt()
  }

  private newSession(options: Readonly<Record<string, string | boolean>> = this.sessionOptions) {
    return this.open("Starting Claude Code…", "check `claude --version`, or start with --demo", () =>
      this.host.call(this.agentId, "createSession", {
        cwd: this.cwd,
        ...(Object.keys(options).length > 0 && { options }),
      }),
    ).then((ok) => {
      if (ok) this.userItems = []
      return ok
    })
  }

  /** A session named by its number in the last /sessions list or (a start of) its id. */
  private async resolveSession(ref: string | undefined): Promise<string | undefined> {
    if (!ref) {
      this.say(this.paint("yellow", "name a session: /sessions lists them, then /open <n> or /open <id>"))
      return undefined
    }
    const list = this.lastList ?? (await this.fetchList())
    if (!list) return undefined
    if (/^\d+$/.test(ref)) {
      const found = list[Number(ref) - 1]?.session_id
      if (!found)
        this.say(
          this.paint(
            "yellow",
            list.length === 0
              ? "this workspace has no stored sessions"
              : `there is no session ${ref}: /sessions lists ${list.length} (1 to ${list.length})`,
          ),
        )
      return found
    }
    const matches = list.filter((s) => s.session_id.startsWith(ref))
    if (matches.length === 1) return matches[0]!.session_id
    if (matches.length > 1) {
      this.say(this.paint("yellow", `${ref} starts ${matches.length} session ids; type more of it`))
      return undefined
    }
    // A whole id may name a session the short list left out.
    if (UUID.test(ref)) return ref
    this.say(this.paint("yellow", `no stored session ${ref} in ${shortPath(this.cwd)}: /sessions lists them`))
    return undefined
  }

  // -- events --------------------------------------------------------------------

  private onEvent(e: AgentEvent): void {
    if (e.session_id !== this.sessionId) {
      this.held?.push(e)
      return
    }
    this.screen.spin(undefined)
    this.auto.onEvent(e)
    switch (e.type) {
      case "RunStarted":
        this.openRuns.add(e.run_id)
        // No prompt of ours opened it: the agent went on by itself (a queued steer, a background task's end).
        if (this.sending === 0 && this.mode === "interactive")
          this.say(this.paint("dim", "↻ the agent started a turn by itself (Ctrl-C cancels it)"))
        break
      case "RunEnded":
        this.openRuns.delete(e.run_id)
        this.lastOutcome = e.outcome
        if (e.usage?.context_used) this.lastUsage = e.usage
        if (!this.running) this.pending.length = 0
        break
      case "Skills":
        this.skills = e.skills
        break
      case "SessionInfo":
        this.sessionInfo = { ...this.sessionInfo, ...e.info }
        break
      case "approval_resolved":
      case "question_resolved": {
        const id = e.type === "approval_resolved" ? e.approval_id : e.question_id
        const at = this.pending.findIndex((p) => p.id === id)
        if (at >= 0) this.pending.splice(at, 1)
        break
      }
    }
    this.screen.write(this.renderer.event(e))
    if (e.type === "ApprovalRequested") this.onApproval(e)
    if (e.type === "QuestionAsked") this.onQuestion(e)
    if (e.type === "RunEnded") {
      this.runEnds.set(e.run_id, e)
      this.runWaiters.get(e.run_id)?.(e)
      this.runWaiters.delete(e.run_id)
    }
    this.updatePrompt()
    this.updateStatus()
    this.armIdleSpinner()
    this.wake?.()
  }

  /** While a run is open and nothing arrives for a moment, show that it is still working. */
  private armIdleSpinner(): void {
    clearTimeout(this.idleTimer)
    if (!this.running || this.pending.length > 0) return
    this.idleTimer = setTimeout(() => {
      if (this.running && this.pending.length === 0) this.screen.spin("Working…  (Ctrl-C cancels)")
    }, IDLE_SPINNER_MS)
    this.idleTimer.unref()
  }

  private onApproval(e: Extract<AgentEvent, { type: "ApprovalRequested" }>): void {
    const policy = this.options.approvals ?? "ask"
    if (policy !== "ask") {
      const decision: ApprovalDecision = policy
      this.say(
        this.paint(
          "dim",
          `  → ${decision === "allow" ? "allowed" : "denied"} (${this.options.policyReason ?? "policy"})`,
        ),
      )
      void this.answerApproval(e.approval_id, decision)
      return
    }
    this.pending.push({
      kind: "approval",
      id: e.approval_id,
      tool: e.tool_name,
      canAlways: e.can_always !== false,
    })
  }

  private onQuestion(e: Extract<AgentEvent, { type: "QuestionAsked" }>): void {
    if ((this.options.questions ?? "ask") === "first") {
      const answers: Record<string, string | ReadonlyArray<string>> = {}
      for (const q of e.questions) {
        const first = q.options[0]?.label ?? ""
        answers[q.question] = q.multi_select ? [first] : first
      }
      this.say(
        this.paint(
          "dim",
          `  → answered: ${Object.values(answers).flat().join(", ")} (${this.options.policyReason ?? "policy"})`,
        ),
      )
      void this.attempt(undefined, "the question may have been withdrawn", () =>
        this.host.call(this.agentId, "answerQuestion", {
          sessionId: this.sessionId!,
          questionId: e.question_id,
          answers,
        }),
      )
      return
    }
    this.pending.push({ kind: "question", id: e.question_id, questions: e.questions, answers: {} })
  }

  private answerApproval(approvalId: string, decision: ApprovalDecision, message?: string) {
    return this.attempt(undefined, "the request may have been withdrawn; the run goes on", () =>
      this.host.call(this.agentId, "answerApproval", {
        sessionId: this.sessionId!,
        approvalId,
        decision,
        ...(message !== undefined && { message }),
      }),
    )
  }

  private promptText(): string | undefined {
    const head = this.pending[0]
    if (head?.kind === "approval")
      return `${this.paint(["yellow", "bold"], `allow ${head.tool}?`)} ${this.paint("dim", head.canAlways ? "a/d/A" : "a/d")} › `
    if (head?.kind === "question") {
      const q = head.questions[Object.keys(head.answers).length]
      return `${this.paint(["yellow", "bold"], q?.header ?? "answer")} ${this.paint("dim", q?.multi_select ? "1,2…/text" : "number/text")} › `
    }
    if (this.assembler?.continuing) return `${this.paint("dim", "…")} `
    if (this.mode === "once" && !this.running) return undefined
    if (this.running) return `${this.paint("dim", "running · type to steer")} › `
    return `${this.paint(["cyan", "bold"], "›")} `
  }

  private updatePrompt(): void {
    this.screen.setPrompt(this.promptText())
  }

  private updateStatus(): void {
    const options = { ...this.sessionOptions, ...this.sessionInfo?.options }
    const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined)
    const info = this.info ?? this.knownInfo
    const defaultOf = (id: string) => text(info?.options.find((o) => o.id === id)?.default)
    const model = text(options[OPTION.model]) ?? this.sessionInfo?.model ?? defaultOf(OPTION.model)
    const effort = text(options[OPTION.effort]) ?? defaultOf(OPTION.effort)
    const approval = text(options[OPTION.approval]) ?? defaultOf(OPTION.approval)
    this.screen.setStatus(
      statusText({
        ...(model !== undefined && { model }),
        ...(effort !== undefined && { effort }),
        ...(approval !== undefined && { approval }),
        account: this.agentId,
        ...(this.lastUsage?.context_used !== undefined && { contextUsed: this.lastUsage.context_used }),
        ...(this.lastUsage?.context_window !== undefined && { contextWindow: this.lastUsage.context_window }),
        cwd: this.cwd,
        images: this.attachments.length,
      }),
    )
  }

  // -- input ---------------------------------------------------------------------

  /** A whole message typed (or pasted, or piped): answers first, the rest in order. */
  private onMessage(message: string): void {
    const head = this.pending[0]
    if (head && this.queue.length === 0 && !this.pumping) {
      this.answerPending(head, message)
      this.updatePrompt()
      return
    }
    this.queue.push(message)
    void this.pump()
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
        const head = this.pending[0]
        if (head) {
          this.answerPending(head, this.queue.shift()!)
          this.updatePrompt()
          continue
        }
        if (this.scripted && this.running) {
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
    while (this.pumping || this.queue.length > 0 || (this.scripted && this.running)) {
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

  private answerPending(head: Pending, line: string): void {
    this.echo(line, this.promptText())
    if (head.kind === "approval") {
      const answer = parseApprovalAnswer(line)
      if (!answer || (answer.decision === "allow_always" && !head.canAlways)) {
        this.say(
          this.paint(
            "yellow",
            `  answer a (allow), d (deny; d <reason> tells the agent why)${head.canAlways ? ` or A (always, ${ALWAYS_HOLDS})` : ""}`,
          ),
        )
        return
      }
      this.pending.shift()
      if (answer.decision === "allow_always")
        this.say(this.paint("dim", `  → ${head.tool} allowed ${ALWAYS_HOLDS}`))
      if (answer.message) this.say(this.paint("dim", `  → denied; the agent is told: ${answer.message}`))
      void this.answerApproval(head.id, answer.decision, answer.message)
      return
    }
    const question = head.questions[Object.keys(head.answers).length]
    if (!question) return
    const reply = parseQuestionReply(question, line)
    if (!reply || reply.kind === "invalid") {
      this.say(this.paint("yellow", `  ${reply?.message ?? "type an option number, or your own answer"}`))
      return
    }
    head.answers[question.question] = answerFor(question, reply)
    if (reply.kind === "text") head.response = reply.text
    if (Object.keys(head.answers).length < head.questions.length) return
    this.pending.shift()
    void this.attempt(undefined, "the question may have been withdrawn", () =>
      this.host.call(this.agentId, "answerQuestion", {
        sessionId: this.sessionId!,
        questionId: head.id,
        answers: head.answers,
        ...(head.response !== undefined && { response: head.response }),
      }),
    )
  }

  /** Ctrl-C: cancel the open run; a second press within 3 s quits. */
  interrupt(): void {
    const now = Date.now()
    const twice = now - this.lastCtrlC < SECOND_CTRL_C_MS
    this.lastCtrlC = now
    if (twice) {
      this.quit?.(this.mode === "once" ? 130 : 0)
      return
    }
    if (this.running) {
      this.say(this.paint("yellow", "⊘ Cancelling the run… (Ctrl-C again to quit)"))
      void this.attempt(undefined, "Ctrl-C again to quit", () =>
        this.host.call(this.agentId, "cancel", { sessionId: this.sessionId! }),
      )
      return
    }
    if (this.mode === "once") {
      this.quit?.(130)
      return
    }
    this.rl?.write(null, { ctrl: true, name: "u" })
    this.say(this.paint("dim", "(Ctrl-C again, or /quit, to leave)"))
  }

  private async send(text: string, note?: string): Promise<void> {
    if (!this.sessionId && !(await this.newSession())) return
    this.auto.sent(this.sessionId!)
    const itemId = randomUUID()
    const images = this.attachments
    if (images.length > 0 && this.info && !this.info.capabilities.images) {
      this.say(this.paint("yellow", "this agent takes no images; the attachments stay for another account"))
      return
    }
    // Said before the call: the run's own lines may arrive before the call's answer does.
    if (note) this.say(this.paint("dim", `  ↳ ${note}`))
    if (!this.running) this.screen.spin("Waiting for the model…")
    this.sending++
    const accepted = await this.attempt(undefined, "try again, or /new for a fresh session", () =>
      this.host.call(this.agentId, "prompt", {
        sessionId: this.sessionId!,
        text,
        itemId,
        ...(images.length > 0 && { images: images.map((a) => a.image) }),
      }),
    ).finally(() => {
      this.sending--
    })
    if (!accepted) return
    this.attachments = []
    this.userItems.push({ id: itemId, text })
    if (accepted.steered) this.say(this.paint("dim", "  ↳ sent to the running turn (steering)"))
    if (!this.runEnds.has(accepted.run_id)) this.openRuns.add(accepted.run_id)
    this.updateStatus()
  }

  private async handle(line: string): Promise<void> {
    if (line === "") return
    if (!line.startsWith("/")) {
      const image = droppedImage(line, this.cwd)
      if (image) return this.attach(image)
      return this.send(line)
    }
    const [command = "", ...rest] = line.slice(1).split(/\s+/)
    const arg = rest.join(" ").trim() || undefined
    switch (command) {
      case "help":
      case "?":
        return this.say(
          ...HELP.map(([c, d]) => `  ${this.paint("bold", c.padEnd(18))} ${d}`),
          this.paint(
            "dim",
            `  At an approval: a allow · d [reason] deny · A always (${ALWAYS_HOLDS}). At a question: a number or text.`,
          ),
          this.paint(
            "dim",
            "  Enter sends; a line ending in \\ continues; a paste keeps its newlines; Tab completes.",
          ),
        )
      case "quit":
      case "exit":
      case "q":
        return this.quit?.(0)
      case "cancel":
        if (!this.running) return this.say(this.paint("dim", "no run to cancel"))
        await this.attempt(undefined, "Ctrl-C twice quits", () =>
          this.host.call(this.agentId, "cancel", { sessionId: this.sessionId! }),
        )
        return
      case "new":
        await this.newSession()
        if (this.sessionId) this.say(this.paint("dim", `new session ${this.sessionId}`))
        return
      case "sessions":
        return this.listSessions()
      case "open":
        return this.openStored(arg)
      case "resume":
        return this.resume(arg)
      case "fork":
        return this.fork()
      case "rewind":
        return this.rewind(arg)
      case "account":
        return rest[0] === "add" ? this.addAccount(rest.slice(1)) : this.account(arg)
      case "login":
        return this.login()
      case "logout":
        return this.logout()
      case "update":
        return this.update()
      case "model":
        return this.option(OPTION.model, arg)
      case "effort":
        return this.option(OPTION.effort, arg)
      case "approval":
        return this.option(OPTION.approval, arg)
      case "skills":
        return this.showSkills()
      case "image":
        return arg ? this.attach(arg) : this.say(this.paint("yellow", "/image <path> attaches a file"))
      case "expand":
        return this.expand(arg)
      case "cd":
        return this.changeFolder(arg)
      case "tasks":
        return this.say(this.renderer.taskTree().trimEnd() || this.paint("dim", "no tasks in this session"))
      case "stop":
        return this.stopTask(arg)
      case "usage":
        return this.usage()
      case "plugins":
        return this.plugins()
      case "trace":
        return this.trace(arg)
      default:
        return this.toAgent(command, line)
    }
  }

  /** Not a front-end command: a skill or slash command of the agent, sent as the prompt. */
  private async toAgent(command: string, line: string): Promise<void> {
    const skills = this.skills ?? this.info?.skills ?? []
    const known = skills.find((s) => s.name === command)
    const note = known
      ? `/${command} goes to the agent (${known.source === "cli" ? "a Claude Code command" : `a ${known.source} skill`})`
      : `/${command} is not a front-end command (/help): sent to the agent as typed`
    return this.send(line, note)
  }

  // -- commands ------------------------------------------------------------------

  private async fetchList(): Promise<ReadonlyArray<SessionSummary> | undefined> {
    const page = await this.attempt("Reading sessions…", "is the workspace readable?", () =>
      this.host.call(this.agentId, "listSessions", { cwd: this.cwd, limit: 20 }),
    )
    if (page) this.lastList = page.sessions
    return page?.sessions
  }

  private async listSessions(): Promise<void> {
    const sessions = await this.fetchList()
    if (!sessions) return
    if (sessions.length === 0) return this.say(this.paint("dim", "no stored sessions for this workspace"))
    this.say(
      ...sessions.map((s, i) => {
        const mark = s.session_id === this.sessionId ? this.paint("cyan", " (this one)") : ""
        const when = new Date(s.modified_at).toLocaleString("en-GB", {
          dateStyle: "short",
          timeStyle: "short",
        })
        return `  ${this.paint("bold", `${i + 1}.`)} ${s.title}${mark} ${this.paint("dim", `· ${when} · ${compactNumber(s.size_bytes)}B · ${s.session_id}`)}`
      }),
      this.paint("dim", "  /open <n> shows one, /resume <n> continues it"),
    )
  }

  private async readStored(
    ref: string | undefined,
  ): Promise<{ id: string; items: ReadonlyArray<TranscriptItem>; title?: string } | undefined> {
    const sessionId = await this.resolveSession(ref)
    if (!sessionId) return undefined
    const transcript = await this.attempt("Reading the session…", "check the id with /sessions", () =>
      this.host.call(this.agentId, "readSession", { sessionId, cwd: this.cwd }),
    )
    // The list's title (the first prompt) when the transcript has no title of its own.
    const listed = this.lastList?.find((s) => s.session_id === sessionId)?.title
    const title = transcript?.title ?? listed
    return (
      transcript && {
        id: sessionId,
        items: transcript.items,
        ...(title !== undefined && { title }),
      }
    )
  }

  private async openStored(ref: string | undefined): Promise<void> {
    const stored = await this.readStored(ref)
    if (!stored) return
    this.say(this.paint("bold", `── ${stored.title ?? "Untitled"} · ${stored.id}`))
    this.screen.write(this.newRenderer().transcript(stored.items))
    this.say(this.paint("dim", `── end of session · /resume ${stored.id} continues it`))
  }

  private async resume(ref: string | undefined): Promise<void> {
    const stored = await this.readStored(ref)
    if (!stored) return
    const ok = await this.open("Resuming…", "check the id with /sessions", () =>
      this.host.call(this.agentId, "resumeSession", { sessionId: stored.id, cwd: this.cwd }),
    )
    if (!ok) return
    this.say(this.paint("bold", `── ${stored.title ?? "Untitled"} · ${stored.id}`))
    this.screen.write(this.renderer.transcript(stored.items))
    this.userItems = stored.items.flatMap((i) => (i.type === "user" ? [{ id: i.id, text: i.text }] : []))
    this.say(this.paint("dim", "── resumed: type to continue"))
  }

  private async fork(): Promise<void> {
    const origin = this.sessionId
    if (!origin) return this.say(this.paint("yellow", "no session to fork"))
    const items = this.userItems
    const ok = await this.open("Forking…", "a session forks once it has a prompt", () =>
      this.host.call(this.agentId, "forkSession", { sessionId: origin, cwd: this.cwd }),
    )
    if (!ok) return
    // The fork's agent knows only prompts sent in it: rewinding starts from there.
    this.userItems = []
    this.say(
      this.paint(
        "green",
        `⑂ Forked ${origin} (${items.length} prompts) into ${this.sessionId}; you are in the fork`,
      ),
    )
  }

  private async rewind(arg: string | undefined): Promise<void> {
    if (this.userItems.length === 0) return this.say(this.paint("dim", "no prompts to rewind to"))
    if (arg === undefined)
      return this.say(
        ...this.userItems.map((u, i) => `  ${this.paint("bold", `${i + 1}.`)} ${u.text.split("\n")[0]}`),
        this.paint("dim", "  /rewind <n> rewinds to just before prompt n"),
      )
    const n = Number(arg)
    const target = Number.isInteger(n) ? this.userItems[n - 1] : undefined
    if (!target) return this.say(this.paint("yellow", `pick a prompt from 1 to ${this.userItems.length}`))
    if (this.running) return this.say(this.paint("yellow", "cancel the run first (Ctrl-C)"))
    const done = await this.attempt("Rewinding…", "only prompts of this conversation can be rewound to", () =>
      this.host
        .call(this.agentId, "rollback", { sessionId: this.sessionId!, itemId: target.id })
        .then(() => true),
    )
    if (!done) return
    this.userItems = this.userItems.slice(0, n - 1)
    this.say(this.paint("green", `⟲ Rewound to just before “${target.text.split("\n")[0]}”`))
  }

  private async account(arg: string | undefined): Promise<void> {
    const ids = [...this.host.agents.keys()]
    if (!arg) return this.listAccounts(ids)
    const target = ids.find((id) => id === arg || id === `claude:${arg}`)
    if (!target) return this.say(this.paint("yellow", `no account ${arg}; have: ${ids.join(", ")}`))
    const previous = { agentId: this.agentId, sessionId: this.sessionId, info: this.info }
    this.agentId = target
    this.info = undefined
    this.skills = undefined
    if (!(await this.start())) {
      this.agentId = previous.agentId
      this.sessionId = previous.sessionId
      this.info = previous.info
      this.updateStatus()
      return
    }
    if (previous.sessionId)
      void this.host.call(previous.agentId, "closeSession", { sessionId: previous.sessionId }).catch(() => {})
    this.say(this.paint("green", `switched to ${target}`))
  }

  private async listAccounts(ids: ReadonlyArray<string>): Promise<void> {
    const stored = await storedAccounts(this.host.storage).catch(() => [])
    this.screen.spin("Asking each account…")
    const infos = await Promise.allSettled(ids.map((id) => this.host.call(id, "initialize")))
    this.screen.spin(undefined)
    this.say(
      ...ids.map((id, i) => {
        const result = infos[i]
        const info = result?.status === "fulfilled" ? result.value : undefined
        const entry = stored.find((a) => `claude:${a.id}` === id)
        const how = entry?.configDir
          ? `config ${entry.configDir}`
          : entry?.env?.ANTHROPIC_BASE_URL || entry?.env?.ANTHROPIC_API_KEY
            ? [
                entry.env.ANTHROPIC_API_KEY && `key ${maskKey(entry.env.ANTHROPIC_API_KEY)}`,
                entry.env.ANTHROPIC_BASE_URL,
              ]
                .filter(Boolean)
                .join(" · ")
            : id === "claude"
              ? "the login default"
              : ""
        const status = info
          ? `${info.status}${info.description ? ` · ${info.description}` : ""}`
          : `unavailable: ${oneLine(result?.status === "rejected" ? result.reason : "")}`
        return `  ${id === this.agentId ? this.paint("cyan", "●") : " "} ${this.paint("bold", id)} ${info?.name ?? entry?.name ?? ""} ${this.paint("dim", `· ${status}${how ? ` · ${how}` : ""}`)}`
      }),
      this.paint("dim", `  /account <id> switches (a new session) · ${ACCOUNT_ADD_USAGE}`),
      this.paint("dim", `  stored in ${this.host.storage.file} (key "instances")`),
    )
  }

  private async addAccount(words: ReadonlyArray<string>): Promise<void> {
    const parsed = parseAccountAdd(words)
    if (Result.isFailure(parsed)) return this.say(this.paint("yellow", parsed.failure))
    const entry = parsed.success
    const added = await this.attempt(undefined, "/account lists what is stored", () =>
      addAccount(this.host.storage, entry).then(() => true),
    )
    if (!added) return
    const agentId = `claude:${entry.id}`
    if (!this.options.reload) {
      this.say(this.paint("green", `stored ${agentId}; it registers at the next start`))
      return
    }
    const reloaded = await this.attempt("Reloading the plugin…", "restart npm start to load it", async () => {
      const session = this.sessionId
      this.unsubscribe()
      this.host = await this.options.reload!()
      this.unsubscribe = this.subscribe()
      this.info = undefined
      if (!this.host.agents.has(agentId))
        await this.host.events.waitFor((e) => e.kind === "agent_provided" && e.agentId === agentId, 10_000)
      return session
    })
    if (reloaded === undefined && this.sessionId === undefined) return
    this.say(this.paint("green", `added ${agentId}; /account ${entry.id} switches to it`))
    // The reload ended this chat's process; continue the same conversation.
    const session = this.sessionId
    if (session && this.userItems.length > 0) {
      await this.open("Resuming…", "/new starts a session", () =>
        this.host.call(this.agentId, "resumeSession", { sessionId: session, cwd: this.cwd }),
      )
    } else await this.newSession()
  }

  private async login(): Promise<void> {
    const started = await this.attempt("Starting the sign-in…", "the CLI's `auth login` did not start", () =>
      this.host.call(this.agentId, "signIn"),
    )
    if (!started) return
    this.say(
      this.paint("green", started.message),
      ...(started.url ? [`  open ${this.paint("bold", started.url)}`] : []),
    )
    this.info = undefined
  }

  private async logout(): Promise<void> {
    const done = await this.attempt("Signing out…", "/account shows the accounts", () =>
      this.host.call(this.agentId, "signOut").then(() => true),
    )
    if (done) this.say(this.paint("green", `${this.agentId} signed out; /login signs in again`))
    this.info = undefined
  }

  private async update(): Promise<void> {
    const info = this.info ?? (await this.loadInfo())
    if (info?.maintenance && !info.maintenance.can_update)
      return this.say(
        this.paint(
          "yellow",
          `Claude Code ${info.maintenance.version ?? ""} at ${info.maintenance.path ?? "?"} is not updated from here: its installer is not one this plugin may run`,
        ),
      )
    const done = await this.attempt(
      "Updating Claude Code…",
      "/update again, or update it the way it was installed",
      () => this.host.call(this.agentId, "update"),
    )
    if (done) this.say(this.paint("green", done.message))
  }

  private async option(optionId: string, value: string | undefined): Promise<void> {
    const info = this.info ?? (await this.loadInfo())
    if (!info) return
    const option = info.options.find((o) => o.id === optionId)
    const choices = this.choices(info, optionId)
    const current =
      this.sessionInfo?.options?.[optionId] ??
      this.sessionOptions[optionId] ??
      (optionId === OPTION.model ? this.sessionInfo?.model : undefined) ??
      option?.default
    const command = optionId === OPTION.approval ? "approval" : optionId
    if (value === undefined)
      return this.say(
        ...choices.map(
          (c) =>
            `  ${c.value === current ? this.paint("cyan", "●") : " "} ${this.paint(c.unavailable ? "dim" : "bold", c.value)} ${this.paint("dim", c.unavailable ? `not available: ${c.unavailable}` : c.label)}`,
        ),
        this.paint("dim", `  /${command} <value> chooses`),
      )
    const label = option?.label ?? optionId
    const resolved = resolveChoice(choices, value, label.toLowerCase())
    if (!resolved.ok) return this.say(this.paint("yellow", resolved.message))
    if (!this.sessionId) return this.say(this.paint("yellow", "no session"))
    const chosen = resolved.value
    const live =
      !needsRestart(optionId, chosen) &&
      (await this.attempt(
        undefined,
        `${label} ${chosen} could not be set live; restarting the session for it`,
        () =>
          this.host
            .call(this.agentId, "setOption", { sessionId: this.sessionId!, optionId, value: chosen })
            .then(() => true),
      ))
    this.sessionOptions = { ...this.sessionOptions, [optionId]: chosen }
    if (!live && !(await this.restartWith(optionId, chosen))) return
    this.sessionInfo = { ...this.sessionInfo, options: { ...this.sessionInfo?.options, [optionId]: chosen } }
    this.updateStatus()
    const later = option?.appliesAtNextStart ? " (applies at the next start)" : ""
    this.say(this.paint("green", `${label}: ${chosen}${later}`))
  }

  /** The session again, its process launched with the flags `optionId = value` needs. */
  private async restartWith(optionId: string, value: string): Promise<boolean> {
    const options = { ...this.sessionInfo?.options, ...this.sessionOptions, [optionId]: value }
    const session = this.sessionId
    if (session === undefined || this.userItems.length === 0) {
      // Nothing said yet: a new session started in that mode loses nothing.
      const old = session
      if (!(await this.newSession(options))) return false
      if (old) void this.host.call(this.agentId, "closeSession", { sessionId: old }).catch(() => {})
      this.say(this.paint("dim", `  a new session started for ${value}`))
      return true
    }
    if (this.running) {
      this.say(this.paint("yellow", `${value} needs the session restarted: cancel the run first (Ctrl-C)`))
      return false
    }
    await this.host.call(this.agentId, "closeSession", { sessionId: session }).catch(() => {})
    const items = this.userItems
    const ok = await this.open(
      `Restarting for ${value}…`,
      `${value} could not start; /approval lists what works`,
      () => this.host.call(this.agentId, "resumeSession", { sessionId: session, cwd: this.cwd, options }),
    )
    if (!ok) {
      // Back to the conversation as it was, in the mode it had.
      delete this.sessionOptions[optionId]
      await this.open("Resuming…", "/new starts a session", () =>
        this.host.call(this.agentId, "resumeSession", { sessionId: session, cwd: this.cwd }),
      )
      return false
    }
    this.userItems = items
    this.say(
      this.paint("dim", `  the session restarted with the flags ${value} needs; the conversation goes on`),
    )
    return true
  }

  private async showSkills(): Promise<void> {
    const skills = this.skills ?? (this.info ?? (await this.loadInfo()))?.skills ?? []
    if (skills.length === 0) return this.say(this.paint("dim", "no skills"))
    this.say(
      ...skills.map(
        (s) =>
          `  ${this.paint("bold", `/${s.name}`)} ${this.paint("dim", `${s.source}${s.manual_only ? " · manual only" : ""}${s.hidden_from_picker ? " · model only" : ""}`)}${s.description ? ` ${s.description}` : ""}`,
      ),
      this.paint("dim", "  /<name> [arguments] runs one: the line goes to the agent as typed"),
    )
  }

  private attach(path: string): void {
    try {
      const { image, path: full, bytes } = readImage(path, this.cwd)
      this.attachments.push({ image, path: full })
      this.updateStatus()
      this.say(
        this.paint(
          "green",
          `📎 ${shortPath(full)} (${compactNumber(bytes)}B) goes with your next prompt${this.info && !this.info.capabilities.images ? " — but this agent takes no images" : ""}`,
        ),
      )
    } catch (error) {
      this.fail(error, "/image <path> takes a PNG, JPEG, GIF or WebP file")
    }
  }

  private expand(arg: string | undefined): void {
    const count = this.renderer.folds()
    const n = arg === undefined ? count : Number(arg)
    const text = Number.isInteger(n) ? this.renderer.expand(n) : undefined
    if (text === undefined) {
      this.say(
        this.paint(
          "dim",
          count === 0 ? "nothing was cut short in this session" : `/expand takes 1 to ${count}`,
        ),
      )
      return
    }
    this.say(
      this.paint("dim", `── /expand ${n}`),
      ...text.replace(/\n$/, "").split("\n"),
      this.paint("dim", `── end of ${n}`),
    )
  }

  private async changeFolder(arg: string | undefined): Promise<void> {
    if (!arg) return this.say(this.paint("dim", `the agent works in ${this.cwd}; /cd <dir> changes it`))
    const target = resolvePath(this.cwd, arg.replace(/^~(?=$|\/)/, process.env.HOME ?? "~"))
    let isDir = false
    try {
      isDir = statSync(target).isDirectory()
    } catch {}
    if (!isDir) return this.say(this.paint("yellow", `${target} is not a folder`))
    if (this.running) return this.say(this.paint("yellow", "cancel the run first (Ctrl-C)"))
    const previous = { cwd: this.cwd, session: this.sessionId }
    this.cwd = target
    this.lastList = undefined
    if (!(await this.newSession())) {
      this.cwd = previous.cwd
      return
    }
    if (previous.session)
      void this.host.call(this.agentId, "closeSession", { sessionId: previous.session }).catch(() => {})
    this.updateStatus()
    this.say(this.paint("green", `the agent now works in ${target} (a new session)`))
  }

  /** `npm run trace -- …` inside the chat, over the workspace's repository: it reads only. */
  private async trace(arg: string | undefined): Promise<void> {
    const argv = (arg ?? "").split(/\s+/).filter(Boolean)
    const outcome = await traceCommand(argv, this.cwd)
    const text = outcome.code === 0 ? outcome.stdout : outcome.stderr
    const markdown = makeMarkdown({
      color: this.options.color,
      width: () => this.options.output.columns ?? 100,
    })
    this.say(outcome.code === 0 ? markdown(text) : this.paint("yellow", text.trimEnd()))
  }

  private plugins(): void {
    const m = this.host.manifest
    const grants = grantLines(m)
    this.say(
      `  ${this.paint("bold", m.id)} ${m.version}${m.name ? ` · ${m.name}` : ""} ${this.paint("dim", `· entry ${m.main} · plugin API ${m.pluginApi}`)}`,
      ...(m.description ? [`  ${this.paint("dim", m.description)}`] : []),
      `  ${this.paint("bold", "grants")}`,
      ...grants.map(
        (g) =>
          `    ${this.paint("cyan", g.grant)}${g.what ? ` ${g.what}` : ""}\n      ${this.paint("dim", `why: ${g.reason}`)}`,
      ),
    )
  }

  private async stopTask(ref: string | undefined): Promise<void> {
    const tasks = this.renderer.tasks()
    const task = ref && /^\d+$/.test(ref) ? tasks[Number(ref) - 1] : tasks.find((t) => t.id === ref)
    if (!task) {
      if (tasks.length === 0) return this.say(this.paint("dim", "no tasks in this session"))
      return this.say(
        ...tasks.map(
          (t, i) =>
            `  ${this.paint("bold", `${i + 1}.`)} ${t.title} ${this.paint("dim", `· ${t.status} · ${t.id}`)}`,
        ),
        this.paint("dim", "  /stop <n> stops one"),
      )
    }
    await this.attempt(undefined, "it may have finished already", () =>
      this.host.call(this.agentId, "cancelTask", { sessionId: this.sessionId!, taskId: task.id }),
    )
  }

  private async usage(): Promise<void> {
    const limits = await this.attempt("Asking for usage…", "usage needs a signed-in account", () =>
      this.host.call(this.agentId, "getUsage"),
    )
    if (!limits) return
    if (limits.windows.length === 0)
      return this.say(this.paint("dim", "no rate limits reported for this account (an API key reports none)"))
    this.say(
      ...limits.windows.map(
        (w) =>
          `  ${w.label.padEnd(12)} ${String(Math.round(w.used * 100)).padStart(3)}%${w.resets_at ? this.paint("dim", ` · resets ${resetTime(w.resets_at, new Date())}`) : ""}`,
      ),
    )
  }

  // -- the two ways to run -------------------------------------------------------

  private completer(line: string): [string[], string] {
    const info = this.info
    const skills = (this.skills ?? info?.skills ?? []).filter((s) => !s.hidden_from_picker).map((s) => s.name)
    const values = (id: string) =>
      info ? this.choices(info, id).flatMap((c) => (c.unavailable ? [] : [c.value, ...c.aliases])) : []
    const [hits, word] = complete(line, {
      commands: COMMANDS,
      skills,
      args: {
        model: values(OPTION.model),
        effort: values(OPTION.effort),
        approval: values(OPTION.approval),
        account: ["add", ...[...this.host.agents.keys()].map((id) => id.replace(/^claude:/, ""))],
        open: (this.lastList ?? []).map((_, i) => String(i + 1)),
        resume: (this.lastList ?? []).map((_, i) => String(i + 1)),
        expand: Array.from({ length: this.renderer.folds() }, (_, i) => String(i + 1)),
      },
      pathArgs: ["image", "cd"],
      cwd: this.cwd,
    })
    if (hits.length <= 1) return [hits, word]
    const common = commonPrefix(hits)
    if (common.length > word.length) return [[common], word]
    // The list is ours to print, above the input line (readline's would scroll it away).
    this.say(this.paint("dim", hits.join("  ")))
    return [[], word]
  }

  private openInput(): Interface {
    const terminal = this.screen.interactive
    const history = this.options.historyFile && terminal ? loadHistory(this.options.historyFile) : []
    const rl = createInterface({
      input: this.options.input,
      output: this.options.output,
      terminal,
      historySize: 500,
      history: [...history].reverse(),
      removeHistoryDuplicates: true,
      ...(terminal && { completer: (line: string) => this.completer(line) }),
    })
    this.rl = rl
    this.screen.attach(rl)
    this.assembler = new LineAssembler(terminal, (message) => {
      if (this.options.historyFile && terminal && !message.includes("\n") && this.pending.length === 0)
        appendHistory(this.options.historyFile, message)
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

  /** The interactive chat, until /quit, Ctrl-C twice or the end of input. Resolves with the exit code. */
  async interactive(): Promise<number> {
    this.mode = "interactive"
    const rl = this.openInput()
    const onSignal = () => this.interrupt()
    process.on("SIGINT", onSignal)
    const code = await new Promise<number>((resolve) => {
      this.quit = resolve
      rl.on("close", () => {
        if (this.screen.interactive) return resolve(0)
        // A script's end: every line it sent, and the runs they started, first.
        void this.settled().then(() =>
          resolve(this.lastOutcome === undefined ? 0 : exitCodeFor(this.lastOutcome)),
        )
      })
      this.updatePrompt()
    })
    process.off("SIGINT", onSignal)
    this.end()
    return code
  }

  /** Run one prompt to its end; the exit code says how it ended. */
  async once(text: string): Promise<number> {
    this.mode = "once"
    this.updatePrompt()
    this.openInput()
    const onSignal = () => this.interrupt()
    process.on("SIGINT", onSignal)
    const code = await new Promise<number>((resolve) => {
      this.quit = resolve
      this.say(`${this.paint(["cyan", "bold"], "›")} ${text}`)
      void (async () => {
        this.screen.spin("Waiting for the model…")
        const accepted = await this.attempt(
          undefined,
          "check the account with `claude auth status`, or use --demo",
          () =>
            this.host.call(this.agentId, "prompt", {
              sessionId: this.sessionId!,
              text,
              itemId: randomUUID(),
            }),
        )
        if (!accepted) return resolve(1)
        if (!this.runEnds.has(accepted.run_id)) this.openRuns.add(accepted.run_id)
        const ended =
          this.runEnds.get(accepted.run_id) ??
          (await new Promise<RunEnded>((r) => this.runWaiters.set(accepted.run_id, r)))
        resolve(exitCodeFor(ended.outcome))
      })()
    })
    process.off("SIGINT", onSignal)
    this.end()
    return code
  }

  /** Stop reading and drawing (the chat is over, or its output went away). */
  end(): void {
    clearTimeout(this.idleTimer)
    this.screen.write(this.renderer.flush())
    this.screen.close()
    this.rl?.close()
    this.unsubscribe()
    this.auto.dispose()
  }
}
