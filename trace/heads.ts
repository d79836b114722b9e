/**
 * Where the tracker learns which repository a folder is in, and what HEAD
 * named there when an event happened.
 *
 * The tracker works through a session's events behind the session (each
 * event may cost git calls, and a loaded machine makes them slow), so HEAD
 * read when the tracker reaches an event can already hold what came after
 * it: the agent's next commit taken for the run's starting point (never
 * noted), or the person's commit after a run taken for the run's own. So an
 * event that needs HEAD has it read the moment it is fed, beside the queue,
 * and the tracker uses that reading when it gets there.
 *
 * Rules: a git call that never answered is not an answer (a lookup is asked
 * again, and never remembered as "no repository"; a HEAD with no answer
 * leaves the last one seen); the session's own folder, when it is no
 * repository, is asked again after a command that ran git (the agent may
 * `git init` it).
 */
import { Effect } from "effect"
import type { AgentEvent, ToolKind } from "../sdk/protocol.ts"
import { writtenBy } from "./fingerprints.ts"
import { type Git, headOf, repositoryOf, UNKNOWN, type Unknown } from "./git.ts"

export interface Repository {
  readonly root: string
  /** The folder's path inside it: `""` or `dir/`. */
  readonly prefix: string
}

/** Tool kinds that cannot commit: no HEAD check after them. */
export const QUIET_KINDS: ReadonlySet<ToolKind> = new Set(["read", "search", "think", "fetch"])

/** Repository root → what HEAD named when the event happened. */
export type HeadsAt = ReadonlyMap<string, string | undefined | Unknown>

/** How many times a lookup is asked when git gives no answer at all (a loaded machine's timeout). */
const ASKS = 3

export const repositoryLookup = (git: Git) => {
  const repos = new Map<string, Repository | null>()
  const ask = (dir: string) =>
    Effect.gen(function* () {
      for (let asked = 1; ; asked++) {
        const found = yield* repositoryOf(git, dir)
        if (found !== UNKNOWN || asked === ASKS) return found
      }
    })
  /**
   * The repository `dir` is in; each folder asked of git once. "None" is
   * remembered too, the session's own folder's included (asking at every
   * prompt would put a git start beside each prompt's first answer), until
   * `mayHaveBecomeOne` says a command could have made it one.
   */
  const repositoryFor = (dir: string) =>
    Effect.gen(function* () {
      const known = repos.get(dir)
      if (known !== undefined) return known ?? undefined
      const found = yield* ask(dir)
      if (found === UNKNOWN) return undefined
      repos.set(dir, found ?? null)
      return found
    })
  /** The session folder's repository if it was found already (no git call). */
  const knownOwn = (cwd: string) => repos.get(cwd) ?? undefined
  /** After a command that ran git (`git init`, `git clone`): a folder known to be none is asked again. */
  const mayHaveBecomeOne = (cwd: string) => {
    if (repos.get(cwd) === null) repos.delete(cwd)
  }
  return { repositoryFor, knownOwn, mayHaveBecomeOne }
}

/**
 * The repositories whose HEAD is followed: every one edited, and the
 * session's own (looked for at a run's start only: a folder that is no
 * repository costs no git call per tool call).
 */
export const watchedRoots = (
  lookup: ReturnType<typeof repositoryLookup>,
  edited: ReadonlyArray<string>,
  cwd: string | undefined,
  lookForOwn: boolean,
) =>
  Effect.gen(function* () {
    const roots = new Set(edited)
    const own =
      cwd === undefined ? undefined : lookForOwn ? yield* lookup.repositoryFor(cwd) : lookup.knownOwn(cwd)
    if (own !== undefined) roots.add(own.root)
    return roots
  })

/** Does the tracker look at HEAD for this event (a run's start or end, a tool call that could commit)? */
export const readsHead = (event: AgentEvent): boolean =>
  event.type === "RunStarted" ||
  event.type === "RunEnded" ||
  (event.type === "ToolCallFinished" &&
    writtenBy(event.call) === undefined &&
    !QUIET_KINDS.has(event.call.kind) &&
    event.call.kind !== "edit")

/** HEAD now in each of `roots`. */
export const headsNow = (git: Git, roots: Iterable<string>): Effect.Effect<HeadsAt> =>
  Effect.gen(function* () {
    const out = new Map<string, string | undefined | Unknown>()
    for (const root of roots) out.set(root, yield* headOf(git, root))
    return out
  })
