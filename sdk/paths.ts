/**
 * POSIX path helpers for code that may not import `node:path` (the plugin
 * runs sandboxed). Paths are absolute or relative strings with `/`.
 */

/** Resolve `.` and `..` segments and collapse repeated slashes. */
export const normalize = (path: string): string => {
  const absolute = path.startsWith("/")
  const out: string[] = []
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop()
      else if (!absolute) out.push("..")
      continue
    }
    out.push(part)
  }
  const joined = out.join("/")
  return absolute ? `/${joined}` : joined === "" ? "." : joined
}

export const join = (...parts: ReadonlyArray<string>): string =>
  normalize(parts.filter((p) => p !== "").join("/"))

export const dirname = (path: string): string => {
  const normal = normalize(path)
  const at = normal.lastIndexOf("/")
  if (at < 0) return "."
  return at === 0 ? "/" : normal.slice(0, at)
}

export const basename = (path: string, suffix?: string): string => {
  const normal = normalize(path)
  const base = normal.slice(normal.lastIndexOf("/") + 1)
  return suffix && base.endsWith(suffix) ? base.slice(0, -suffix.length) : base
}

/** `~` and `~/…` against `home`; other paths as they are. */
export const expandHome = (path: string, home: string): string =>
  path === "~" ? home : path.startsWith("~/") ? join(home, path.slice(2)) : path

/** true when `path` is `root` or lies below it (both normalized, absolute). */
export const isWithin = (path: string, root: string): boolean => {
  const p = normalize(path)
  const r = normalize(root)
  return p === r || p.startsWith(r === "/" ? "/" : `${r}/`)
}
