import { describe, expect, it } from "vitest"
import { Clock, Errors } from "../src/index.ts"

describe("constructors", () => {
  describe("ManualClock", () => {
    it("starts where it is told (0 by default) and moves only when told", () => {
      expect(new Clock.ManualClock().now()).toBe(0)
      const clock = new Clock.ManualClock(1000)
      expect(clock.now()).toBe(1000)
      expect(clock.now()).toBe(1000)
      clock.advance(500)
      expect(clock.now()).toBe(1500)
      clock.set(2000)
      expect(clock.now()).toBe(2000)
      clock.set(2000) // standing still is not moving backwards
      clock.advance(0)
      expect(clock.now()).toBe(2000)
    })

    it("never moves backwards: set to an earlier time throws InvalidTime and changes nothing", () => {
      const clock = new Clock.ManualClock(100)
      const e = (() => {
        try {
          clock.set(99)
        } catch (error) {
          return error
        }
      })() as Errors.InvalidTime
      expect(e).toBeInstanceOf(Errors.InvalidTime)
      expect(e.field).toBe("time")
      expect(e.value).toBe(99)
      expect(e.message).toContain("99")
      expect(clock.now()).toBe(100)
    })

    it("rejects times and steps that are not safe integers, and negative steps", () => {
      const clock = new Clock.ManualClock(0)
      expect(() => clock.set(1.5)).toThrow(Errors.InvalidTime)
      expect(() => clock.set(Number.NaN)).toThrow(Errors.InvalidTime)
      expect(() => clock.set(2 ** 53)).toThrow(Errors.InvalidTime)
      expect(() => clock.advance(-1)).toThrow(Errors.InvalidTime)
      expect(() => clock.advance(0.5)).toThrow(Errors.InvalidTime)
      expect(() => new Clock.ManualClock(Number.POSITIVE_INFINITY)).toThrow(Errors.InvalidTime)
      expect(clock.now()).toBe(0)
    })
  })

  describe("system", () => {
    it("reads whole, non-decreasing epoch ms", () => {
      const a = Clock.system.now()
      const b = Clock.system.now()
      expect(Number.isSafeInteger(a)).toBe(true)
      expect(b).toBeGreaterThanOrEqual(a)
      // Near the wall clock (a monotonic source anchored at the process start).
      expect(Math.abs(a - Date.now())).toBeLessThan(60_000)
    })
  })
})

describe("getters", () => {
  it("isManual tells a movable clock from others", () => {
    expect(Clock.isManual(new Clock.ManualClock())).toBe(true)
    expect(Clock.isManual(Clock.system)).toBe(false)
    expect(Clock.isManual({ now: () => 0 })).toBe(false)
  })
})

describe("ManualClock: each refusal names its field, its value and the rule (SPEC §13)", () => {
  const refusal = (f: () => void): Errors.InvalidTime => {
    try {
      f()
    } catch (error) {
      return error as Errors.InvalidTime
    }
    throw new Error("expected an InvalidTime")
  }

  it("SPEC §13: a start, a time or a step that is not a safe integer; a time earlier than now", () => {
    expect(refusal(() => new Clock.ManualClock(1.5))).toMatchObject({
      _tag: "InvalidTime",
      field: "start",
      value: 1.5,
      message: "start must be a safe integer number of epoch ms, got 1.5",
    })
    const clock = new Clock.ManualClock(100)
    expect(refusal(() => clock.set(Number.NaN))).toMatchObject({
      field: "time",
      message: "time must be a safe integer number of epoch ms, got NaN",
    })
    expect(refusal(() => clock.set(99))).toMatchObject({
      field: "time",
      value: 99,
      message: "the clock cannot move backwards: now is 100, got 99",
    })
    expect(refusal(() => clock.advance(-1))).toMatchObject({
      _tag: "InvalidTime",
      field: "ms",
      value: -1,
      message: "advance takes a non-negative integer of ms, got -1",
    })
    expect(refusal(() => clock.advance(0.5))).toMatchObject({ field: "ms", value: 0.5 })
    // A step past 2^53-1 is the moved-to time's refusal.
    expect(refusal(() => clock.advance(Number.MAX_SAFE_INTEGER))).toMatchObject({ field: "time" })
    expect(clock.now()).toBe(100)
    // The earliest and latest times are accepted.
    expect(new Clock.ManualClock(Number.MIN_SAFE_INTEGER).now()).toBe(Number.MIN_SAFE_INTEGER)
    clock.set(Number.MAX_SAFE_INTEGER)
    expect(clock.now()).toBe(Number.MAX_SAFE_INTEGER)
  })
})
