/**
 * The status line's facts: model, effort, approval mode, account, context
 * used and the workspace, from what the session last said about itself.
 */
import { homedir } from "node:os"
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

export const statusText = (f: StatusFacts): string =>
  [
    // Until the session names one, the CLI's own default runs.
    f.model ?? "default model",
    f.effort && `effort ${f.effort}`,
    f.approval ?? "supervised",
    f.account,
    f.contextWindow && f.contextUsed
      ? `context ${compactNumber(f.contextUsed)}/${compactNumber(f.contextWindow)}`
      : undefined,
    shortPath(f.cwd),
    f.images ? `${f.images} image${f.images === 1 ? "" : "s"} attached` : undefined,
  ]
    .filter((s): s is string => typeof s === "string" && s !== "")
    .join(" · ")

/** The status line's facts from what the chat knows: the session's own values, else the agent's defaults. */
export const statusOf = (state: ChatState, lastUsage: RunUsage | undefined): string => {
  const options = { ...state.sessionOptions, ...state.sessionInfo?.options }
  const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined)
  const info = state.info ?? state.knownInfo
  const defaultOf = (id: string) => text(info?.options.find((o) => o.id === id)?.default)
  const model = text(options[OPTION.model]) ?? state.sessionInfo?.model ?? defaultOf(OPTION.model)
  const effort = text(options[OPTION.effort]) ?? defaultOf(OPTION.effort)
  const approval = text(options[OPTION.approval]) ?? defaultOf(OPTION.approval)
  return statusText({
    ...(model !== undefined && { model }),
    ...(effort !== undefined && { effort }),
    ...(approval !== undefined && { approval }),
    account: state.agentId,
    ...(lastUsage?.context_used !== undefined && { contextUsed: lastUsage.context_used }),
    ...(lastUsage?.context_window !== undefined && { contextWindow: lastUsage.context_window }),
    cwd: state.cwd,
    images: state.attachments.length,
  })
}
