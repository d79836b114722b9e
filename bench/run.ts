/**
 * `npm run bench -- <name>` runs `bench/<name>.ts`: the module either does its
 * work when imported, or exports `main(args)`, which is called and awaited.
 * Each benchmark prints its figures and, as its last line, `<name>: <headline>`.
 * The benchmarks: `mapper`, `history`, `isolation`, `trace`, `scale` (its live half alone:
 * `scale-live`), `acp`, `undelivered`, `storage`, `tui-start`.
 */
const [name, ...args] = process.argv.slice(2)
if (name === undefined || !/^[a-z0-9][a-z0-9-]*$/.test(name)) {
  console.error(
    "usage: npm run bench -- <mapper|history|scale|scale-live|trace|isolation|acp|undelivered|storage|tui-start>   (a file bench/<name>.ts)",
  )
  process.exit(2)
}
const module = (await import(`./${name}.ts`)) as { main?: (args: string[]) => unknown }
if (typeof module.main === "function") await module.main(args)
