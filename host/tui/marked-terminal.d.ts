// marked-terminal 7 ships no types: the one entry point the front end uses.
declare module "marked-terminal" {
  import type { MarkedExtension } from "marked"
  export function markedTerminal(
    options?: Readonly<Record<string, unknown>>,
    highlightOptions?: Readonly<Record<string, unknown>>,
  ): MarkedExtension
}
