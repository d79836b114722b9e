import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { ICON_DATA_URL, ICON_SVG } from "./icon.ts"

describe("icon", () => {
  it("is icon.svg, word for word, and a usable data URL", () => {
    expect(ICON_SVG).toBe(readFileSync("icon.svg", "utf8").trim())
    expect(ICON_SVG.startsWith("<svg")).toBe(true)
    expect(decodeURIComponent(ICON_DATA_URL.slice(ICON_DATA_URL.indexOf(",") + 1))).toBe(ICON_SVG)
  })
})
