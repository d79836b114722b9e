/**
 * The small value helpers every decoder here needs, once.
 *
 * The CLI's frames and transcripts are JSON of loosely known shape; these read
 * one value without trusting it. They never throw and never coerce: a value of
 * the wrong kind is `undefined` (or `{}` for a record).
 */

/** A plain object (not null, not an array). */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The value as a read-only record, `{}` when it is not a plain object. */
export const asRecord = (value: unknown): Readonly<Record<string, unknown>> => (isObject(value) ? value : {})

/** The value when it is a string. */
export const asString = (value: unknown): string | undefined =>
  typeof value === "string" ? value : undefined

/** The value when it is a non-empty string. */
export const nonEmpty = (value: unknown): string | undefined =>
  typeof value === "string" && value !== "" ? value : undefined

/** The value trimmed, when it is a string with something besides white space. */
export const trimmed = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value.trim() : undefined

/** The strings of a list, anything else dropped. */
export const stringsOf = (values: ReadonlyArray<unknown> | null | undefined): string[] =>
  values ? values.filter((v): v is string => typeof v === "string") : []

/** The value as it is, when it is a string with something besides white space. */
export const notBlank = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value : undefined
