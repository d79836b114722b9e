/**
 * plugin.manifest.json: read, validate (Zod) and check against the host's
 * plugin API version. Unknown fields pass (a newer manifest may carry more);
 * a missing or malformed grant is an error, since the broker enforces them.
 */
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { z } from "zod"

/** The plugin API version this host implements (sdk/plugin-api.ts). */
export const HOST_API_VERSION = 2

const Reason = z.string().optional()

/** `owner/name`, each part a plain file-name-safe word (storage paths are built from it). */
const PluginId = z.string().regex(/^[a-z0-9][a-z0-9._-]*\/[a-z0-9][a-z0-9._-]*$/i, "expected owner/name")

const FsScope = z.looseObject({ scope: z.string().min(1), reason: Reason })

export const Manifest = z.looseObject({
  id: PluginId,
  name: z.string().optional(),
  version: z.string().min(1),
  description: z.string().optional(),
  main: z
    .string()
    .min(1)
    .refine(
      (m) => !m.startsWith("/") && !m.split(/[\\/]/).includes(".."),
      "main must stay inside the plugin",
    ),
  pluginApi: z.string().min(1),
  grants: z
    .looseObject({
      "agents.provide": z.looseObject({ reason: Reason }).optional(),
      process: z
        .looseObject({
          commands: z.array(z.string().min(1)),
          /** Argument patterns per command (host/broker/process-grants.ts); a command not named takes any. */
          args: z.record(z.string(), z.array(z.string().min(1))).optional(),
          /** The variables the plugin may set for a command (`CLAUDE_*`). */
          env: z.array(z.string().min(1)).optional(),
          reason: Reason,
        })
        .optional(),
      "fs.read": z.array(FsScope).optional(),
      env: z.looseObject({ names: z.array(z.string().min(1)), reason: Reason }).optional(),
    })
    .default({}),
})

export type Manifest = z.infer<typeof Manifest>

export class ManifestError extends Error {
  override readonly name = "ManifestError"
}

/**
 * Does `version` satisfy a range such as `>=2 <3`, `^2`, `2.x`, `2` or
 * `>=2 <3 || >=4`? Only what manifests use: comparators joined by spaces (and)
 * and `||` (or), on dotted numeric versions.
 */
export const satisfies = (version: number | string, range: string): boolean => {
  const v = parseVersion(String(version))
  if (!v) return false
  return range.split("||").some((alternative) => {
    const comparators = alternative.trim().split(/\s+/).filter(Boolean)
    return comparators.length > 0 && comparators.every((c) => matchComparator(v, c))
  })
}

type Version = readonly [number, number, number]

const parseVersion = (text: string): Version | null => {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(text.trim())
  if (!m) return null
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)]
}

const compare = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]

const matchComparator = (v: Version, comparator: string): boolean => {
  if (comparator === "*" || comparator === "x") return true
  const m = /^(>=|<=|>|<|=|\^|~)?(.+)$/.exec(comparator)
  if (!m) return false
  const op = m[1] ?? "="
  const raw = m[2]!
  // `2.x` / `2.*` / a bare `2` mean "any 2.y.z".
  const wild = /^(\d+)(?:\.(?:x|\*))?$/i.exec(raw)
  if (wild && op === "=") return v[0] === Number(wild[1])
  const target = parseVersion(raw.replace(/\.(x|\*)/gi, ".0"))
  if (!target) return false
  const c = compare(v, target)
  switch (op) {
    case ">=":
      return c >= 0
    case "<=":
      return c <= 0
    case ">":
      return c > 0
    case "<":
      return c < 0
    case "^":
      return c >= 0 && v[0] === target[0]
    case "~":
      return c >= 0 && v[0] === target[0] && v[1] === target[1]
    default:
      return c === 0
  }
}

/** Validate a parsed manifest and check its plugin API range. */
export const parseManifest = (json: unknown, apiVersion = HOST_API_VERSION): Manifest => {
  const parsed = Manifest.safeParse(json)
  if (!parsed.success)
    throw new ManifestError(`invalid plugin.manifest.json: ${z.prettifyError(parsed.error)}`)
  const manifest = parsed.data
  if (!satisfies(apiVersion, manifest.pluginApi))
    throw new ManifestError(
      `${manifest.id} needs plugin API ${manifest.pluginApi}; this host implements ${apiVersion}`,
    )
  return manifest
}

/** Read `<pluginDir>/plugin.manifest.json`. */
export const loadManifest = async (pluginDir: string, apiVersion = HOST_API_VERSION): Promise<Manifest> => {
  const file = join(pluginDir, "plugin.manifest.json")
  let text: string
  try {
    text = await readFile(file, "utf8")
  } catch (cause) {
    throw new ManifestError(`cannot read ${file}: ${(cause as Error).message}`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (cause) {
    throw new ManifestError(`${file} is not JSON: ${(cause as Error).message}`)
  }
  return parseManifest(json, apiVersion)
}
