/** Typed lines into messages: pastes and `\` continuations on a terminal, one message per line from a pipe. */
import { describe, expect, it } from "vitest"
import { LineAssembler } from "./input.ts"

const collect = (joinPastes: boolean) => {
  const got: string[] = []
  const assembler = new LineAssembler(joinPastes, (m) => got.push(m))
  return { got, assembler }
}
const tick = () => new Promise((r) => setImmediate(r))

describe("typed lines", () => {
  it("keeps a paste (lines of one input chunk) as one message with its newlines", async () => {
    const { got, assembler } = collect(true)
    for (const line of ["first line", "  indented", "last"]) assembler.push(line)
    await tick()
    expect(got).toEqual(["first line\n  indented\nlast"])
  })

  it("continues a line that ends in a backslash", async () => {
    const { got, assembler } = collect(true)
    assembler.push("one \\")
    await tick()
    expect(assembler.continuing).toBe(true)
    expect(got).toEqual([])
    assembler.push("two")
    await tick()
    expect(got).toEqual(["one \ntwo"])
  })

  it("sends every piped line on its own", () => {
    const { got, assembler } = collect(false)
    for (const line of ["hello", "/model", "/quit"]) assembler.push(line)
    expect(got).toEqual(["hello", "/model", "/quit"])
  })
})
