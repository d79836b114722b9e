/**
 * The sizes the plugin accepts from the CLI, in one place, and the one way a
 * long text is cut for a notice or an error.
 *
 * Why these numbers (CLI 2.1.332):
 * - a stdout line is capped at 128 MiB. The largest frames the CLI writes
 *   carry a file the Read tool returned: text reads stop at 256 KiB, images
 *   are resized, and a PDF may be up to 20 MiB (`PDF file exceeds maximum
 *   allowed size of 20MB`), about 27 MiB as base64, carried twice in its
 *   `user` frame (the tool_result block and `tool_use_result`): ~56 MiB. The
 *   cap is more than twice that; past it a line is skipped, not held;
 * - nesting deeper than 128 is dropped where it enters (wire.ts): recorded
 *   frames nest at most 9 deep, and every reader downstream (JSON.stringify,
 *   the host's renderers) recurses, each far deeper than 128 before its
 *   stack runs out. Only a line with at least 128 `{`/`[` can nest that deep
 *   and is walked: 64 would also walk every `initialize` answer (103);
 * - stderr is for people: a line of it is capped at 64 KiB when read, and
 *   the tail kept for the exit notice holds 20 lines of at most 1,000
 *   characters;
 * - a notice or an error built from the CLI's text carries at most 2,000
 *   characters of it.
 */

export const MAX_LINE_BYTES = 128 * 1024 * 1024
export const MAX_DEPTH = 128
export const MAX_STDERR_LINE_BYTES = 64 * 1024
export const STDERR_TAIL_LINES = 20
export const STDERR_LINE_CHARS = 1_000
export const EXCERPT_CHARS = 2_000

/** `text` cut to `max` characters, saying how long it was. */
export const excerpt = (text: string, max: number = EXCERPT_CHARS): string =>
  text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters in all)`

/** The last `max` characters of `text` (the end of a log is what explains it). */
export const tailExcerpt = (text: string, max: number = EXCERPT_CHARS): string =>
  text.length <= max ? text : `(${text.length - max} characters before) …${text.slice(text.length - max)}`
