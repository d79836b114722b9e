/**
 * A yes-or-no check compiled once from a Zod schema: the same answer as
 * `schema.safeParse(value).success`, without building Zod's parse contexts,
 * issue lists or copies (the decoders keep the parsed JSON and only ask
 * whether it fits). Zod stays the source of truth: the check is derived from
 * the schema's own definition, and a kind of schema this file does not know
 * (or one with refinements, checks or transforms) is answered by Zod itself.
 * wire-check.test.ts holds the two equal on recorded and mutated frames.
 *
 * Rules kept (Zod 4.6 semantics, checked by that test):
 * - an object is any non-null, non-array object; a named key is read with
 *   `value[key]` (as Zod does) and is missing when `!(key in value)`: that
 *   fails unless the key's schema is optional on input (`optin`);
 * - a number is finite (Zod refuses NaN and ±Infinity);
 * - a record is a non-null, non-array object whose own keys' values fit,
 *   `__proto__` aside (values from JSON are plain objects: Zod's
 *   `isPlainObject` holds for every one);
 * - no closure is compiled from strings (the plugin runs with code
 *   generation from strings disallowed): checks are composed closures.
 */
import type { z } from "zod"

export type Check = (value: unknown) => boolean

interface Def {
  readonly type: string
  readonly shape?: Record<string, z.ZodType>
  readonly catchall?: z.ZodType
  readonly innerType?: z.ZodType
  readonly element?: z.ZodType
  readonly options?: ReadonlyArray<z.ZodType>
  readonly keyType?: z.ZodType
  readonly valueType?: z.ZodType
  readonly values?: ReadonlyArray<unknown>
  readonly checks?: ReadonlyArray<unknown>
}
interface Internals {
  readonly def: Def
  readonly optin?: "optional"
}
const internals = (schema: z.ZodType): Internals => (schema as unknown as { _zod: Internals })._zod

const isObjectValue = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const byZod =
  (schema: z.ZodType): Check =>
  (value) =>
    schema.safeParse(value).success

const objectCheck = (shape: Record<string, z.ZodType>): Check => {
  const keys = Object.keys(shape)
  const checks = keys.map((key) => compileCheck(shape[key] as z.ZodType))
  const optional = keys.map((key) => internals(shape[key] as z.ZodType).optin === "optional")
  const n = keys.length
  return (value) => {
    if (!isObjectValue(value)) return false
    for (let i = 0; i < n; i++) {
      const key = keys[i] as string
      const field = value[key]
      if (field === undefined && !(key in value)) {
        if (!optional[i]) return false
        continue
      }
      if (!(checks[i] as Check)(field)) return false
    }
    return true
  }
}

const uncached = (schema: z.ZodType): Check => {
  const { def } = internals(schema)
  if (def.checks !== undefined && def.checks.length > 0) return byZod(schema)
  switch (def.type) {
    case "string":
      return (value) => typeof value === "string"
    case "number":
      return (value) => typeof value === "number" && Number.isFinite(value)
    case "boolean":
      return (value) => typeof value === "boolean"
    case "unknown":
    case "any":
      return () => true
    case "literal": {
      const values = def.values ?? []
      return (value) => values.includes(value)
    }
    case "optional": {
      const inner = compileCheck(def.innerType as z.ZodType)
      return (value) => value === undefined || inner(value)
    }
    case "nullable": {
      const inner = compileCheck(def.innerType as z.ZodType)
      return (value) => value === null || inner(value)
    }
    case "array": {
      const element = compileCheck(def.element as z.ZodType)
      return (value) => {
        if (!Array.isArray(value)) return false
        for (const item of value) if (!element(item)) return false
        return true
      }
    }
    case "union": {
      const options = (def.options ?? []).map(compileCheck)
      return (value) => {
        for (const option of options) if (option(value)) return true
        return false
      }
    }
    case "record": {
      if (internals(def.keyType as z.ZodType).def.type !== "string") return byZod(schema)
      const element = compileCheck(def.valueType as z.ZodType)
      return (value) => {
        if (!isObjectValue(value)) return false
        // Zod skips a `__proto__` key (JSON.parse makes it an own key) rather than judge it.
        for (const key of Object.keys(value)) if (key !== "__proto__" && !element(value[key])) return false
        return true
      }
    }
    case "object": {
      // A loose object's catchall is unknown (anything passes); any other catchall is Zod's to judge.
      const catchall = def.catchall
      if (catchall !== undefined && internals(catchall).def.type !== "unknown") return byZod(schema)
      return objectCheck(def.shape ?? {})
    }
    default:
      return byZod(schema)
  }
}

const compiled = new WeakMap<z.ZodType, Check>()

/** The check of `schema`, compiled on first use and kept. */
export const compileCheck = (schema: z.ZodType): Check => {
  let check = compiled.get(schema)
  if (check === undefined) {
    check = uncached(schema)
    compiled.set(schema, check)
  }
  return check
}
