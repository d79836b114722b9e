/**
 * A plugin as a host shows it before it is enabled: its id, version and
 * what its grants let it do, grouped (agents it provides, programs it runs,
 * files it reads, variables it reads), each with the reason its manifest
 * gives. The patterns and names behind a group are details, shown on
 * request.
 */
import type { Manifest } from "../core/manifest.ts"
import type { Format } from "./context.ts"

export interface GrantGroup {
  /** What the grant lets the plugin do, in a few words. */
  readonly title: string
  /** The reasons the manifest gives (one per grant entry in the group). */
  readonly reasons: ReadonlyArray<string>
  /** Every pattern, scope or name behind it. */
  readonly details: ReadonlyArray<string>
}

type Grant = Readonly<Record<string, unknown>>

const reasonOf = (grant: Grant | undefined): string =>
  typeof grant?.reason === "string" ? grant.reason : "(no reason given)"

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []

const processGroup = (grant: Grant): GrantGroup => {
  const commands = strings(grant.commands)
  const args = Object.entries((grant.args ?? {}) as Record<string, unknown>)
  const env = strings(grant.env)
  const patterns = args.reduce((n, [, p]) => n + strings(p).length, 0)
  const limits = [
    patterns > 0 ? `${patterns} argument patterns` : "",
    env.length > 0 ? `may set ${env.length} variables` : "",
  ].filter(Boolean)
  return {
    title: `run ${commands.join(", ")}${limits.length > 0 ? ` (${limits.join("; ")})` : ""}`,
    reasons: [reasonOf(grant)],
    details: [
      ...args.flatMap(([command, p]) => strings(p).map((pattern) => `${command} ${pattern}`)),
      ...(env.length > 0 ? [`variables it may set: ${env.join(", ")}`] : []),
    ],
  }
}

/** `fs.read` scopes as a person reads them. */
const scopeText = (scope: string): string =>
  scope === "workspace" ? "the workspace" : scope === "data" ? "its own data folder" : scope

export const grantGroups = (manifest: Manifest): GrantGroup[] => {
  const grants = manifest.grants as Readonly<Record<string, unknown>>
  const groups: GrantGroup[] = []
  const provide = grants["agents.provide"] as Grant | undefined
  if (provide) groups.push({ title: "provide agents", reasons: [reasonOf(provide)], details: [] })
  const process = grants.process as Grant | undefined
  if (process) groups.push(processGroup(process))
  const reads = (Array.isArray(grants["fs.read"]) ? grants["fs.read"] : []) as Grant[]
  if (reads.length > 0)
    groups.push({
      title: `read files: ${reads.map((r) => scopeText(String(r.scope))).join(", ")}`,
      reasons: reads.map((r) => `${scopeText(String(r.scope))}: ${reasonOf(r)}`),
      details: [],
    })
  const env = grants.env as Grant | undefined
  if (env) {
    const names = strings(env.names)
    groups.push({ title: `read the variables ${names.join(", ")}`, reasons: [reasonOf(env)], details: [] })
  }
  return groups
}

/** The plugin's heading and its grant groups, as lines (`details`: the patterns too). */
export const pluginLines = (
  manifest: Manifest,
  paint: (format: Format, text: string) => string,
  options: { readonly state?: string; readonly details?: boolean } = {},
): string[] => {
  const m = manifest
  const state = options.state ? ` · ${options.state}` : ""
  return [
    `  ${paint("bold", m.id)} ${m.version}${m.name ? ` · ${m.name}` : ""}${state}`,
    ...(m.description ? [`  ${paint("dim", m.description)}`] : []),
    `  ${paint("bold", "It may:")}`,
    ...grantGroups(m).flatMap((g) => [
      `    ${paint("cyan", g.title)}`,
      ...g.reasons.map((r) => `      ${paint("dim", `why: ${r}`)}`),
      ...(options.details ? g.details.map((d) => `      ${d}`) : []),
    ]),
  ]
}
