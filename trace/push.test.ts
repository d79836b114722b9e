/**
 * Pushing the notes: which `git push` commands carry them along, and the push
 * itself against a bare repository whose notes moved (real git, two clones).
 */
import { Effect } from "effect"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { type GitWorld, git, grantedGit, makeGitWorld } from "../host/testing/git-fixture.ts"
import { NOTES_REF } from "./git.ts"
import { pushesIn, pushNotes, pushRemoteOf } from "./push.ts"

describe("pushesIn", () => {
  it("finds the remote of a push, in a compound command, after -C and env prefixes", () => {
    expect(pushesIn("git push origin main")).toEqual([{ remote: "origin" }])
    expect(pushesIn("git add -A && git commit -m x && git push")).toEqual([{}])
    expect(pushesIn("GIT_TRACE=0 git -C sub push -u upstream HEAD")).toEqual([
      { dir: "sub", remote: "upstream" },
    ])
    expect(pushesIn("git push --repo=mirror")).toEqual([{ remote: "mirror" }])
    expect(pushesIn("git push -o ci.skip origin main")).toEqual([{ remote: "origin" }])
  })
  it("pushes no notes with a dry run, a deletion, a mirror, tags only or refs/notes already named", () => {
    for (const command of [
      "git push --dry-run origin main",
      "git push -n",
      "git push origin --delete feature",
      "git push -d origin feature",
      "git push origin :feature",
      "git push --mirror backup",
      "git push --tags",
      "git push origin --tags",
      "git push origin v1.0:refs/tags/v1.0",
      "git push origin refs/tags/v1.0",
      "git push origin tag v1.0",
      "git push origin refs/notes/agent-trace",
    ])
      expect(pushesIn(command), command).toEqual([])
  })
  it("sees no push where there is none", () => {
    expect(pushesIn("git status && echo git push")).toEqual([])
    expect(pushesIn("npm push")).toEqual([])
  })
})

// Every git call of a push must fit the manifest's patterns (the host refuses any other).
const granted = grantedGit()
afterAll(() => expect(granted.refused).toEqual([]))

describe("pushNotes against a bare repository", () => {
  let world: GitWorld | undefined
  afterEach(() => {
    world?.cleanup()
    world = undefined
  })

  const setup = () => {
    const w = makeGitWorld()
    world = w
    const remote = w.bare("remote.git")
    const seed = w.repo("seed")
    git(seed, "remote", "add", "origin", remote)
    git(seed, "push", "-q", "origin", "main")
    const one = w.clone(remote, "one")
    const two = w.clone(remote, "two")
    const sha = git(one, "rev-parse", "HEAD")
    return { w, remote, one, two, sha }
  }

  const note = (repo: string, sha: string, line: string) =>
    git(repo, "notes", "--ref=agent-trace", "append", "-m", line, sha)

  it("pushes the notes, and when the remote's moved, merges both sides' records and pushes again", async () => {
    const { remote, one, two, sha } = setup()
    note(one, sha, '{"from":"one"}')
    note(two, sha, '{"from":"two"}')
    const first = await Effect.runPromise(pushNotes(granted.git, one, "origin", 10_000, "aaaa"))
    expect(first).toEqual({ kind: "pushed", merged: false })
    const second = await Effect.runPromise(pushNotes(granted.git, two, "origin", 10_000, "bbbb"))
    expect(second).toEqual({ kind: "pushed", merged: true })
    const onRemote = git(remote, "notes", "--ref=agent-trace", "show", sha).split("\n").filter(Boolean)
    expect(onRemote.sort()).toEqual(['{"from":"one"}', '{"from":"two"}'])
    // The temporary ref is gone, and nothing was forced.
    expect(git(two, "for-each-ref", "refs/notes/")).not.toMatch(/incoming/)
    expect(git(two, "rev-parse", NOTES_REF)).toBe(git(remote, "rev-parse", NOTES_REF))
  })
  it("pushes nothing when there are no notes, and fails within its deadline on a remote that is not there", async () => {
    const { one, sha } = setup()
    expect(await Effect.runPromise(pushNotes(granted.git, one, "origin", 10_000, "cccc"))).toEqual({
      kind: "nothing",
    })
    note(one, sha, '{"x":1}')
    const outcome = await Effect.runPromise(
      pushNotes(granted.git, one, "/nowhere/at/all.git", 10_000, "dddd"),
    )
    expect(outcome.kind).toBe("failed")
  })
  it("finds the branch's push remote: pushRemote, then pushDefault, then the branch's remote", async () => {
    const { one } = setup()
    const remoteOf = () => Effect.runPromise(pushRemoteOf(granted.git, one))
    expect(await remoteOf()).toBe("origin")
    git(one, "config", "remote.pushDefault", "fallback")
    expect(await remoteOf()).toBe("fallback")
    git(one, "config", "branch.main.pushRemote", "mine")
    expect(await remoteOf()).toBe("mine")
  })
})
