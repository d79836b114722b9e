/**
 * The markdown layout itself: `marked` parses, `marked-terminal` lays out
 * (headings, emphasis, lists, code fences highlighted by cli-highlight,
 * tables, links). Heavy to load, so markdown.ts imports it once the input
 * line is up.
 */
import { Marked } from "marked"
import { markedTerminal } from "marked-terminal"

/** A parser laying markdown out in `width` columns. */
export const markdownParser = (width: number): ((source: string) => string) => {
  const marked = new Marked()
  marked.use(markedTerminal({ width, reflowText: false, tab: 2, emoji: false }, {}))
  return (source) => marked.parse(source) as string
}
