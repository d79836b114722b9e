/**
 * Test support for Agent Trace: temporary git repositories (a bare remote and
 * clones of it) driven with the real `git`, with a fixed identity so commits
 * work under any HOME; and a git runner that also holds every call to the
 * manifest's `process.args.git` patterns, as the host's broker does.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import type { Git } from "../../trace/git.ts"
import { nodeGit } from "../trace/node-git.ts"
import { argsRule } from "../broker/process-grants.ts"

export const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: "Test Person",
  GIT_AUTHOR_EMAIL: "person@example.invalid",
  GIT_COMMITTER_NAME: "Test Person",
  GIT_COMMITTER_EMAIL: "person@example.invalid",
  GIT_CONFIG_NOSYSTEM: "1",
} as const

/** Run git in `cwd`, returning its trimmed output (throws on failure). */
export const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", args, {
    cwd,
    env: { ...process.env, ...GIT_IDENTITY },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim()

export interface GitWorld {
  readonly root: string
  /** A new repository with one commit on `main` (file `README.md`). */
  readonly repo: (name: string) => string
  /** A bare repository. */
  readonly bare: (name: string) => string
  /** A clone of `from` under `name`. */
  readonly clone: (from: string, name: string) => string
  /** Write a file in a repository (folders made); returns its path. */
  readonly write: (repo: string, path: string, content: string) => string
  readonly cleanup: () => void
}

const configure = (repo: string) => {
  git(repo, "config", "user.name", GIT_IDENTITY.GIT_AUTHOR_NAME)
  git(repo, "config", "user.email", GIT_IDENTITY.GIT_AUTHOR_EMAIL)
  git(repo, "config", "commit.gpgsign", "false")
}

export const makeGitWorld = (prefix = "cvg-trace-"): GitWorld => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  const write = (repo: string, path: string, content: string) => {
    const file = join(repo, path)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, content)
    return file
  }
  return {
    root,
    repo: (name) => {
      const repo = join(root, name)
      mkdirSync(repo, { recursive: true })
      git(repo, "init", "-q", "-b", "main")
      configure(repo)
      write(repo, "README.md", "# A repository\n")
      git(repo, "add", "-A")
      git(repo, "commit", "-q", "-m", "start")
      return repo
    },
    bare: (name) => {
      const repo = join(root, name)
      mkdirSync(repo, { recursive: true })
      git(repo, "init", "-q", "--bare", "-b", "main")
      return repo
    },
    clone: (from, name) => {
      git(root, "clone", "-q", from, name)
      const repo = join(root, name)
      configure(repo)
      return repo
    },
    write,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  }
}

const manifestArgs = (): Record<string, string[]> =>
  JSON.parse(readFileSync(join(import.meta.dirname, "../../plugin.manifest.json"), "utf8")).grants.process
    .args

/**
 * The real git, and the calls the manifest's patterns would refuse (each as
 * its argument line): a test asserts the list stays empty.
 */
export const grantedGit = (): { readonly git: Git; readonly refused: string[] } => {
  const rule = argsRule(manifestArgs())
  const refused: string[] = []
  const run = nodeGit()
  return {
    refused,
    git: (repo, args, options) => {
      const line = ["-C", repo, ...args]
      if (rule.refusal("git", line) !== null) refused.push(line.join(" "))
      return run(repo, args, options)
    },
  }
}
