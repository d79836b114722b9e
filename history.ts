/**
 * The CLI's stored conversations, as the agent asks for them: the session
 * list (history/session-list.ts), one session's transcript with its subagents and
 * workflows, and the prompts a rewind can go back to. Where the files lie is
 * history/projects.ts; how a transcript is read is history/chain.ts.
 */
import { Effect } from "effect"
import { readChain } from "./history/chain.ts"
import { projectDir, sessionFile } from "./history/projects.ts"
import {
  firstLine,
  isInterruptText,
  localCommandUuids,
  promptOf,
  recordsToItems,
  recordText,
  type StoredRecord,
} from "./records.ts"
import { Fs } from "./sdk/plugin-api.ts"
import { join } from "./sdk/paths.ts"
import type { SessionTranscript } from "./sdk/protocol.ts"
import { chatTitle, titleOfSidecar } from "./history/session-summary.ts"
import { attachSubagents } from "./subagents.ts"
import { notificationsIn } from "./history/task-notifications.ts"

export { type Chain, type ChainOptions, chainOf, readChain } from "./history/chain.ts"
export { encodeCwd, projectDir, projectsDir, sessionFile } from "./history/projects.ts"
export { type ListParams, listSessions, listShardKey } from "./history/session-list.ts"

// ---------------------------------------------------------------------------
// read_session

/**
 * One conversation with its subagents and workflow runs placed in; null when
 * there is no such file. `upTo`: only the conversation up to that message
 * (what a fork cut there copies).
 */
export const readSession: (
  configDir: string,
  cwd: string,
  cliSessionId: string,
  upTo?: string,
) => Effect.Effect<SessionTranscript | null, never, Fs> = Effect.fn("history.readSession")(function* (
  configDir: string,
  cwd: string,
  cliSessionId: string,
  upTo?: string,
) {
  const dir = yield* projectDir(configDir, cwd)
  const main = yield* readMainChat(sessionFile(dir, cliSessionId), upTo)
  if (main === null) return null
  const items = yield* attachSubagents(main.items, main.notifications, join(dir, cliSessionId))
  const sidecar = yield* Fs.use((fs) => fs.read(join(dir, cliSessionId, "custom-title.json")))
  const title = chatTitle({
    sidecar: titleOfSidecar(sidecar),
    custom: main.customTitle,
    ai: main.aiTitle,
    prompt: main.prompt === "" ? undefined : main.prompt,
  })
  return { session_id: cliSessionId, items, ...(title === undefined ? {} : { title }) }
})

/** A conversation's title by the list's rules (up to `upTo`, as a fork copies it); undefined without one. */
export const readTitle = (
  configDir: string,
  cwd: string,
  cliSessionId: string,
  upTo?: string,
): Effect.Effect<string | undefined, never, Fs> =>
  Effect.gen(function* () {
    const dir = yield* projectDir(configDir, cwd)
    const chain = yield* readChain(sessionFile(dir, cliSessionId))
    const first = firstPromptRecord(cutAfter(chain.records, upTo))
    const prompt = first === undefined ? undefined : promptOf(first)?.text
    const sidecar = yield* Fs.use((fs) => fs.read(join(dir, cliSessionId, "custom-title.json")))
    return chatTitle({
      sidecar: titleOfSidecar(sidecar),
      custom: chain.customTitle,
      ai: chain.aiTitle,
      prompt: prompt === undefined || prompt === "" ? undefined : firstLine(prompt),
    })
  })

/**
 * The main chat's items and what the rest of the read needs of its records
 * (notifications, the title's parts): the records themselves are let go
 * before its subagents are read.
 */
const readMainChat = (path: string, upTo?: string) =>
  Effect.map(readChain(path), (chain) => {
    if (!chain.found) return null
    const records = cutAfter(chain.records, upTo)
    const first = firstPromptRecord(records)
    const firstPrompt = first === undefined ? undefined : promptOf(first)?.text
    return {
      items: recordsToItems(records),
      notifications: notificationsIn(records),
      prompt: firstPrompt === undefined ? undefined : firstLine(firstPrompt),
      customTitle: chain.customTitle,
      aiTitle: chain.aiTitle,
    }
  })

/** The chain up to the message `upTo` (kept); all of it without one or when it is not there. */
const cutAfter = <R extends { readonly uuid?: unknown }>(records: R[], upTo: string | undefined): R[] => {
  if (upTo === undefined) return records
  const at = records.findIndex((r) => r.uuid === upTo)
  return at < 0 ? records : records.slice(0, at + 1)
}

// ---------------------------------------------------------------------------
// Prompts and rewind points
//
// One lookup (`rewindIn`) over one read of the conversation (`readPrompts`);
// the other functions are views of it for a caller that holds only ids.

/** The user records that are prompts, in conversation order (what `sent` indexes count). */
export const promptRecords = (records: ReadonlyArray<StoredRecord>): StoredRecord[] => {
  const localCommands = localCommandUuids(records)
  return records.filter(
    (r) =>
      r.type === "user" &&
      !isToolResult(r) &&
      !isInterruptText(recordText(r)) &&
      !localCommands.has(r.uuid as string) &&
      promptOf(r) !== null,
  )
}

/**
 * `promptRecords(records)[0]` without reading the records past it (the
 * title needs only the first prompt). Whether a record is a control
 * request's command depends only on the records before it and the one
 * after it (its output), so the prefix up to that one decides.
 */
