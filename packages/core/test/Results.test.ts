/** The kept-result rule (SPEC §19.3): JSON text within the bound is kept; past it, a typed error. */
import { describe, expect, it } from "vitest"
import { Errors, Results } from "../src/index.ts"

describe("kept results (SPEC §19.3)", () => {
  it("keeps JSON text of exactly the limit, and refuses one byte more naming task, size and limit", () => {
    const json = JSON.stringify("x".repeat(98)) // 100 bytes
    expect(Results.keep("t", json, 100)).toEqual({ kind: "kept", json })
    const refused = Results.keep("t", json, 99)
    expect(refused.kind).toBe("refused")
    if (refused.kind !== "refused") return
    expect(refused.error).toBeInstanceOf(Results.ResultTooLarge)
    expect(refused.error).toMatchObject({ taskId: "t", bytes: 100, limit: 99 })
    expect(refused.error.message).toContain('task "t"')
    expect(refused.error.message).toContain("100 bytes")
    expect(refused.error.message).toContain("99 bytes")
  })

  it("counts UTF-8 bytes, not UTF-16 units", () => {
    // "é" is 2 bytes, "€" 3, "😀" 4 (a surrogate pair), a lone surrogate 3.
    expect(Results.utf8Bytes("aé€😀")).toBe(1 + 2 + 3 + 4)
    expect(Results.utf8Bytes("\ud800")).toBe(3)
    expect(Results.utf8Bytes("\ud800x")).toBe(4)
    const json = JSON.stringify("€".repeat(30)) // 2 + 90 bytes, 32 units
    expect(Results.keep("t", json, 92).kind).toBe("kept")
    expect(Results.keep("t", json, 91)).toMatchObject({ error: { bytes: 92, limit: 91 } })
    expect(Results.utf8Bytes(json)).toBe(Buffer.byteLength(json, "utf8"))
  })

  it("keepValue: nothing for undefined, a typed error for what JSON cannot write", () => {
    expect(Results.keepValue("t", undefined, 10)).toBeUndefined()
    expect(Results.keepValue("t", { n: 1 }, 10)).toEqual({ kind: "kept", json: '{"n":1}' })
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const c = Results.keepValue("t", cyclic, 10)
    expect(c).toMatchObject({ kind: "refused", error: { _tag: "ResultEncodeError", taskId: "t" } })
    expect(Results.keepValue("t", 1n, 10)).toMatchObject({ error: { _tag: "ResultEncodeError" } })
    expect(Results.keepValue("t", () => 1, 10)).toMatchObject({
      error: { _tag: "ResultEncodeError" },
    })
    expect(Results.keepValue("t", "x".repeat(20), 10)).toMatchObject({
      error: { _tag: "ResultTooLarge", bytes: 22, limit: 10 },
    })
  })

  it("maxResultBytes is 64 KiB by default, at least 1 and at most 8 MiB", () => {
    expect(Results.maxBytes("maxResultBytes", undefined)).toBe(65_536)
    expect(Results.maxBytes("maxResultBytes", 8_388_608)).toBe(8_388_608)
    for (const bad of [0, 8_388_609, 1.5, Number.NaN]) {
      const e = Results.maxBytes("maxResultBytes", bad)
      expect(e).toBeInstanceOf(Errors.InvalidOption)
      expect(e).toMatchObject({ field: "maxResultBytes", value: bad })
    }
  })
})

describe("the byte count at each UTF-8 boundary (SPEC §19.3)", () => {
  it("SPEC §19.3: counts as UTF-8 does at every width's first and last code unit", () => {
    const texts = [
      "\u007f",
      "\u0080",
      "\u07ff",
      "\u0800",
      "\ud7ff",
      "\ud800\udc00",
      "\udbff\udfff",
      "\udbff",
      "\udc00",
      "\ue000",
      "\uffff",
      "\ud800\udbff",
      "\ud800\ue000",
      "a\ud800",
      "\ud800",
      "\u0800\udc00",
      "\ue000\udc00",
      "a\udc00",
    ]
    for (const text of texts) {
      expect(Results.utf8Bytes(text), JSON.stringify(text)).toBe(Buffer.byteLength(text, "utf8"))
    }
  })

  it("SPEC §19.3: a text of three bytes a unit at most is kept up to the limit, and no further", () => {
    const json = JSON.stringify("€".repeat(10)) // 12 units, 32 bytes
    expect(Results.keep("t", json, 36)).toEqual({ kind: "kept", json })
    expect(Results.keep("t", json, 32)).toEqual({ kind: "kept", json })
    expect(Results.keep("t", json, 31)).toMatchObject({ kind: "refused", error: { bytes: 32 } })
    expect(Results.keepValue("t", () => 1, 10)).toMatchObject({
      error: { message: 'the result of task "t" cannot be kept: JSON cannot write a function' },
    })
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const refused = Results.keepValue("t", cyclic, 10)
    expect(refused).toMatchObject({ kind: "refused" })
    expect(refused?.kind === "refused" && refused.error.message).toMatch(
      /^the result of task "t" cannot be kept: JSON cannot write it \(TypeError: /,
    )
  })
})
