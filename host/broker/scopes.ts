/**
 * The fs.read scopes of a manifest as path roots, and the lexical check.
 *
 * Scope spellings: `~/x/**` (HOME/x and below), `~/x` (that path only),
 * `/abs/**`, `/abs` (that path only), `workspace` (every workspace root the
 * host registered, and below) and `data` (the plugin's data folder, and
 * below). Anything else grants nothing and is reported once.
 */
import { isAbsolute, normalize, posix } from "node:path"

export interface ScopeRoot {
  /** The manifest's spelling, for logs. */
  readonly scope: string
  /** Absolute, normalized. */
  readonly root: string
  /** true: the root and everything below; false: exactly that path. */
  readonly subtree: boolean
}

export interface ScopeSources {
  readonly home: string
  readonly data: string
  readonly workspaces: () => Iterable<string>
  /** Where an absolute scope really lives (tests point managed-settings paths into a temp folder). */
  readonly remap?: Readonly<Record<string, string>>
}

export interface ScopeSet {
  /** The roots as they stand now (workspaces change). */
  readonly roots: () => ReadonlyArray<ScopeRoot>
  /** Scope spellings this host does not understand (they grant nothing). */
  readonly unknown: ReadonlyArray<string>
}

/** `path` is `root` or below it (both absolute and normalized). */
export const within = (path: string, root: string): boolean =>
  path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`)

export const covers = (root: ScopeRoot, path: string): boolean =>
  root.subtree ? within(path, root.root) : path === root.root

/** `~` and `~/…` against home, then normalized (no trailing slash). */
export const expandPath = (path: string, home: string): string => {
  const expanded = path === "~" ? home : path.startsWith("~/") ? posix.join(home, path.slice(2)) : path
  const normal = normalize(expanded)
  return normal.length > 1 && normal.endsWith("/") ? normal.slice(0, -1) : normal
}

export const makeScopeSet = (scopes: ReadonlyArray<string>, sources: ScopeSources): ScopeSet => {
  const unknown: string[] = []
  const fixed: ScopeRoot[] = []
  let workspace = false
  for (const scope of scopes) {
    if (scope === "workspace") {
      workspace = true
      continue
    }
    if (scope === "data") {
      fixed.push({ scope, root: expandPath(sources.data, sources.home), subtree: true })
      continue
    }
    const subtree = scope.endsWith("/**")
    const base = subtree ? scope.slice(0, -3) : scope
    if (!(base === "~" || base.startsWith("~/") || isAbsolute(base)) || base.includes("*")) {
      unknown.push(scope)
      continue
    }
    const mapped = sources.remap?.[base] ?? sources.remap?.[scope] ?? base
    fixed.push({ scope, root: expandPath(mapped, sources.home), subtree })
  }
  return {
    unknown,
    roots: () =>
      workspace
        ? [
            ...fixed,
            ...[...sources.workspaces()].map((w) => ({
              scope: "workspace",
              root: expandPath(w, sources.home),
              subtree: true,
            })),
          ]
        : fixed,
  }
}