export const firstPromptRecord = (records: ReadonlyArray<StoredRecord>): StoredRecord | undefined => {
  for (let at = 0; at < records.length; at++) {
    const r = records[at] as StoredRecord
    if (r.type !== "user" || isToolResult(r) || isInterruptText(recordText(r)) || promptOf(r) === null)
      continue
    // Only a command can be a control request's: a plain prompt needs no look around it.
    if (!recordText(r).trimStart().startsWith("<command-name>")) return r
    if (!localCommandUuids(records.slice(0, at + 2)).has(r.uuid as string)) return r
  }
  return undefined
}

const isToolResult = (record: StoredRecord): boolean => {
  const message = record.message
  if (typeof message !== "object" || message === null) return false
  const content = (message as { content?: unknown }).content
  return Array.isArray(content) && content.some((b) => (b as { type?: unknown })?.type === "tool_result")
}

/** A stored conversation's prompts. */
export interface StoredPrompts {
  /** False when the file is missing or not granted. */
  readonly found: boolean
  readonly prompts: ReadonlyArray<StoredRecord>
}

/** A stored conversation's prompts (`upTo`: of the conversation up to that message). */
export const readPrompts: (
  configDir: string,
  cwd: string,
  cliSessionId: string,
  upTo?: string,
) => Effect.Effect<StoredPrompts, never, Fs> = Effect.fn("history.readPrompts")(function* (
  configDir: string,
  cwd: string,
  cliSessionId: string,
  upTo?: string,
) {
  const dir = yield* projectDir(configDir, cwd)
  const chain = yield* readChain(sessionFile(dir, cliSessionId))
  return { found: chain.found, prompts: promptRecords(cutAfter(chain.records, upTo)) }
})

/** Where rewinding to just before a prompt resumes, and the prompts it keeps. */
export interface RewindPoint {
  /** The `--resume-session-at` value; absent: the prompt opened the conversation and nothing is left. */
  readonly resumeAt?: string
  /** The record uuids of the prompts before it: the ones the rewind keeps. */
  readonly kept: ReadonlySet<string>
}

/**
 * Where to resume so that the conversation ends just before the prompt `ref`
 * names (its record uuid, or its index among the prompts, as older session
 * state kept it): the prompt's parent, since `--resume-session-at` keeps the
 * message it names. Undefined when `ref` is not one of the conversation's
 * prompts (an assistant record, a prompt of a rewound branch).
 */
export const rewindIn = (
  stored: StoredPrompts,
  ref: string | number,
): RewindPoint | RewindRefused | undefined => {
  const prompts = stored.prompts
  const at =
    typeof ref === "number" ? (ref < prompts.length ? ref : -1) : prompts.findIndex((r) => r.uuid === ref)
  const target = prompts[at]
  if (target === undefined) return undefined
  const kept = new Set(prompts.slice(0, at).map((r) => r.uuid as string))
  // Its parent may be an attachment: --resume-session-at accepts that too
  // (verified on 2.1.332: the resumed request held exactly the earlier turns).
  if (typeof target.parentUuid === "string") return { resumeAt: target.parentUuid, kept }
  // Only the first prompt rewinds to nothing; a later one with no parent would drop the turns before it.
  return at === 0 ? { kept } : { refused: `the message ${target.uuid} has no parent to resume at` }
}

/** A prompt of the conversation that cannot be rewound to (no parent, and not the first). */
export interface RewindRefused {
  readonly refused: string
}

/** The last message of the conversation as the chain rule reads it (the branch a chat is on). */
export const readLeaf: (
  configDir: string,
  cwd: string,
  cliSessionId: string,
) => Effect.Effect<string | undefined, never, Fs> = Effect.fn("history.readLeaf")(function* (
  configDir: string,
  cwd: string,
  cliSessionId: string,
) {
  const dir = yield* projectDir(configDir, cwd)
  const chain = yield* readChain(sessionFile(dir, cliSessionId))
  const leaf = chain.records.findLast((r) => r.type === "user" || r.type === "assistant")?.uuid
  return typeof leaf === "string" ? leaf : undefined
})

/** The uuid of the conversation's `index`-th prompt (0-based), if it exists. */
export const promptUuidAt = (
  configDir: string,
  cwd: string,
  cliSessionId: string,
  index: number,
): Effect.Effect<string | undefined, never, Fs> =>
  Effect.map(readPrompts(configDir, cwd, cliSessionId), ({ prompts }) => {
    const uuid = prompts[index]?.uuid
    return typeof uuid === "string" ? uuid : undefined
  })

/** How many prompts the conversation holds (the index the next prompt will get). */
export const promptCount = (
  configDir: string,
  cwd: string,
  cliSessionId: string,
): Effect.Effect<number, never, Fs> =>
  Effect.map(readPrompts(configDir, cwd, cliSessionId), ({ prompts }) => prompts.length)

export type RewindTarget =
  | { readonly resumeAt: string }
  | { readonly toNothing: true }
  | { readonly error: string }

/** `rewindIn` for the prompt `userRecordUuid`, with an error that says what is missing. */
export const rewindTarget = (
  configDir: string,
  cwd: string,
  cliSessionId: string,
  userRecordUuid: string,
): Effect.Effect<RewindTarget, never, Fs> =>
  Effect.map(readPrompts(configDir, cwd, cliSessionId), (stored): RewindTarget => {
    if (!stored.found) return { error: `no stored conversation ${cliSessionId}` }
    const point = rewindIn(stored, userRecordUuid)
    if (point === undefined) return { error: `no prompt ${userRecordUuid} in conversation ${cliSessionId}` }
    if ("refused" in point) return { error: point.refused }
    return point.resumeAt === undefined ? { toNothing: true } : { resumeAt: point.resumeAt }
  })
