// Installs the locked dependencies when node_modules is missing or older than
// the lockfile, so `npm start` and `npm test` work on a fresh clone.
import { execSync } from "node:child_process"
import { existsSync, statSync } from "node:fs"

const marker = "node_modules/.package-lock.json"
const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync("package-lock.json").mtimeMs
if (stale) {
  console.error("[setup] installing dependencies (npm ci)…")
  execSync("npm ci --no-audit --no-fund", { stdio: "inherit" })
}
