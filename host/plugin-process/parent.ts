/**
 * One plugin process as the host sees it: started under the permission
 * model (child-flags.ts) with no environment, the broker served to it over
 * the IPC channel (serve-broker.ts), activated, and its agents registered in
 * the host's registry as proxies whose methods are channel requests.
 *
 * Rules it keeps:
 * - Every batch the child sends is checked against the channel's envelope
 *   (a check compiled once from the Zod schema, wire/check.ts; Zod words
 *   the refusal); a malformed one is one diagnostic and is dropped.
 * - When the child dies (crash, kill, out of memory) it is logged with the
 *   last lines of its stderr, every pending call fails with
 *   PluginProcessExited, every process it started is ended (and waited
 *   for), and `onExit` tells the host, which restarts it on the next call.
 * - A child that stops answering (its event loop stuck: a loop that never
 *   yields) is ended the same way: the host pings it every few seconds, and
 *   one ping left unanswered for `unresponsiveMs` (30 s by default) kills
 *   it; the exit then says why. A host whose own loop stalled restarts the
 *   wait instead of blaming the child (the answer may be in its own queue).
 * - `stop` disposes the agents, ends their processes, then the child.
 */
import { readFileSync } from "node:fs"
import type { Writable } from "node:stream"
import { Effect } from "effect"
import { z } from "zod"
import { ChannelError, type Message, makePeer, type Peer, type Port } from "../../sdk/channel.ts"
import type { ActivateParams } from "../../sdk/context.ts"
import type { AgentEvent, AgentHost, AgentProvider } from "../../sdk/protocol.ts"
import { emitNow } from "../core/agents.ts"
import type { HostBroker } from "../broker/broker.ts"
import { REFUSED } from "../core/log.ts"
import { frameHeader, LANE_FD } from "./lane.ts"
import { serveBroker } from "./serve-broker.ts"
import { type SpawnedPlugin, spawnKey, spawnPluginChild } from "./spawn.ts"
import { watchChild } from "./watchdog.ts"
import { AGENT_PROVIDER_CALLS } from "../../sdk/provider-calls.ts"
import { compileCheck } from "../../wire/check.ts"

const Envelope = z.array(
  z.discriminatedUnion("t", [
    z.object({ t: z.literal("req"), id: z.number(), op: z.string(), args: z.unknown() }),
    z.object({
      t: z.literal("res"),
      id: z.number(),
      value: z.unknown(),
      parts: z.array(z.string()).optional(),
    }),
    z.object({ t: z.literal("part"), id: z.number(), key: z.string(), entries: z.array(z.unknown()) }),
    z.object({
      t: z.literal("err"),
      id: z.number(),
      error: z.object({
        _tag: z.string(),
        message: z.string(),
        fields: z.record(z.string(), z.unknown()).optional(),
      }),
    }),
    z.object({ t: z.literal("note"), op: z.string(), args: z.unknown() }),
    z.object({ t: z.literal("open"), sid: z.number(), op: z.string(), args: z.unknown() }),
    z.object({ t: z.literal("credit"), sid: z.number(), weight: z.number().positive() }),
    z.object({ t: z.literal("close"), sid: z.number() }),
  ]),
)

/** Zod's verdict without its parse contexts and copies, per batch; Zod itself only to word a refusal. */
const envelopeFits = compileCheck(Envelope)

const AgentEmit = z.object({ agent: z.string(), event: z.object({ type: z.string() }).loose() })
const agentEmitFits = compileCheck(AgentEmit)
const AgentInfoChanged = z.object({ agent: z.string(), agentId: z.string() })

export interface PluginExit {
  readonly code: number | null
  readonly signal: string | null
  /** Its last lines of stderr (Node's own report of a crash). */
  readonly stderr: string
  /** Set when the host ended it for leaving a ping unanswered: how long it had been silent, in ms. */
  readonly unresponsiveMs?: number
}

/** How long a plugin process may leave a ping unanswered before the host ends it. */
export const UNRESPONSIVE_MS = 30_000

/** How a plugin process's exit reads in the host's messages (`ended`: the verb for an exit of its own). */
export const exitText = (exit: PluginExit, ended: "died" | "exited" = "died"): string =>
  exit.unresponsiveMs === undefined
    ? `${ended} (${exit.signal ?? `code ${exit.code}`})`
    : `stopped answering for ${Math.round(exit.unresponsiveMs / 1000)} s and was ended`

export interface PluginProcess {
  readonly pid: number
  /** Its resident memory in bytes, now (null where /proc is not there, or after it exited). */
  readonly rssBytes: () => number | null
  /** Resolves when the child has exited. */
  readonly exited: Promise<PluginExit>
  /** Dispose its agents, end their processes and the child, and wait. */
  readonly stop: () => Promise<void>
}

