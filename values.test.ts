import { describe, expect, it } from "vitest"
import { asRecord, asString, isObject, nonEmpty, notBlank, stringsOf, trimmed } from "./values.ts"

describe("values", () => {
  it("tells plain objects from arrays and null", () => {
    expect(isObject({})).toBe(true)
    expect(isObject([])).toBe(false)
    expect(isObject(null)).toBe(false)
    expect(asRecord([1])).toEqual({})
    expect(asRecord({ a: 1 })).toEqual({ a: 1 })
  })
  it("reads strings without coercing", () => {
    expect(asString(1)).toBeUndefined()
    expect(asString("")).toBe("")
    expect(nonEmpty("")).toBeUndefined()
    expect(trimmed("  a ")).toBe("a")
    expect(trimmed("   ")).toBeUndefined()
    expect(stringsOf(["a", 1, null, "b"])).toEqual(["a", "b"])
    expect(stringsOf(undefined)).toEqual([])
  })
  it("keeps a string with text as it is, white space included", () => {
    expect(notBlank(" a ")).toBe(" a ")
    expect(notBlank(" \n")).toBeUndefined()
    expect(notBlank(1)).toBeUndefined()
  })
})
