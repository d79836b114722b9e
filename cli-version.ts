/**
 * Which Claude Code CLI the agent drives, and what it accepts. The version
 * comes from `claude --version`; what a version accepts comes from the one
 * table below, not from `--help`: checked on the real 2.1.282 and 2.1.332,
 * the help hides `--thinking-display`, `--thinking` and `--resume-session-at`
 * (all accepted) and lists `--effort` without `ultracode` (accepted since
 * 2.1.203), so reading the help would leave out flags that work.
 *
 * Rules it keeps: below OLDEST_SUPPORTED the agent is Unavailable (with the
 * version it needs and how to update); at or above it, a flag the CLI lacks
 * is left off the launch line and named once in a notice, never a failed
 * launch. A version it cannot read is taken as current (the CLI decides).
 */
import { Effect } from "effect"
import { Process } from "./sdk/plugin-api.ts"

/** A release as `major.minor.patch`; a pre-release or build suffix is ignored. */
export interface CliVersion {
  readonly major: number
  readonly minor: number
  readonly patch: number
  /** As printed, e.g. `2.1.282`. */
  readonly text: string
}

/** `2.1.282 (Claude Code)` → 2.1.282; undefined when no version is printed. */
export const parseCliVersion = (printed: string): CliVersion | undefined => {
  const match = /(\d+)\.(\d+)\.(\d+)/.exec(printed)
  if (!match) return undefined
  return {
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: Number(match[3]),
    text: `${match[1]}.${match[2]}.${match[3]}`,
  }
}

/** Negative, zero or positive as `a` is older than, the same as, or newer than `b`. */
export const compareVersions = (a: CliVersion, b: CliVersion): number =>
  a.major - b.major || a.minor - b.minor || a.patch - b.patch

const at = (text: string): CliVersion => parseCliVersion(text) as CliVersion

/**
 * The oldest release the plugin runs: the whole end-to-end suite passes on it
 * (`npm run compat -- 2.1.200`) with the features the table marks missing
 * left out. Older releases are refused rather than half-driven.
 */
export const OLDEST_SUPPORTED: CliVersion = at("2.1.200")

/** What the plugin uses that not every supported release has. */
export type Feature = "forwardSubagentText" | "ultracodeEffort"

export interface FeatureRow {
  /** The first release that has it (found in the releases' binaries, then run). */
  readonly since: CliVersion
  /** How the CLI is asked for it. */
  readonly flag: string
  /** What the user loses without it, for the notice; none when the CLI did it unasked before the flag existed. */
  readonly loss?: string
}

/**
 * The one capability table. Each `since` was found by reading the option
 * parser of the registry's releases (2.1.197 … 2.1.332) and checked by
 * running the oldest one that has it and the newest one that does not.
 */
export const FEATURES: { readonly [F in Feature]: FeatureRow } = {
  // Before the flag, subagents' thinking and text were forwarded unasked (seen on 2.1.200 and 2.1.210);
  // from some release on they are not without it (2.1.332). So an older CLI loses nothing: no notice.
  forwardSubagentText: {
    since: at("2.1.211"),
    flag: "--forward-subagent-text",
  },
  ultracodeEffort: {
    since: at("2.1.203"),
    flag: "--effort ultracode",
    loss: "Ultracode is not offered (extra high effort is the highest)",
  },
}

/** What one CLI can do, as the launch and the options ask it. */
export interface CliSupport {
  /** undefined: the version could not be read (taken as current). */
  readonly version?: CliVersion
  /** The binary `which` found, when the broker tells. */
  readonly path?: string
  readonly has: (feature: Feature) => boolean
  /** Features the table has and this CLI lacks, in table order. */
  readonly missing: ReadonlyArray<Feature>
  /** Set when the CLI is older than OLDEST_SUPPORTED: the message for `Unavailable`. */
  readonly unsupported?: string
}

/** A CLI of this version (undefined: unknown, so everything is assumed). */
export const supportOf = (version: CliVersion | undefined, path?: string): CliSupport => {
  const missing = (Object.keys(FEATURES) as Feature[]).filter(
    (feature) => version !== undefined && compareVersions(version, FEATURES[feature].since) < 0,
  )
  const tooOld = version !== undefined && compareVersions(version, OLDEST_SUPPORTED) < 0
  return {
    ...(version && { version }),
    ...(path && { path }),
    has: (feature) => !missing.includes(feature),
    missing,
    ...(tooOld && {
      unsupported:
        `Claude Code ${version.text} is too old: this plugin needs ${OLDEST_SUPPORTED.text} or newer. ` +
        "Update it (the agent's update action, `claude update`, or `npm install -g @anthropic-ai/claude-code@latest`).",
    }),
  }
}

/** Every capability, for a CLI whose version is not known. */
export const FULL_SUPPORT: CliSupport = supportOf(undefined)

/** The one notice a session gets on a CLI that lacks features it would miss; undefined when it misses none. */
export const missingNotice = (support: CliSupport): string | undefined => {
  const lost = support.missing.filter((feature) => FEATURES[feature].loss !== undefined)
  if (lost.length === 0) return undefined
  const version = support.version ? ` ${support.version.text}` : ""
  const parts = lost.map((feature) => `no ${FEATURES[feature].flag}: ${FEATURES[feature].loss}`)
  const newest = lost.reduce((a, f) => (compareVersions(FEATURES[f].since, FEATURES[a].since) > 0 ? f : a))
  return `This Claude Code${version} has ${parts.join("; ")}. Update to ${FEATURES[newest].since.text} or newer for them.`
}

/**
 * Detects the CLI once: `which claude` and `claude --version`, the answer
 * kept for that binary and version until `forget` (after an update, which
 * changes both), so a probe or a launch never runs `--version` again.
 */
export interface CliDetector {
  readonly detect: Effect.Effect<CliSupport, never, Process>
  /** Drop what was learned (after an update). */
  readonly forget: () => void
}

export const makeCliDetector = (): CliDetector => {
  let known: CliSupport | undefined
  const detect = Effect.gen(function* () {
    if (known) return known
    const process = yield* Process
    const path = (yield* process.which("claude").pipe(Effect.catch(() => Effect.succeed(null)))) ?? undefined
    const run = yield* process
      .run("claude", ["--version"], { timeoutMs: 30_000 })
      .pipe(Effect.catch(() => Effect.succeed(undefined)))
    const support = supportOf(run?.code === 0 ? parseCliVersion(run.stdout) : undefined, path)
    known = support
    return support
  })
  return {
    detect,
    forget: () => {
      known = undefined
    },
  }
}
