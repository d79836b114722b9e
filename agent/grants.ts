/**
 * Which folders of the home directory the plugin may read: the manifest's
 * `fs.read` scopes of the form `~/<folder>/**`. The broker answers null for
 * any path outside them, whether or not it exists, so a transcript there
 * that reads as null is unreadable, not missing (an account whose
 * configuration directory lies outside `~/.claude`).
 */
import manifest from "../plugin.manifest.json" with { type: "json" }
import { isWithin, join, normalize } from "../sdk/paths.ts"

/** The granted folders, relative to the home directory. */
const HOME_FOLDERS: ReadonlyArray<string> = manifest.grants["fs.read"]
  .map((grant) => grant.scope)
  .filter((scope) => scope.startsWith("~/") && scope.endsWith("/**"))
  .map((scope) => scope.slice(2, -3))

/** Can the broker read under `path` at all (it lies in a granted home folder)? */
export const readableDir = (path: string, home: string): boolean =>
  HOME_FOLDERS.some((folder) => isWithin(normalize(path), join(home, folder)))
