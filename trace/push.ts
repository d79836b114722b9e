/**
 * Pushing `refs/notes/agent-trace` after a `git push` the agent ran (opt-in).
 *
 * Rules:
 * - the remote is the command's, else the branch's push remote
 *   (`branch.<b>.pushRemote`, `remote.pushDefault`, `branch.<b>.remote`, `origin`);
 * - dry runs, deletions, mirrors, tag-only pushes and pushes that already name
 *   `refs/notes` push no notes;
 * - never with `+`: when the remote refuses because its notes moved, its notes
 *   are fetched into `refs/notes/agent-trace-incoming-<random>`, merged with
 *   `cat_sort_uniq` (one record per line, so both sides' records survive), the
 *   temporary ref is deleted and the push tried once more;
 * - every git call of one push shares one deadline.
 */
import { Effect } from "effect"
import { parse as shellParse } from "shell-quote"
import type { ToolCall } from "../sdk/protocol.ts"
import { asRecord, asString } from "../values.ts"
import { type Git, type GitResult, NOTES_NAME, NOTES_REF } from "./git.ts"

export interface PushSettings {
  readonly enabled: boolean
  readonly timeoutMs: number
}

export interface PushCommand {
  /** `-C <dir>` given to git, relative to the command's folder. */
  readonly dir?: string
  /** The remote the command named; absent: the branch's push remote. */
  readonly remote?: string
}

const OPTIONS_WITH_VALUE = new Set(["--repo", "-o", "--push-option", "--receive-pack", "--exec"])
const SKIPPING_FLAGS = new Set(["-n", "--dry-run", "-d", "--delete", "--mirror"])

/** The words of each simple command in a shell line (operators split them; anything odd ends a word list). */
const simpleCommands = (command: string): string[][] => {
  const commands: string[][] = [[]]
  for (const token of shellParse(command)) {
    if (typeof token === "string") commands[commands.length - 1]?.push(token)
    else commands.push([])
  }
  return commands.filter((words) => words.length > 0)
}

/** One `git … push …`: the notes to push, or undefined when it pushes none (or is no push). */
const pushOf = (words: ReadonlyArray<string>): PushCommand | undefined => {
  let i = 0
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!)) i++ // VAR=value prefixes
  if (words[i] !== "git") return undefined
  i++
  let dir: string | undefined
  for (; i < words.length && words[i]!.startsWith("-"); i++) {
    const word = words[i]!
    if (word === "-C") dir = dir === undefined ? words[++i] : `${dir}/${words[++i]}`
    else if (word === "-c" || word === "--git-dir" || word === "--work-tree") i++
  }
  if (words[i] !== "push") return undefined
  const positional: string[] = []
  let tagsOnly = false
  for (i++; i < words.length; i++) {
    const word = words[i]!
    if (SKIPPING_FLAGS.has(word)) return undefined
    if (word === "--tags") tagsOnly = true
    else if (OPTIONS_WITH_VALUE.has(word)) i++
    else if (word.startsWith("--repo=")) positional.unshift(word.slice("--repo=".length))
    else if (!word.startsWith("-")) positional.push(word)
  }
  const [remote, ...refWords] = positional
  // `tag <name>` is git's spelling of refs/tags/<name>.
  const refspecs = refWords.flatMap((word, index) =>
    word === "tag" ? [] : refWords[index - 1] === "tag" ? [`refs/tags/${word}`] : [word],
  )
  if (refspecs.some((spec) => spec.startsWith(":") || spec.includes("refs/notes"))) return undefined
  const destination = (spec: string) => spec.replace(/^\+/, "").split(":").at(-1) ?? ""
  const onlyTags = refspecs.length > 0 && refspecs.every((spec) => destination(spec).startsWith("refs/tags/"))
  if (onlyTags || (tagsOnly && refspecs.length === 0)) return undefined
  return { ...(dir === undefined ? {} : { dir }), ...(remote === undefined ? {} : { remote }) }
}

/** Every push in a shell command line that should carry the notes along. */
export const pushesIn = (command: string): PushCommand[] =>
  simpleCommands(command).flatMap((words) => {
    const push = pushOf(words)
    return push === undefined ? [] : [push]
  })

export type PushOutcome =
  | { readonly kind: "pushed"; readonly merged: boolean }
  | { readonly kind: "nothing" }
  | { readonly kind: "failed"; readonly detail: string }

/** `--porcelain` marks a ref the remote refused with `!` (the reason after it may be translated). */
const refused = (result: GitResult) =>
  result.stdout.split("\n").some((line) => line.startsWith(`!\t${NOTES_REF}:`))

const configValue = (git: Git, root: string, key: string) =>
  Effect.map(git(root, ["config", "--get", key]), (r) =>
    r.code === 0 ? r.stdout.trim() || undefined : undefined,
  )

