/**
 * `npm run bench -- <name> [args]` runs `bench/<name>.ts`'s `main(args)`.
 * Each benchmark prints its figures beside their floors and ratios and, as
 * its last line, `<name>: <headline>`. A `main` that returns its figures
 * (a record of numbers) can be compared across two trees by bench/ab.ts:
 * with BENCH_FIGURES set they are written there as JSON.
 *
 * The benchmarks: mapper, history, isolation, scale, trace, undelivered,
 * acp, tui-start, ab (two trees side by side); `npm run fuzz` is the long fuzz run.
 */
import { writeFileSync } from "node:fs"

const BENCHES = ["mapper", "history", "isolation", "scale", "trace", "undelivered", "acp", "tui-start", "ab"]

const [name, ...args] = process.argv.slice(2)
if (name === undefined || !BENCHES.includes(name)) {
  console.error(`usage: npm run bench -- <${BENCHES.join("|")}> [args]`)
  process.exit(2)
}
const module = (await import(`./${name}.ts`)) as { main: (args: string[]) => unknown }
const figures = await module.main(args)
const out = process.env.BENCH_FIGURES
if (out !== undefined) {
  if (typeof figures !== "object" || figures === null) throw new Error(`bench ${name} returns no figures`)
  writeFileSync(out, JSON.stringify(figures))
}