export interface PluginProcessOptions {
  readonly pluginDir: string
  readonly broker: HostBroker
  /** The child died without `stop` (after its processes were ended). */
  readonly onExit: (exit: PluginExit) => void
  /** V8 heap-size flags for the child (the ACP front end's memory settings); see childArgs. */
  readonly v8Flags?: ReadonlyArray<string>
  /** How long a ping may go unanswered before the child is ended (UNRESPONSIVE_MS; tests shorten it). */
  readonly unresponsiveMs?: number
  /**
   * A child spawned before the host was ready (spawn.ts; the ACP entry's):
   * taken when it runs and was spawned for this plugin, `main` and flags,
   * else ended and a new one spawned.
   */
  readonly spawned?: SpawnedPlugin
}

/** The child given, when it is the one this start would spawn and it still runs. */
const takeSpawned = (options: PluginProcessOptions, main: string): SpawnedPlugin | undefined => {
  const given = options.spawned
  if (!given) return undefined
  const same = given.key === spawnKey({ pluginDir: options.pluginDir, main, v8Flags: options.v8Flags })
  if (same && given.child.exitCode === null && given.child.signalCode === null) return given
  given.kill()
  return undefined
}

/** What a method's failure looks like to the host: the AgentFailure the plugin sent. */
const failureOf = (error: unknown) =>
  error instanceof ChannelError
    ? { _tag: error.wire._tag, message: error.wire.message, ...error.wire.fields }
    : { _tag: "Error", message: String(error) }

/** An AgentProvider whose methods run in the plugin process. */
const proxyProvider = (peer: Peer, id: string): AgentProvider => {
  const methods = Object.fromEntries(
    AGENT_PROVIDER_CALLS.map((method) => [
      method,
      (params?: unknown) =>
        Effect.tryPromise({
          try: () => peer.request("agent.call", { agent: id, method, params }),
          catch: failureOf,
        }),
    ]),
  )
  return {
    id,
    ...methods,
    // A dead process has nothing left to dispose.
    dispose: () =>
      Effect.promise(() =>
        peer.closed() ? Promise.resolve() : peer.request("agent.dispose", { agent: id }).catch(() => {}),
      ),
  } as unknown as AgentProvider
}

/**
 * The lane's writer. It stays corked until the event loop's turn ends: what
 * the turn's reads brought (a CLI's pipe gives several reads a turn while it
 * streams) leaves in one `writev`, headers and chunks uncopied, and wakes the
 * child's reader once for them rather than once a chunk.
 */
const laneWriter = (lane: Writable) => {
  // A write racing the child's exit fails quietly: the exit is reported once, by the host.
  lane.on("error", () => {})
  let uncorkQueued = false
  const uncork = () => {
    uncorkQueued = false
    while (lane.writableCorked > 0) lane.uncork()
  }
  return (sid: number, chunk: Uint8Array, written?: () => void) => {
    if (lane.destroyed) return written?.()
    if (lane.writableCorked === 0) lane.cork()
    lane.write(frameHeader(sid, chunk.byteLength))
    // Called once the chunk is written, or with an error once the lane is gone: either way out of it.
    lane.write(chunk, written && (() => written()))
    if (!uncorkQueued) {
      uncorkQueued = true
      setImmediate(uncork)
    }
  }
}

/** The channel's port to the child: its IPC channel for batches (each checked against the envelope), its lane for bytes. */
const childPort = (spawned: SpawnedPlugin, broker: HostBroker): Port => {
  const { child } = spawned
  const toLane = laneWriter(child.stdio[LANE_FD] as Writable)
  return {
    sendBytes: (sid, chunk) => toLane(sid, chunk),
    lendBytes: (sid, chunk, written) => toLane(sid, chunk, written),
    post: (batch) => {
      // A send racing the child's exit fails quietly: the exit is reported once, by the host.
      if (child.connected) child.send(batch as Message[], () => {})
    },
    listen: (receive) =>
      spawned.listen((raw: unknown) => {
        if (envelopeFits(raw)) return receive(raw as Message[])
        const parsed = Envelope.safeParse(raw)
        if (!parsed.success) {
          broker.logger.log({
            source: "host",
            level: "warn",
            message: `${broker.manifest.id}: a malformed message from the plugin process was dropped`,
            data: { issues: z.prettifyError(parsed.error) },
          })
          return
        }
        receive(parsed.data as Message[])
      }),
    later: (flush) => queueMicrotask(flush),
  }
}

/**
 * The plugin's side of the agent registry: each agent it provides becomes a
 * proxy in the host's registry, its events go straight to the hub, and what
 * the sandbox refused is logged. Returns the agents' hosts by id.
 */
