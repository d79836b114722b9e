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

/**
 * What a field's check is, when it is one of the common leaves (a string,
 * number or boolean, maybe nullish, or anything): the object's loop tests
 * those in place instead of calling a closure per field, the hot path's cost.
 */
const Leaf = { None: 0, Any: 1, Str: 2, OptStr: 3, Num: 4, OptNum: 5, Bool: 6, OptBool: 7 } as const
type Leaf = (typeof Leaf)[keyof typeof Leaf]

/** `optional(nullable(x))` or `nullable(optional(x))`: the inner x, else undefined. */
const nullishInner = (schema: z.ZodType): z.ZodType | undefined => {
  const outer = internals(schema).def
  if (outer.type !== "optional" && outer.type !== "nullable") return undefined
  const inner = internals(outer.innerType as z.ZodType).def
  const other = outer.type === "optional" ? "nullable" : "optional"
  return inner.type === other && (inner.checks ?? []).length === 0 && (outer.checks ?? []).length === 0
    ? inner.innerType
    : undefined
}

const leafOf = (schema: z.ZodType): Leaf => {
  const plain = (s: z.ZodType): Leaf => {
    const def = internals(s).def
    if ((def.checks ?? []).length > 0) return Leaf.None
    return def.type === "string"
      ? Leaf.Str
      : def.type === "number"
        ? Leaf.Num
        : def.type === "boolean"
          ? Leaf.Bool
          : def.type === "unknown" || def.type === "any"
            ? Leaf.Any
            : Leaf.None
  }
  const inner = nullishInner(schema)
  if (inner === undefined) return plain(schema)
  const leaf = plain(inner)
  return leaf === Leaf.Str
    ? Leaf.OptStr
    : leaf === Leaf.Num
      ? Leaf.OptNum
      : leaf === Leaf.Bool
        ? Leaf.OptBool
        : leaf === Leaf.Any
          ? Leaf.Any
          : Leaf.None
}

const fits = (leaf: Leaf, value: unknown): boolean => {
  switch (leaf) {
    case Leaf.Any:
      return true
    case Leaf.Str:
      return typeof value === "string"
    case Leaf.OptStr:
      return value === undefined || value === null || typeof value === "string"
    case Leaf.Num:
      return typeof value === "number" && Number.isFinite(value)
    case Leaf.OptNum:
      return value === undefined || value === null || (typeof value === "number" && Number.isFinite(value))
    case Leaf.Bool:
      return typeof value === "boolean"
    case Leaf.OptBool:
      return value === undefined || value === null || typeof value === "boolean"
    default:
      return false
  }
}

const objectCheck = (shape: Record<string, z.ZodType>): Check => {
  const keys = Object.keys(shape)
  const leaves = keys.map((key) => leafOf(shape[key] as z.ZodType))
  const checks = keys.map((key, i) =>
    leaves[i] === Leaf.None ? compileCheck(shape[key] as z.ZodType) : undefined,
  )
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
      const leaf = leaves[i] as Leaf
      if (leaf === Leaf.None ? !(checks[i] as Check)(field) : !fits(leaf, field)) return false
    }
    return true
  }
}

const uncached = (schema: z.ZodType): Check => {
  const { def } = internals(schema)
  if (def.checks !== undefined && def.checks.length > 0) return byZod(schema)
  const inner = nullishInner(schema)
  if (inner !== undefined) {
    const check = compileCheck(inner)
    return (value) => value === undefined || value === null || check(value)
  }
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
      const leaf = leafOf(def.element as z.ZodType)
      if (leaf === Leaf.Any) return Array.isArray
      if (leaf !== Leaf.None)
        return (value) => {
          if (!Array.isArray(value)) return false
          for (const item of value) if (!fits(leaf, item)) return false
          return true
        }
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
