/**
 * `/plugins`: the loaded plugin as a host shows it before it is enabled: its
 * id, version, entry and every grant of its manifest with the reason given.
 */
import type { Manifest } from "../core/manifest.ts"

type Grants = Readonly<Record<string, unknown>>

const what = (name: string, grant: Readonly<Record<string, unknown>>): string => {
  if (name === "process" && Array.isArray(grant.commands)) {
    // What the commands may be asked: argument patterns per command, the variables the plugin may set.
    const args = Object.entries((grant.args ?? {}) as Record<string, ReadonlyArray<string>>).map(
      ([command, patterns]) => `\n      ${command} only: ${patterns.join(" | ")}`,
    )
    const env = Array.isArray(grant.env) ? `\n      may set ${grant.env.join(", ")}` : ""
    return `commands ${grant.commands.join(", ")}${args.join("")}${env}`
  }
  if (name === "env" && Array.isArray(grant.names)) return `variables ${grant.names.join(", ")}`
  if (typeof grant.scope === "string") return grant.scope
  return ""
}

/** One line per grant (a grant that is a list is one line per entry): name, what, why. */
export const grantLines = (manifest: Manifest): Array<{ grant: string; what: string; reason: string }> => {
  const grants: Grants = manifest.grants
  return Object.entries(grants).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).map((g: Readonly<Record<string, unknown>>) => ({
      grant: name,
      what: what(name, g),
      reason: typeof g.reason === "string" ? g.reason : "(no reason given)",
    })),
  )
}
