/**
 * The chat: one agent session driven from the terminal. Typed lines become
 * prompts (steering a run in progress), answers to approvals and questions,
 * or slash commands for the rest of the agent protocol. Events of the
 * session are rendered as they come (render.ts) on a shared screen
 * (screen.ts). Ctrl-C cancels the run; twice quits.
 */
import { randomUUID } from "node:crypto"
import { createInterface, type Interface } from "node:readline"
import { styleText } from "node:util"
import type { Host } from "../host.ts"
import type {
  AgentEvent,
  AgentInfo,
  ApprovalDecision,
  Question,
  RunOutcome,
  SessionInfoPayload,
  SessionSummary,
  SkillInfo,
  TranscriptItem,
} from "../../sdk/protocol.ts"
import { type AutoContinue, type AutoContinueMode, makeAutoContinue } from "../auto-continue.ts"
import { answerFor, parseApproval, parseQuestionReply } from "./answers.ts"
import { compactNumber, makeRenderer, type Renderer, resetTime } from "./render.ts"
import { Screen } from "./screen.ts"

type Format = Parameters<typeof styleText>[0]

export interface ChatOptions {
  readonly host: Host
  readonly agentId: string
  /** The workspace: the session's cwd. */
  readonly cwd: string
  readonly input: NodeJS.ReadableStream & { isTTY?: boolean }
  readonly output: NodeJS.WritableStream & { isTTY?: boolean }
  readonly color: boolean
  /** Option values for new sessions (model, effort, approval_mode). */
  readonly sessionOptions?: Readonly<Record<string, string | boolean>>
  /** Approvals answered at the prompt, or by policy (one-shot runs). Default "ask". */
  readonly approvals?: "ask" | "allow" | "deny"
  /** Questions answered at the prompt, or with each question's first option. Default "ask". */
  readonly questions?: "ask" | "first"
  /** Why approvals are answered by policy, shown beside each automatic answer. */
  readonly policyReason?: string
  /** Send one "continue" when a blocked run's usage window reopens (host/auto-continue.ts). Default off. */
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

const OPTION = { model: "model", effort: "effort", approval: "approval_mode" } as const
const SECOND_CTRL_C_MS = 3000
const IDLE_SPINNER_MS = 600

const HELP = [
  ["/sessions", "list the stored sessions of this workspace"],
  ["/open <n|id>", "show a stored session"],
  ["/resume <n|id>", "continue a stored session"],
  ["/new", "start a new session"],
  ["/fork", "fork this session into a new one"],
  ["/rewind [n]", "list your prompts, or rewind to just before prompt n"],
  ["/account [id]", "list the accounts, or switch to one"],
  ["/model [value]", "list the models, or choose one"],
  ["/effort [level]", "list the effort levels, or choose one"],
  ["/approval [mode]", "list the approval modes, or choose one"],
  ["/skills", "list the skills"],
  ["/tasks", "show the task tree; /stop <n|id> stops a task"],
  ["/usage", "show the rate limits"],
  ["/cancel", "cancel the run (or Ctrl-C)"],
  ["/quit", "leave (or Ctrl-C twice)"],
] as const

const oneLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split("\n").find((l) => l.trim() !== "") ??
  "unknown error"

export class Chat {
  private readonly host: Host
  private readonly screen: Screen
  private readonly cwd: string
  private agentId: string
  private info: AgentInfo | undefined
  private sessionId: string | undefined
  private renderer: Renderer
  /** Events of the agent held while a session opens (its id is not known yet). */
  private held: AgentEvent[] | undefined
  private runId: string | undefined
  private readonly runEnds = new Map<string, Extract<AgentEvent, { type: "RunEnded" }>>()
  private readonly runWaiters = new Map<string, (e: Extract<AgentEvent, { type: "RunEnded" }>) => void>()
  private readonly pending: Pending[] = []
  private userItems: Array<{ id: string; text: string }> = []
  private lastList: ReadonlyArray<SessionSummary> = []
  private skills: ReadonlyArray<SkillInfo> | undefined
  private sessionInfo: SessionInfoPayload | undefined
  private rl: Interface | undefined
  private mode: "interactive" | "once" = "interactive"
  private lastCtrlC = 0
  private idleTimer: NodeJS.Timeout | undefined
  private work: Promise<void> = Promise.resolve()
  private quit: ((code: number) => void) | undefined
  private readonly unsubscribe: () => void
  private readonly auto: AutoContinue

