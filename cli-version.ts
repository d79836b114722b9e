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
 * (`npm run compat -- 2.1.281`: 20/20). 2.1.276 to 2.1.280 fail one row only
 * (a subagent's subagent is not nested under its parent task), older ones more
 * (rewind on 2.1.272, `auth status` without `configDirectory` on 2.1.263,
 * …), so they are refused rather than half-driven.
 */
export const OLDEST_SUPPORTED: CliVersion = at("2.1.281")

/**
 * What the plugin asks for that some release the table knows lacks. Both
 * rows are older than OLDEST_SUPPORTED today, so no supported release misses
 * them; the table is where a flag newer than the oldest supported release
 * goes when the plugin adopts one, and it keeps the launch line right if the
 * floor moves down.
 */
export type Feature = "forwardSubagentText" | "ultracodeEffort"

export interface FeatureRow {
  /** The first release that has it (found in the releases' binaries, then run). */
  readonly since: CliVersion
  /** How the CLI is asked for it. */
  readonly flag: string
  /** What the user loses without it, for the notice; none when the CLI did it unasked before the flag existed. */
  readonly loss?: string
}

export type FeatureTable = { readonly [F in Feature]: FeatureRow }

/**
 * The one capability table. Each `since` was found by reading the option
 * parser of the registry's releases (2.1.197 … 2.1.332) and checked by
 * running the oldest one that has it and the newest one that does not.
 */
export const FEATURES: FeatureTable = {
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

/** The releases the plugin runs and what each has: the table and its floor, a value so tests can pass others. */
export interface CliTable {
  readonly oldest: CliVersion
  readonly features: FeatureTable
}

export const CLI_TABLE: CliTable = { oldest: OLDEST_SUPPORTED, features: FEATURES }

/** What one CLI can do, as the launch and the options ask it. */
export interface CliSupport {
  /** undefined: the version could not be read (taken as current). */
  readonly version?: CliVersion
  /** The binary `which` found, when the broker tells. */
  readonly path?: string
  readonly has: (feature: Feature) => boolean
  /** Features the table has and this CLI lacks, in table order. */
  readonly missing: ReadonlyArray<Feature>
  /** Set when the CLI is older than the oldest supported release: the message for `Unavailable`. */
  readonly unsupported?: string
  /** The one notice a session gets when the CLI lacks something the user would miss. */
  readonly notice?: string
}

/** "This Claude Code X has no F: loss; …" for the missing features the user would miss. */
const noticeOf = (
  version: CliVersion | undefined,
  missing: ReadonlyArray<Feature>,
  features: FeatureTable,
): string | undefined => {
  const lost = missing.filter((feature) => features[feature].loss !== undefined)
  if (lost.length === 0) return undefined
  const parts = lost.map((feature) => `no ${features[feature].flag}: ${features[feature].loss}`)
  const newest = lost.reduce((a, f) => (compareVersions(features[f].since, features[a].since) > 0 ? f : a))
  return `This Claude Code${version ? ` ${version.text}` : ""} has ${parts.join("; ")}. Update to ${features[newest].since.text} or newer for them.`
}

/** A CLI of this version (undefined: unknown, so everything is assumed). */
export const supportOf = (
  version: CliVersion | undefined,
  path?: string,
  table: CliTable = CLI_TABLE,
): CliSupport => {
  const missing = (Object.keys(table.features) as Feature[]).filter(
    (feature) => version !== undefined && compareVersions(version, table.features[feature].since) < 0,
  )
  const tooOld = version !== undefined && compareVersions(version, table.oldest) < 0
  const notice = noticeOf(version, missing, table.features)
  return {
    ...(version && { version }),
    ...(path && { path }),
    has: (feature) => !missing.includes(feature),
    missing,
    ...(tooOld && {
      unsupported:
        `Claude Code ${version.text} is too old: this plugin needs ${table.oldest.text} or newer. ` +
        "Update it (the agent's update action, `claude update`, or `npm install -g @anthropic-ai/claude-code@latest`).",
    }),
    ...(notice && { notice }),
  }
}

/** Every capability, for a CLI whose version is not known. */
export const FULL_SUPPORT: CliSupport = supportOf(undefined)

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

export const makeCliDetector = (table: CliTable = CLI_TABLE): CliDetector => {
  let known: CliSupport | undefined
  const detect = Effect.gen(function* () {
    if (known) return known
    const process = yield* Process
    const path = (yield* process.which("claude").pipe(Effect.catch(() => Effect.succeed(null)))) ?? undefined
    const run = yield* process
      .run("claude", ["--version"], { timeoutMs: 30_000 })
      .pipe(Effect.catch(() => Effect.succeed(undefined)))
    const support = supportOf(run?.code === 0 ? parseCliVersion(run.stdout) : undefined, path, table)
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
