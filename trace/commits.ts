/**
 * The bookkeeping both Agent Trace front ends share (the provider's tracker,
 * fed a live session's events, and the Claude Code plugin's hooks, one
 * process per hook): an edit's lines remembered in the repository it landed
 * in, what HEAD named last in each repository, and a note for every commit
 * HEAD gained since.
 *
 * Rules: a repository first seen at an edit has its HEAD remembered then,
 * before any commit of that edit; a repository never seen before has its HEAD
 * remembered, not noted (what it holds is not this session's); a HEAD git
 * gave no answer for leaves the last one seen (a fresh guess would take older
 * commits for new ones); commits are noted oldest first, at most 100 per look.
 */
import { Effect } from "effect"
import { basename, dirname } from "../sdk/paths.ts"
import { type Fingerprints, remember, type Written } from "./fingerprints.ts"
import { commitsBetween, type Git, headOf, UNKNOWN, type Unknown } from "./git.ts"
import type { Repository } from "./heads.ts"
import { type NoteContext, noteCommit } from "./notes.ts"

/** Repository root → the commit HEAD named when last seen (undefined: no commit yet). */
export type Heads = Map<string, string | undefined>

/** HEAD now in one repository, as the caller reads it. */
export type HeadNow = (root: string) => Effect.Effect<string | undefined | Unknown>

/**
 * Remember what one agent wrote, under the repository the file is in (so a
 * subagent's own worktree is followed); undefined when it is in none.
 */
export const rememberEdit = (
  ctx: {
    readonly git: Git
    readonly heads: Heads
    readonly prints: Fingerprints
    readonly repositoryFor: (dir: string) => Effect.Effect<Repository | undefined>
  },
  wrote: Written,
  agent: string,
) =>
  Effect.gen(function* () {
    const repo = yield* ctx.repositoryFor(dirname(wrote.path))
    if (repo === undefined) return undefined
    if (!ctx.heads.has(repo.root)) {
      const head = yield* headOf(ctx.git, repo.root)
      if (head !== UNKNOWN) ctx.heads.set(repo.root, head)
    }
    remember(ctx.prints, repo.root, `${repo.prefix}${basename(wrote.path)}`, wrote.lines, agent)
    return repo
  })

/** Remember HEAD in each of `roots` (a run's start, a prompt), noting nothing. */
export const refreshHeads = (heads: Heads, roots: Iterable<string>, headNow: HeadNow) =>
  Effect.gen(function* () {
    for (const root of roots) {
      const head = yield* headNow(root)
      if (head !== UNKNOWN) heads.set(root, head)
    }
  })

/** Note every commit HEAD gained in each of `roots` since it was last seen. */
export const noteNewCommits = (
  noting: NoteContext,
  heads: Heads,
  roots: Iterable<string>,
  headNow: HeadNow,
) =>
  Effect.gen(function* () {
    for (const root of roots) {
      const seen = heads.has(root)
      const before = heads.get(root)
      const now = yield* headNow(root)
      // No answer: looked at again at the next look.
      if (now === UNKNOWN) continue
      heads.set(root, now)
      if (!seen || now === undefined || now === before) continue
      for (const sha of yield* commitsBetween(noting.git, root, before, now))
        yield* noteCommit(noting, root, sha)
    }
  })