  constructor(private readonly options: ChatOptions) {
    this.host = options.host
    this.agentId = options.agentId
    this.cwd = options.cwd
    this.screen = new Screen({ output: options.output, animate: options.output.isTTY === true })
    this.renderer = this.newRenderer()
    this.auto = makeAutoContinue({
      mode: options.autoContinue ?? "off",
      send: (sessionId, text) => (sessionId === this.sessionId ? this.send(text) : undefined),
      notify: (sessionId, text) =>
        sessionId === this.sessionId ? this.say(this.paint("dim", `  ⏱ ${text}`)) : undefined,
    })
    this.unsubscribe = this.host.events.subscribe((h) => {
      if (h.kind === "agent_event" && h.agentId === this.agentId) this.onEvent(h.event)
      if (h.kind === "info_changed" && h.agentId === this.agentId) this.info = undefined
    })
  }

  private paint(format: Format, text: string): string {
    return this.options.color && text !== "" ? styleText(format, text, { validateStream: false }) : text
  }

  private newRenderer(): Renderer {
    return makeRenderer({ color: this.options.color })
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

  /** Ask the agent about itself and open a new session. false when that failed. */
  async start(): Promise<boolean> {
    const info = await this.loadInfo()
    if (!info) return false
    if (info.status !== "Ready") {
      this.say(
        this.paint(
          "yellow",
          `! ${info.name}: ${info.status}${info.statusMessage ? ` — ${info.statusMessage}` : ""}`,
        ),
        this.paint("dim", "  run `claude auth login`, switch with /account, or start with --demo"),
      )
    }
    return this.newSession()
  }

  private async loadInfo(): Promise<AgentInfo | undefined> {
    const info = await this.attempt(
      "Checking Claude Code…",
      "is `claude --version` working? try --demo",
      () => this.host.call(this.agentId, "initialize"),
    )
    if (info) this.info = info
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
    return true
  }

  private switchTo(sessionId: string): void {
    this.sessionId = sessionId
    this.renderer = this.newRenderer()
    this.runId = undefined
    this.pending.length = 0
    this.updatePrompt()
  }

  private newSession(): Promise<boolean> {
    return this.open("Starting Claude Code…", "check `claude --version`, or start with --demo", () =>
      this.host.call(this.agentId, "createSession", {
        cwd: this.cwd,
        ...(this.options.sessionOptions && { options: this.options.sessionOptions }),
      }),
    ).then((ok) => {
      if (ok) this.userItems = []
      return ok
    })
  }

  private resolveSession(ref: string | undefined): string | undefined {
    if (!ref) return undefined
    if (/^\d+$/.test(ref)) return this.lastList[Number(ref) - 1]?.session_id
    return this.lastList.find((s) => s.session_id.startsWith(ref))?.session_id ?? ref
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
        this.runId = e.run_id
        break
      case "RunEnded":
        if (this.runId === e.run_id) this.runId = undefined
        this.pending.length = 0
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
    this.armIdleSpinner()
  }

  /** While a run is open and nothing arrives for a moment, show that it is still working. */
  private armIdleSpinner(): void {
    clearTimeout(this.idleTimer)
    if (this.runId === undefined || this.pending.length > 0) return
    this.idleTimer = setTimeout(() => {
      if (this.runId !== undefined && this.pending.length === 0)
        this.screen.spin("Working…  (Ctrl-C cancels)")
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

  private answerApproval(approvalId: string, decision: ApprovalDecision) {
    return this.attempt(undefined, "the request may have been withdrawn; the run goes on", () =>
      this.host.call(this.agentId, "answerApproval", { sessionId: this.sessionId!, approvalId, decision }),
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
    if (this.mode === "once") return undefined
    if (this.runId !== undefined)
      // A pipe gets no prompt while a run streams: it would repeat between every block.
      return this.options.output.isTTY ? `${this.paint("dim", "running · type to steer")} › ` : undefined
    return `${this.paint(["cyan", "bold"], "›")} `
  }

  private updatePrompt(): void {
    this.screen.setPrompt(this.promptText())
  }

  // -- input ---------------------------------------------------------------------

  private onLine(line: string): void {
    this.screen.lineEntered()
    // Answers go first, so an approval is never stuck behind a slow command.
    const head = this.pending[0]
    if (head) {
      this.answerPending(head, line)
      this.updatePrompt()
      return
    }
    this.work = this.work.then(() => this.handle(line.trim())).then(() => this.updatePrompt())
  }

  private answerPending(head: Pending, line: string): void {
    if (head.kind === "approval") {
      const decision = parseApproval(line)
      if (!decision || (decision === "allow_always" && !head.canAlways)) {
        this.say(
          this.paint(
            "yellow",
            `  answer a (allow), d (deny)${head.canAlways ? " or A (always for this session)" : ""}`,
          ),
        )
        return
      }
      this.pending.shift()
      void this.answerApproval(head.id, decision)
      return
    }
    const question = head.questions[Object.keys(head.answers).length]
    if (!question) return
    const reply = parseQuestionReply(question, line)
    if (!reply) {
      this.say(this.paint("yellow", "  type an option number, or your own answer"))
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
    if (this.runId !== undefined) {
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

  private async send(text: string): Promise<void> {
    if (!this.sessionId && !(await this.newSession())) return
    this.auto.sent(this.sessionId!)
    const itemId = randomUUID()
    if (this.runId === undefined) this.screen.spin("Waiting for the model…")
    const accepted = await this.attempt(undefined, "try again, or /new for a fresh session", () =>
      this.host.call(this.agentId, "prompt", { sessionId: this.sessionId!, text, itemId }),
    )
    if (!accepted) return
    this.userItems.push({ id: itemId, text })
    if (accepted.steered) this.say(this.paint("dim", "  ↳ added to the running turn"))
    if (!this.runEnds.has(accepted.run_id) && this.runId === undefined) this.runId = accepted.run_id
  }

  private async handle(line: string): Promise<void> {
    if (line === "") return
    if (!line.startsWith("/")) return this.send(line)
    const [command = "", ...rest] = line.slice(1).split(/\s+/)
    const arg = rest.join(" ").trim() || undefined
    switch (command) {
      case "help":
      case "?":
        return this.say(
          ...HELP.map(([c, d]) => `  ${this.paint("bold", c.padEnd(18))} ${d}`),
          this.paint(
            "dim",
            "  At an approval: a allow · d deny · A always for this session. At a question: a number or text.",
          ),
        )
      case "quit":
      case "exit":
      case "q":
        return this.quit?.(0)
      case "cancel":
        if (this.runId === undefined) return this.say(this.paint("dim", "no run to cancel"))
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
        return this.account(arg)
      case "model":
        return this.option(OPTION.model, arg)
      case "effort":
        return this.option(OPTION.effort, arg)
      case "approval":
        return this.option(OPTION.approval, arg)
      case "skills":
        return this.showSkills()
      case "tasks":
        return this.say(this.renderer.taskTree().trimEnd() || this.paint("dim", "no tasks in this session"))
      case "stop":
        return this.stopTask(arg)
      case "usage":
        return this.usage()
      default:
        return this.say(
          `${this.paint("red", `✗ unknown command /${command}`)}${this.paint("dim", " — /help lists them")}`,
        )
    }
  }

  // -- commands ------------------------------------------------------------------

  private async listSessions(): Promise<void> {
    const page = await this.attempt("Reading sessions…", "is the workspace readable?", () =>
      this.host.call(this.agentId, "listSessions", { cwd: this.cwd, limit: 20 }),
    )
    if (!page) return
    this.lastList = page.sessions
    if (page.sessions.length === 0)
      return this.say(this.paint("dim", "no stored sessions for this workspace"))
    this.say(
      ...page.sessions.map((s, i) => {
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
    const sessionId = this.resolveSession(ref)
    if (!sessionId) {
      this.say(this.paint("yellow", "name a session: /sessions lists them, then /open <n> or /open <id>"))
      return undefined
    }
    const transcript = await this.attempt("Reading the session…", "check the id with /sessions", () =>
      this.host.call(this.agentId, "readSession", { sessionId, cwd: this.cwd }),
    )
    return (
      transcript && {
        id: sessionId,
        items: transcript.items,
        ...(transcript.title !== undefined && { title: transcript.title }),
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
    if (this.runId !== undefined) return this.say(this.paint("yellow", "cancel the run first (Ctrl-C)"))
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
    if (!arg)
      return this.say(
        ...ids.map((id) => `  ${id === this.agentId ? this.paint("cyan", "●") : " "} ${id}`),
        this.paint("dim", "  /account <id> switches (a new session)"),
      )
    const target = ids.find((id) => id === arg || id === `claude:${arg}`)
    if (!target) return this.say(this.paint("yellow", `no account ${arg}; have: ${ids.join(", ")}`))
    const previous = { agentId: this.agentId, sessionId: this.sessionId }
    this.agentId = target
    this.info = undefined
    this.skills = undefined
    if (!(await this.start())) {
      this.agentId = previous.agentId
      this.sessionId = previous.sessionId
      return
    }
    if (previous.sessionId)
      void this.host.call(previous.agentId, "closeSession", { sessionId: previous.sessionId }).catch(() => {})
    this.say(this.paint("green", `switched to ${target}`))
  }

  private async option(optionId: string, value: string | undefined): Promise<void> {
    const info = this.info ?? (await this.loadInfo())
    if (!info) return
    const option = info.options.find((o) => o.id === optionId)
    const choices =
      optionId === OPTION.model
        ? info.models.map((m) => ({ value: m.value, label: m.label, aliases: m.aliases ?? [] }))
        : (option?.choices ?? []).map((c) => ({
            value: c.value,
            label: c.label,
            aliases: [] as ReadonlyArray<string>,
          }))
    const current =
      this.sessionInfo?.options?.[optionId] ??
      (optionId === OPTION.model ? this.sessionInfo?.model : undefined) ??
      option?.default
    if (value === undefined)
      return this.say(
        ...choices.map(
          (c) =>
            `  ${c.value === current ? this.paint("cyan", "●") : " "} ${this.paint("bold", c.value)} ${this.paint("dim", c.label)}`,
        ),
        this.paint("dim", `  /${optionId === OPTION.approval ? "approval" : optionId} <value> chooses`),
      )
    const chosen = choices.find(
      (c) => c.value === value || c.aliases.includes(value) || c.label.toLowerCase() === value.toLowerCase(),
    )
    if (choices.length > 0 && !chosen)
      return this.say(
        this.paint("yellow", `unknown value ${value}; one of: ${choices.map((c) => c.value).join(", ")}`),
      )
    if (!this.sessionId) return this.say(this.paint("yellow", "no session"))
    const ok = await this.attempt(undefined, "the session may have ended; /new starts one", () =>
      this.host
        .call(this.agentId, "setOption", {
          sessionId: this.sessionId!,
          optionId,
          value: chosen?.value ?? value,
        })
        .then(() => true),
    )
    if (!ok) return
    this.sessionInfo = {
      ...this.sessionInfo,
      options: { ...this.sessionInfo?.options, [optionId]: chosen?.value ?? value },
    }
    const later = option?.appliesAtNextStart ? " (applies at the next start)" : ""
    this.say(this.paint("green", `${option?.label ?? optionId}: ${chosen?.value ?? value}${later}`))
  }

  private async showSkills(): Promise<void> {
    const skills = this.skills ?? (this.info ?? (await this.loadInfo()))?.skills ?? []
    if (skills.length === 0) return this.say(this.paint("dim", "no skills"))
    this.say(
      ...skills.map(
        (s) =>
          `  ${this.paint("bold", `/${s.name}`)} ${this.paint("dim", `${s.source}${s.manual_only ? " · manual only" : ""}${s.hidden_from_picker ? " · model only" : ""}`)}${s.description ? ` ${s.description}` : ""}`,
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
      return this.say(this.paint("dim", "no rate limits reported for this account"))
    this.say(
      ...limits.windows.map(
        (w) =>
          `  ${w.label.padEnd(12)} ${String(Math.round(w.used * 100)).padStart(3)}%${w.resets_at ? this.paint("dim", ` · resets ${resetTime(w.resets_at, new Date())}`) : ""}`,
      ),
    )
  }

  // -- the two ways to run -------------------------------------------------------

  private openInput(): Interface {
    const rl = createInterface({
      input: this.options.input,
      output: this.options.output,
      terminal: this.options.input.isTTY === true && this.options.output.isTTY === true,
      historySize: 200,
    })
    this.rl = rl
    this.screen.attach(rl)
    rl.on("line", (line) => this.onLine(line))
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
      rl.on("close", () => resolve(0))
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
        const ended =
          this.runEnds.get(accepted.run_id) ??
          (await new Promise<Extract<AgentEvent, { type: "RunEnded" }>>((r) =>
            this.runWaiters.set(accepted.run_id, r),
          ))
        resolve(exitCodeFor(ended.outcome))
      })()
    })
    process.off("SIGINT", onSignal)
    this.end()
    return code
  }

  private end(): void {
    clearTimeout(this.idleTimer)
    this.screen.write(this.renderer.flush())
    this.screen.close()
    this.rl?.close()
    this.unsubscribe()
    this.auto.dispose()
  }
}
