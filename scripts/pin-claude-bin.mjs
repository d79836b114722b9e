// postinstall: node_modules/.bin/claude is the pinned CLI's.
//
// The older CLI the end-to-end suite also runs is an npm alias package
// (`claude-code-<version>`), and it declares the same `claude` bin: npm then
// links .bin/claude to whichever it linked last. `npm start` and the tests put
// node_modules/.bin first on PATH to find the pinned CLI, so point the link
// back at @anthropic-ai/claude-code, every install.
import { existsSync, lstatSync, readlinkSync, rmSync, symlinkSync } from "node:fs"
import { join } from "node:path"

const bin = join("node_modules", ".bin", "claude")
const target = join("..", "@anthropic-ai", "claude-code", "bin", "claude.exe")
if (existsSync(join("node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe"))) {
  let current
  try {
    current = lstatSync(bin).isSymbolicLink() ? readlinkSync(bin) : undefined
  } catch {
    current = undefined
  }
  if (current !== target) {
    rmSync(bin, { force: true })
    symlinkSync(target, bin)
  }
}
