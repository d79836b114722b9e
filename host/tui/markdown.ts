/**
 * Markdown answers for the terminal, laid out by markdown-parser.ts (marked
 * and marked-terminal), which is loaded after the input line is up
 * (`loadMarkdown`; until then, and without colour, the text is left as the
 * model wrote it: raw markdown is the most faithful plain text).
 *
 * Streams are rendered a block at a time: a block ends at a blank line
 * outside a code fence, or when the fence closes, so a paragraph, a list, a
 * table or a code block is laid out once it is whole and the screen only
 * ever gets whole lines.
 */
export interface MarkdownOptions {
  readonly color: boolean
  /** Columns to lay tables and rules out in. */
  readonly width: () => number
}

const FENCE = /^\s{0,3}(```|~~~)/

let parserFor: ((width: number) => (source: string) => string) | undefined
let loading: Promise<void> | undefined

/** Load the layout (once); markdown rendered before it is shown as written. */
export const loadMarkdown = (): Promise<void> => {
  loading ??= import("./markdown-parser.ts").then((m) => {
    parserFor = m.markdownParser
  })
  return loading
}

/** Render one whole block of markdown as terminal lines (no trailing newline). */
export const makeMarkdown = (options: MarkdownOptions) => {
  let parse: ((source: string) => string) | undefined
  let builtFor = 0
  return (source: string): string => {
    const text = source.replace(/\s+$/, "")
    if (!options.color || text === "" || !parserFor) return text
    const width = Math.max(20, options.width())
    if (!parse || builtFor !== width) {
      parse = parserFor(width)
      builtFor = width
    }
    try {
      return parse(text).replace(/\s+$/, "")
    } catch {
      // A block marked cannot lay out is shown as written.
      return text
    }
  }
}

/** A text stream cut into whole markdown blocks. */
export class MarkdownStream {
  private buffer = ""
  private blocks = 0

  constructor(private readonly render: (block: string) => string) {}

  /** Add streamed text; answers the lines of every block it completed ("" for none). */
  push(text: string): string {
    this.buffer += text
    let out = ""
    for (;;) {
      const end = blockEnd(this.buffer)
      if (end === undefined) return out
      out += this.emit(this.buffer.slice(0, end))
      this.buffer = this.buffer.slice(end)
    }
  }

  /** The stream ended: the rest, whole or not. */
  end(): string {
    const rest = this.buffer
    this.buffer = ""
    return this.emit(rest)
  }

  private emit(block: string): string {
    if (block.trim() === "") return ""
    const rendered = this.render(block)
    if (rendered === "") return ""
    // Blocks of one answer keep the blank line that parted them.
    const gap = this.blocks++ > 0 ? "\n" : ""
    return `${gap}${rendered}\n`
  }
}

/** Where the first whole block of `text` ends (after its closing line), or undefined. */
const blockEnd = (text: string): number | undefined => {
  let inFence = false
  let at = 0
  let sawContent = false
  for (;;) {
    const nl = text.indexOf("\n", at)
    if (nl < 0) return undefined
    const line = text.slice(at, nl)
    at = nl + 1
    if (FENCE.test(line)) {
      if (inFence) return at
      inFence = true
      sawContent = true
      continue
    }
    if (inFence) continue
    if (line.trim() === "") {
      if (sawContent) return at
      continue
    }
    sawContent = true
  }
}
