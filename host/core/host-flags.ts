/**
 * The Node flags the terminal front end's host process starts with
 * (package.json's `start`; host-flags.test.ts holds it to this list, and the
 * isolation bench runs both modes' hosts with them). V8 sizes its young
 * generation only from the command line, so the host cannot set this for
 * itself once it runs.
 *
 * `--max-semi-space-size=2`: a host that runs its plugin in a process of its
 * own mostly relays bytes (a CLI's stdout onto the byte lane) and allocates
 * little on its own heap, so with V8's default young generation (16 MB
 * semi-spaces) it scavenges about once in three 50 MB replays, and after a
 * mark-compact the old generation's slack is smaller than that young
 * generation, which makes V8 start marking again at once: 0 to 5
 * mark-compacts a replay, from run to run, on a heap that does not grow.
 * With 2 MB semi-spaces the isolated host ran 0 to 2 (46 replays), its CPU
 * a frame 4.4–5.6 → 2.3–3.6 µs (docs/performance-log.md, `isolation`,
 * 2026-12-06). `=1` measured the same for the host; 2 is the smaller step
 * from V8's default.
 *
 * Not the ACP front end's: its host writes every update as JSON (young
 * garbage, so it scavenges), and there the flag traded 12–19 MB for a
 * `session/load` 8–13% slower (NOTES.md, "Side by side with
 * claude-agent-acp"); README.md offers `=1` for the least memory.
 */
export const HOST_NODE_FLAGS: ReadonlyArray<string> = ["--max-semi-space-size=2"]
