import { describe, expect, it } from "vitest"
import { indexOfBytes, lastIndexOfBytes, needle, startsWith, stringEnd } from "./bytes.ts"

const bytes = (text: string) => new TextEncoder().encode(text)

describe("byte searches", () => {
  const text = bytes('{"type":"user","gitBranch":"main"} The gitBranch "gitBranch":"dev" é"gitBranch":"x')
  const key = needle('"gitBranch":"')

  it("anchors a native search on the key's rarest letter", () => {
    expect(String.fromCharCode(key.bytes[key.anchor] as number)).toBe("B")
    expect(needle('"type":"user"').bytes.length).toBe(13)
  })

  it("finds the first and last whole key, not a partial one or one in plain text", () => {
    const all = [...new TextDecoder().decode(text).matchAll(/"gitBranch":"/g)].map((m) => m.index)
    // é is two bytes: byte offsets after it shift by one.
    expect(indexOfBytes(text, key)).toBe(all[0])
    expect(lastIndexOfBytes(text, key)).toBe((all[2] as number) + 1)
    expect(lastIndexOfBytes(text, key, (all[2] as number) - 1)).toBe(all[1])
    expect(indexOfBytes(text, key, (all[0] as number) + 1, (all[1] as number) + 12)).toBe(-1)
    expect(indexOfBytes(text, key, (all[0] as number) + 1, (all[1] as number) + 13)).toBe(all[1])
  })

  it("answers -1 when the bytes are shorter than the key or hold none", () => {
    expect(lastIndexOfBytes(bytes('"git'), key)).toBe(-1)
    expect(indexOfBytes(bytes(""), key)).toBe(-1)
    expect(lastIndexOfBytes(bytes("no key here at all, none"), key)).toBe(-1)
  })

  it("checks a prefix in place, out of range is no match", () => {
    expect(startsWith(bytes("abc"), bytes("bc"), 1)).toBe(true)
    expect(startsWith(bytes("abc"), bytes("bc"), 2)).toBe(false)
    expect(startsWith(bytes("abc"), bytes("a"), -1)).toBe(false)
  })

  it("ends a JSON string at the first quote no backslash escapes", () => {
    const s = bytes(String.raw`"a\"b\\"c`)
    expect(stringEnd(s, 0)).toBe(7)
    expect(stringEnd(bytes(String.raw`"cut \"`), 0)).toBe(-1)
  })
})
