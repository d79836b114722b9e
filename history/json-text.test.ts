import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { indexOfKey, lastIndexOfKey, textKey } from "./json-text.ts"

/** The plain answer: the first (or last) whole `key` that lies inside `text[from, to)`. */
const naive = (text: string, key: string, from: number, to: number, last: boolean): number => {
  let found = -1
  for (let at = Math.max(0, from); at + key.length <= Math.min(to, text.length); at++)
    if (text.startsWith(key, at)) {
      if (!last) return at
      found = at
    }
  return found
}

// Keys as the list searches them, each with every anchor length it may be given (1 to 6 characters).
const KEYS = ['Title":"', '"gitBranch":"', '"type":"user"', '"isSidechain":true', '"cwd":"']
const anchored = KEYS.flatMap((key) =>
  [1, 2, 3, 4, 5, 6].flatMap((n) =>
    Array.from({ length: key.length - n + 1 }, (_, at) => ({ key, anchor: key.slice(at, at + n) })),
  ),
)

/** Text made of the keys' own pieces (partial keys, the anchors alone, whole keys), escapes and non-ASCII. */
const pieces = fc.constantFrom(
  ...KEYS,
  ...KEYS.map((k) => k.slice(0, -1)),
  ...KEYS.map((k) => k.slice(1)),
  "Title",
  "Branch",
  'userType":"external"',
  "T",
  "B",
  '\\"',
  "\\\\",
  "é",
  "日本",
  "😀",
  "\n",
  " ",
  "x",
)
const texts = fc.array(pieces, { maxLength: 40 }).map((p) => p.join(""))

describe("finding a key in decoded text", () => {
  it("finds the first and last whole key in a range, whatever piece of it the native search looks for", () => {
    fc.assert(
      fc.property(texts, fc.constantFrom(...anchored), fc.nat(), fc.nat(), (text, { key, anchor }, a, b) => {
        const k = textKey(key, anchor)
        const from = a % (text.length + 1)
        const to = from + (b % (text.length - from + 1))
        expect(indexOfKey(text, k, from, to)).toBe(naive(text, key, from, to, false))
        expect(lastIndexOfKey(text, k, from, to)).toBe(naive(text, key, from, to, true))
        expect(indexOfKey(text, k)).toBe(text.indexOf(key))
      }),
      { numRuns: 2000 },
    )
  })

  it("refuses an anchor that is not in the key, empty or longer than six characters", () => {
    expect(() => textKey('"cwd":"', "x")).toThrow()
    expect(() => textKey('"cwd":"', "")).toThrow()
    expect(() => textKey('"gitBranch":"', "gitBran")).toThrow()
  })
})
