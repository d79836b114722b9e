/**
 * The offline demo world: testkit's scripted model on 127.0.0.1 playing the
 * demo scenario, a temporary HOME, workspace and host data folder, and a
 * `demo` account (plugin storage `instances`) whose env points the CLI at the
 * scripted model, the way a proxy account would, and a user skill to invoke.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { DEMO_ENV, DEMO_SKILL, DEMO_SKILL_BODY, demoScenario } from "../../testkit/demo.ts"
import { type ModelServer, startModelServer } from "../../testkit/model-server.ts"
import { storageFile } from "../broker/broker.ts"
import { loadManifest } from "../core/manifest.ts"
import { openJsonStorage } from "../broker/storage.ts"
import { loginPath } from "./login.ts"

export const DEMO_ACCOUNT_ID = "demo"
export const DEMO_AGENT_ID = `claude:${DEMO_ACCOUNT_ID}`
export const DEMO_ACCOUNT_NAME = "Demo (scripted model)"

export interface DemoWorld {
  readonly root: string
  readonly home: string
  readonly workspace: string
  readonly dataDir: string
  readonly server: ModelServer
  /** The host's login environment for the demo. */
  readonly env: Readonly<Record<string, string>>
  readonly agentId: string
  /** Stop the model and remove the temp folder (after the host closed). */
  readonly close: () => Promise<void>
}

/** A user skill in the demo's HOME, so `/<skill>` has something of the user's own to run. */
const writeDemoSkill = (home: string): void => {
  const dir = join(home, ".claude", "skills", DEMO_SKILL)
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, "SKILL.md"),
    `---\nname: ${DEMO_SKILL}\ndescription: Sum up the demo workspace in a short markdown table\n---\n\n${DEMO_SKILL_BODY}\n`,
  )
}

/** The stored account that points the CLI at `url` (as a proxy account's env would). */
export const demoAccount = (url: string) => ({
  id: DEMO_ACCOUNT_ID,
  name: DEMO_ACCOUNT_NAME,
  env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: "sk-ant-demo-scripted-model" },
})

export interface DemoWorldOptions {
  /** Keep the temporary folder (to look at it afterwards). */
  readonly keep?: boolean
  /** Work in this folder rather than the temporary one (--cwd): the demo writes notes/ and hello.py there. */
  readonly workspace?: string
}

export const startDemoWorld = async (
  pluginDir: string,
  options: DemoWorldOptions = {},
): Promise<DemoWorld> => {
  const keep = options.keep === true
  const root = realpathSync(mkdtempSync(join(tmpdir(), "cvg-demo-")))
  const [home, ownWorkspace, dataDir, tmp] = ["home", "workspace", "host-data", "tmp"].map((d) => {
    const path = join(root, d)
    mkdirSync(path, { recursive: true })
    return path
  }) as [string, string, string, string]
  const workspace = options.workspace ? realpathSync(options.workspace) : ownWorkspace
  writeDemoSkill(home)
  const server = await startModelServer(demoScenario(workspace))
  try {
    const manifest = await loadManifest(pluginDir)
    const storage = await openJsonStorage(storageFile(dataDir, manifest.id))
    await Effect.runPromise(storage.set("instances", [demoAccount(server.url)]))
    await storage.flush()
  } catch (error) {
    await server.close()
    rmSync(root, { recursive: true, force: true })
    throw error
  }
  const env: Record<string, string> = {
    HOME: home,
    PATH: loginPath(process.env.PATH),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    // The CLI refuses some permission modes as root unless it is told it is sandboxed.
    IS_SANDBOX: "1",
    CLAUDE_CODE_TMPDIR: tmp,
    ...DEMO_ENV,
  }
  if (process.env.TERM) env.TERM = process.env.TERM
  return {
    root,
    home,
    workspace,
    dataDir,
    server,
    env,
    agentId: DEMO_AGENT_ID,
    close: async () => {
      await server.close()
      if (!keep) rmSync(root, { recursive: true, force: true })
    },
  }
}
