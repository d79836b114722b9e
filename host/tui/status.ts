/**
 * The status line's facts: model, effort, approval mode, account, context
 * used and the workspace, from what the session last said about itself.
 */
import { homedir } from "node:os"
import { basename } from "node:path"
import stringWidth from "string-width"
import type { RunUsage } from "../../sdk/protocol.ts"
import { OPTION } from "./choices.ts"
import type { ChatState } from "./context.ts"
import { compactNumber } from "./text.ts"

export interface StatusFacts {
  readonly model?: string
  readonly effort?: string
  readonly approval?: string
  readonly account: string
  readonly contextUsed?: number
  readonly contextWindow?: number
  readonly cwd: string
  /** Images attached to the next prompt. */
  readonly images?: number
}

const home = homedir()

export const shortPath = (path: string): string =>
  home && (path === home || path.startsWith(`${home}/`)) ? `~${path.slice(home.length)}` : path

type Fact = "model" | "effort" | "approval" | "account" | "context" | "cwd" | "images"

/** The facts in their order on the line. */
const factsOf = (f: StatusFacts): Array<{ readonly key: Fact; readonly text: string }> => {
  const all: Array<{ key: Fact; text: string | undefined }> = [
    // Until the session names one, the CLI's own default runs.
    { key: "model", text: f.model ?? "default model" },
    { key: "effort", text: f.effort && `effort ${f.effort}` },
    { key: "approval", text: f.approval ?? "supervised" },
    { key: "account", text: f.account },
    {
      key: "context",
      text:
        f.contextWindow && f.contextUsed
          ? `context ${compactNumber(f.contextUsed)}/${compactNumber(f.contextWindow)}`
          : undefined,
    },
    { key: "cwd", text: shortPath(f.cwd) },
    { key: "images", text: f.images ? `${f.images} image${f.images === 1 ? "" : "s"} attached` : undefined },
  ]
  return all.filter((x): x is { key: Fact; text: string } => typeof x.text === "string" && x.text !== "")
}

/** What a narrow line gives up, in turn: the context and the workspace's name stay longest. */
const NARROWER: ReadonlyArray<Fact | "cwd name"> = [
  "account",
  "effort",
  "approval",
  "cwd name",
  "images",
  "model",
  "cwd",
]

/** The status line in `width` columns (none: all of it). */
export const statusText = (f: StatusFacts, width = Number.POSITIVE_INFINITY): string => {
  let facts = factsOf(f)
  const join = () => facts.map((x) => x.text).join(" · ")
  for (const step of NARROWER) {
    if (stringWidth(join()) <= width) break
    facts =
      step === "cwd name"
        ? facts.map((x) => (x.key === "cwd" ? { ...x, text: basename(f.cwd) || x.text } : x))
        : facts.filter((x) => x.key !== step)
  }
  return join()
}

/** The status line's facts from what the chat knows: the session's own values, else the agent's defaults. */
export const statusOf = (state: ChatState, lastUsage: RunUsage | undefined) => {
  const options = { ...state.sessionOptions, ...state.sessionInfo?.options }
  const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined)
  const info = state.info ?? state.knownInfo
  const defaultOf = (id: string) => text(info?.options.find((o) => o.id === id)?.default)
  const model = text(options[OPTION.model]) ?? state.sessionInfo?.model ?? defaultOf(OPTION.model)
  const effort = text(options[OPTION.effort]) ?? defaultOf(OPTION.effort)
  const approval = text(options[OPTION.approval]) ?? defaultOf(OPTION.approval)
  const facts: StatusFacts = {
    ...(model !== undefined && { model }),
    ...(effort !== undefined && { effort }),
    ...(approval !== undefined && { approval }),
    account: state.agentId,
    ...(lastUsage?.context_used !== undefined && { contextUsed: lastUsage.context_used }),
    ...(lastUsage?.context_window !== undefined && { contextWindow: lastUsage.context_window }),
    cwd: state.cwd,
    images: state.attachments.length,
  }
  return (width: number) => statusText(facts, width)
}
