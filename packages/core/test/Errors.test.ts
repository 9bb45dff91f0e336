import { describe, expect, it } from "vitest"
import { Errors } from "../src/index.ts"

const fieldErrors = [
  Errors.InvalidDelay,
  Errors.InvalidTime,
  Errors.InvalidPeriod,
  Errors.InvalidPriority,
  Errors.InvalidRetryPolicy,
  Errors.InvalidCronExpression,
  Errors.InvalidTimeZone,
  Errors.DuplicateTaskId,
  Errors.InvalidOption,
] as const

describe("errors", () => {
  it("every schedule error is an Error with its own tag, field, value and message", () => {
    const tags = new Set<string>()
    for (const E of fieldErrors) {
      const e = new E({ field: "f", value: 1, message: "f is bad, got 1" })
      expect(e).toBeInstanceOf(Error)
      expect(e.field).toBe("f")
      expect(e.value).toBe(1)
      expect(e.message).toBe("f is bad, got 1")
      expect(Errors.isScheduleError(e)).toBe(true)
      tags.add(e._tag)
    }
    expect(tags.size).toBe(fieldErrors.length)
  })

  it("isScheduleError rejects everything else", () => {
    expect(Errors.isScheduleError(new Error("x"))).toBe(false)
    expect(Errors.isScheduleError(new Errors.SchedulerClosed({ message: "closed" }))).toBe(false)
    expect(Errors.isScheduleError(new Errors.InvariantViolation({ message: "x" }))).toBe(false)
    expect(Errors.isScheduleError({ _tag: "Nope" })).toBe(false)
    expect(Errors.isScheduleError(null)).toBe(false)
    expect(Errors.isScheduleError("InvalidDelay")).toBe(false)
  })

  it("show renders rejected values the way a message should name them", () => {
    expect(Errors.show("x")).toBe('"x"')
    expect(Errors.show(1.5)).toBe("1.5")
    expect(Errors.show(Number.NaN)).toBe("NaN")
    expect(Errors.show(3n)).toBe("3n")
    expect(Errors.show(() => 1)).toBe("a function")
    expect(Errors.show(new Date(5))).toBe("Date(5)")
    expect(Errors.show({ a: 1 })).toBe('{"a":1}')
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(Errors.show(cyclic)).toBe("[object Object]")
    expect(Errors.show(undefined)).toBe("undefined")
  })
})

describe("unknownKey and show: what a refusal says (SPEC §13)", () => {
  it("SPEC §13: an unknown option is named with its path and value, and the known ones listed", () => {
    const known = new Set(["a", "b"])
    expect(Errors.unknownKey({ a: 1, b: 2 }, known)).toBeUndefined()
    expect(Errors.unknownKey({}, known)).toBeUndefined()
    const e = Errors.unknownKey({ a: 1, c: 3 }, known, "retry.")
    expect(e).toBeInstanceOf(Errors.InvalidOption)
    expect(e).toMatchObject({
      field: "retry.c",
      value: 3,
      message: "retry.c is not a known option (known: a, b)",
    })
    expect(Errors.unknownKey({ z: 0 }, known)).toMatchObject({ field: "z", value: 0 })
  })

  it("show: null, symbols, arrays and objects whose JSON is nothing", () => {
    expect(Errors.show(null)).toBe("null")
    expect(Errors.show(true)).toBe("true")
    expect(Errors.show([1, "a"])).toBe('[1,"a"]')
    expect(Errors.show({ toJSON: () => undefined })).toBe("[object Object]")
    expect(Errors.show(Symbol("s"))).toBe("Symbol(s)")
    expect(Errors.show("")).toBe('""')
  })

  it("isScheduleError: a value carrying a schedule error's tag is one, whatever its class", () => {
    expect(Errors.isScheduleError({ _tag: "InvalidOption" })).toBe(true)
    expect(Errors.isScheduleError({})).toBe(false)
    expect(Errors.isScheduleError(undefined)).toBe(false)
  })
})