const serveAgents = (peer: Peer, broker: HostBroker, pid: number): Map<string, AgentHost> => {
  const hosts = new Map<string, AgentHost>()
  peer.handle("agents.provide", async (args) => {
    const { id } = z.object({ id: z.string() }).parse(args)
    const exit = await Effect.runPromiseExit(
      broker.api.agents.provide(id, (host) => {
        hosts.set(id, host)
        return proxyProvider(peer, id)
      }),
    )
    if (exit._tag === "Failure")
      throw {
        _tag: "NotGranted",
        message: `agents.provide not granted: ${id}`,
        capability: "agents.provide",
        detail: id,
      }
  })
  peer.handle("agents.unprovide", (args) => {
    const { id } = z.object({ id: z.string() }).parse(args)
    hosts.delete(id)
    return Effect.runPromise(broker.api.agents.unprovide(id))
  })
  peer.onNote("agent.emit", (args) => {
    if (!agentEmitFits(args)) return
    const { agent, event } = args as { agent: string; event: AgentEvent }
    const host = hosts.get(agent)
    if (host) emitNow(host, event)
  })
  peer.onNote("agent.infoChanged", (args) => {
    const parsed = AgentInfoChanged.safeParse(args)
    const host = parsed.success ? hosts.get(parsed.data.agent) : undefined
    if (host) Effect.runSync(host.infoChanged(parsed.data!.agentId))
  })
  peer.onNote("sandbox.refused", (args) => {
    const what = String((args as { what?: unknown } | null)?.what ?? "?")
    broker.logger.log({
      source: "broker",
      level: "warn",
      message: `${REFUSED} sandbox: ${what} (the plugin process may not)`,
      data: { capability: "sandbox", what, pid },
    })
  })
  return hosts
}

/** A process's resident memory in bytes, from /proc (null where there is none). */
const rssOf = (pid: number): number | null => {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
    return kb === undefined ? null : Number(kb) * 1024
  } catch {
    return null
  }
}

/** Disconnect the child (it exits by itself), then SIGTERM and SIGKILL if it lingers; wait for its exit. */
const endChild = async (child: SpawnedPlugin["child"], exited: Promise<unknown>) => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const lane = child.stdio[LANE_FD] as Writable | null
  if (child.connected) child.disconnect()
  // The child's read of the lane blocks a pool thread that its exit waits for: EOF frees it.
  lane?.end()
  const term = setTimeout(() => child.kill("SIGTERM"), 1_000)
  const force = setTimeout(() => child.kill("SIGKILL"), 3_000)
  await exited
  clearTimeout(term)
  clearTimeout(force)
}

export const startPluginProcess = async (options: PluginProcessOptions): Promise<PluginProcess> => {
  const { broker } = options
  const logger = broker.logger
  const spawned =
    takeSpawned(options, broker.manifest.main) ??
    (await spawnPluginChild({
      pluginDir: options.pluginDir,
      main: broker.manifest.main,
      v8Flags: options.v8Flags,
    }))
  const { child, pid, stderrLines } = spawned
  const peer = makePeer(childPort(spawned, broker))
  const served = serveBroker(peer, broker, (op, error) =>
    logger.log({
      source: "host",
      level: "warn",
      message: `${broker.manifest.id}: bad arguments for ${op} from the plugin process`,
      data: { error: String(error) },
    }),
  )
  const hosts = serveAgents(peer, broker, pid)

  let stopping = false
  /** Set when the watchdog ended the child: how long it had left a ping unanswered. */
  let silentFor: number | undefined
  // The watchdog reports once; a child being stopped is no child to blame.
  const watchdog = watchChild(peer, options.unresponsiveMs ?? UNRESPONSIVE_MS, (silentMs) => {
    if (stopping) return
    silentFor = silentMs
    child.kill("SIGKILL")
  })

  const exited = spawned.exit.then(async ({ code, signal }): Promise<PluginExit> => {
    watchdog.stop()
    const exit: PluginExit = {
      code,
      signal,
      stderr: stderrLines.join("\n"),
      ...(silentFor !== undefined && { unresponsiveMs: silentFor }),
    }
    peer.close({
      _tag: "PluginProcessExited",
      message: `the plugin process of ${broker.manifest.id} ${exitText(exit, "exited")}`,
    })
    hosts.clear()
    await served.releaseAll()
    if (stopping) return exit
    logger.log({
      source: "host",
      level: "error",
      message: `the plugin process of ${broker.manifest.id} ${exitText(exit)}; its processes were ended, it restarts on the next call`,
      data: { pid, ...exit },
    })
    // Queued, so a throwing `onExit` cannot turn the exit itself into a failure.
    queueMicrotask(() => options.onExit(exit))
    return exit
  })

  try {
    const params: ActivateParams = { apiVersion: broker.api.apiVersion, paths: broker.api.fs.paths }
    await Promise.race([
      peer.request("activate", params),
      exited.then((exit) => {
        throw new Error(`the plugin process ${exitText(exit, "exited")} before it activated\n${exit.stderr}`)
      }),
    ])
  } catch (error) {
    stopping = true
    await endChild(child, exited)
    await served.releaseAll()
    throw new Error(
      `${broker.manifest.id}: activate failed: ${error instanceof Error ? error.message : String(error)}`,
    )
  }

  return {
    pid,
    exited,
    rssBytes: () => rssOf(pid),
    stop: async () => {
      stopping = true
      watchdog.stop()
      await served.releaseAll()
      await endChild(child, exited)
    },
  }
}