/** The remote a plain `git push` on the current branch goes to. */
export const pushRemoteOf = (git: Git, root: string) =>
  Effect.gen(function* () {
    const branchResult = yield* git(root, ["symbolic-ref", "--short", "-q", "HEAD"])
    const branch = branchResult.code === 0 ? branchResult.stdout.trim() : undefined
    return (
      (branch ? yield* configValue(git, root, `branch.${branch}.pushRemote`) : undefined) ??
      (yield* configValue(git, root, "remote.pushDefault")) ??
      (branch ? yield* configValue(git, root, `branch.${branch}.remote`) : undefined) ??
      "origin"
    )
  })

/** Whether `remote` is a remote of the repository, or a URL or path git can push to. */
export const hasRemote = (git: Git, root: string, remote: string) =>
  Effect.map(
    git(root, ["remote"]),
    (result) => result.code === 0 && (result.stdout.split("\n").includes(remote) || /[/:]/.test(remote)),
  )

/**
 * Push the notes to `remote`, merging the remote's when they moved. All calls
 * share `timeoutMs`; `random` names the temporary ref.
 */
export const pushNotes = (git: Git, root: string, remote: string, timeoutMs: number, random: string) => {
  const deadline = Date.now() + timeoutMs
  const left = () => Math.max(1, deadline - Date.now())
  const run = (args: ReadonlyArray<string>) => git(root, args, { timeoutMs: left() })
  const push = () => run(["push", "--porcelain", remote, `${NOTES_REF}:${NOTES_REF}`])
  const incoming = `${NOTES_REF}-incoming-${random}`
  return Effect.gen(function* (): Effect.fn.Return<PushOutcome> {
    // A remote is a name, a path or a URL, never an option git would take.
    if (remote.startsWith("-")) return { kind: "failed", detail: `${remote} is not a remote` }
    const local = yield* run(["rev-parse", "--verify", "-q", NOTES_REF])
    if (local.code !== 0) return { kind: "nothing" }
    const first = yield* push()
    if (first.code === 0) return { kind: "pushed", merged: false }
    if (!refused(first)) return { kind: "failed", detail: first.stderr.trim() || first.stdout.trim() }
    const fetched = yield* run(["fetch", "--no-tags", remote, `${NOTES_REF}:${incoming}`])
    if (fetched.code !== 0) return { kind: "failed", detail: fetched.stderr.trim() }
    const merged = yield* run([
      "notes",
      `--ref=${NOTES_NAME}`,
      "merge",
      "-q",
      "-s",
      "cat_sort_uniq",
      incoming,
    ])
    yield* run(["update-ref", "-d", incoming])
    if (merged.code !== 0) return { kind: "failed", detail: merged.stderr.trim() }
    const second = yield* push()
    return second.code === 0
      ? { kind: "pushed", merged: true }
      : { kind: "failed", detail: second.stderr.trim() || second.stdout.trim() }
  }).pipe(
    Effect.timeoutOrElse({
      duration: timeoutMs,
      orElse: () =>
        Effect.andThen(
          git(root, ["update-ref", "-d", incoming], { timeoutMs: 2_000 }),
          Effect.succeed<PushOutcome>({ kind: "failed", detail: `did not finish within ${timeoutMs} ms` }),
        ),
    }),
  )
}

/**
 * After the agent's `push`, push the notes of the repository at `root` to the
 * push's remote (else the branch's push remote), when the repository has it;
 * a failure is a warning.
 */
export const pushNotesFor = (
  git: Git,
  root: string,
  push: PushCommand,
  timeoutMs: number,
  notice: (level: "warning", text: string) => Effect.Effect<void>,
) =>
  Effect.gen(function* () {
    const remote = push.remote ?? (yield* pushRemoteOf(git, root))
    if (!(yield* hasRemote(git, root, remote))) return
    const outcome = yield* pushNotes(git, root, remote, timeoutMs, crypto.randomUUID().slice(0, 8))
    if (outcome.kind === "failed")
      yield* notice("warning", `Agent Trace: the notes were not pushed to ${remote}: ${outcome.detail}`)
  })

export interface PushAfterContext {
  readonly git: Git
  /** The repositories the session edited. */
  readonly roots: ReadonlyArray<string>
  /** Read at each push: whether to push the notes, and the deadline of all its git calls. */
  readonly settings: Effect.Effect<PushSettings>
  readonly repositoryFor: (dir: string) => Effect.Effect<{ readonly root: string } | undefined>
  readonly notice: (level: "warning", text: string) => Effect.Effect<void>
}

/** After a Bash call that pushed: push the notes of each edited repository the push went to, when asked to. */
export const pushAfter = (ctx: PushAfterContext, call: ToolCall) =>
  Effect.gen(function* () {
    const command = asString(asRecord(call.input).command)
    if (call.name !== "Bash" || call.status !== "Completed" || command === undefined) return
    const pushes = pushesIn(command)
    if (pushes.length === 0) return
    const settings = yield* ctx.settings
    if (!settings.enabled) return
    for (const root of ctx.roots)
      for (const push of pushes) {
        // The shell's folder is not known: a push goes to each edited repository that has its remote.
        if (push.dir?.startsWith("/") && (yield* ctx.repositoryFor(push.dir))?.root !== root) continue
        yield* pushNotesFor(ctx.git, root, push, settings.timeoutMs, ctx.notice)
      }
  })
