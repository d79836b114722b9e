/**
 * Is there a real login to use? An ANTHROPIC_API_KEY, or `claude auth status
 * --json` answering `loggedIn: true`. No CLI, or a signed-out one, means the
 * front end starts the offline demo instead.
 */
import { execFile } from "node:child_process"
import { delimiter, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

/** The project's node_modules/.bin first, so the pinned CLI is the `claude` found. */
export const loginPath = (path: string | undefined): string =>
  [join(repoRoot, "node_modules", ".bin"), ...(path ?? "/usr/local/bin:/usr/bin:/bin").split(delimiter)]
    .filter((p, i, all) => p !== "" && all.indexOf(p) === i)
    .join(delimiter)

export type LoginState =
  | { readonly kind: "api_key" }
  | { readonly kind: "logged_in"; readonly method?: string; readonly email?: string }
  | { readonly kind: "logged_out" }
  | { readonly kind: "no_cli"; readonly reason: string }

/** `claude auth status --json` read leniently: non-JSON or no `loggedIn: true` is logged out. */
export const parseAuthStatus = (stdout: string): LoginState => {
  try {
    const status = JSON.parse(stdout) as { loggedIn?: unknown; authMethod?: unknown; email?: unknown }
    if (status && typeof status === "object" && status.loggedIn === true)
      return {
        kind: "logged_in",
        ...(typeof status.authMethod === "string" && { method: status.authMethod }),
        ...(typeof status.email === "string" && { email: status.email }),
      }
  } catch {
    // A CLI that prints no JSON is not a login we can use.
  }
  return { kind: "logged_out" }
}

export const detectLogin = (
  env: Readonly<Record<string, string | undefined>>,
  timeoutMs = 15_000,
): Promise<LoginState> => {
  if (env.ANTHROPIC_API_KEY?.trim()) return Promise.resolve({ kind: "api_key" })
  return new Promise((resolve) => {
    execFile(
      "claude",
      ["auth", "status", "--json"],
      {
        env: { ...env, PATH: loginPath(env.PATH) } as NodeJS.ProcessEnv,
        timeout: timeoutMs,
        encoding: "utf8",
      },
      (error, stdout) => {
        const code = (error as NodeJS.ErrnoException | null)?.code
        if (code === "ENOENT") return resolve({ kind: "no_cli", reason: "claude is not on PATH" })
        if (error?.killed) return resolve({ kind: "no_cli", reason: "claude auth status timed out" })
        // Signed out exits 1 with JSON on stdout; read it either way.
        resolve(parseAuthStatus(stdout))
      },
    )
  })
}
