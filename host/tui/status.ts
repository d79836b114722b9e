/**
 * The status line's facts: model, effort, approval mode, account, context
 * used and the workspace, from what the session last said about itself.
 */
import { homedir } from "node:os"
import { compactNumber } from "./render.ts"

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
