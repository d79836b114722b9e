/**
 * The entry of the Claude Code plugin's script (agent-trace.mjs): Node's
 * compile cache first (Node 22.1 and later; nothing on Node 20), in the
 * plugin's data folder, then the script itself (hook-main.ts, a module of its
 * own so that the cache covers it). A hook call starts a fresh `node` each
 * time: with the cache it reads V8's code for the bundle instead of compiling
 * it (`npm run bench -- trace-hook -- --node <node 24>`). A folder the cache
 * cannot use only means no cache.
 */
import * as nodeModule from "node:module"
import { join } from "node:path"

const data = process.env.CLAUDE_PLUGIN_DATA
try {
  const enable = (nodeModule as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache
  if (data) enable?.(join(data, "compile-cache"))
} catch {}
await import("./hook-main.ts")
