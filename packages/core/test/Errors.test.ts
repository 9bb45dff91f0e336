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
