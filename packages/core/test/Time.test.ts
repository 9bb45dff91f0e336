import { DateTime, Duration } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Errors, Time } from "../src/index.ts"

const MAX = Number.MAX_SAFE_INTEGER

describe("constructors", () => {
  describe("toDelay", () => {
    it("accepts whole, non-negative, safe numbers of ms as they are", () => {
      for (const ms of [0, 1, 999, 2 ** 31, 2 ** 40, MAX]) expect(Time.toDelay(ms)).toBe(ms)
    })

    it("accepts every safe integer >= 0 unchanged (no rounding anywhere)", () => {
      fc.assert(fc.property(fc.maxSafeNat(), (ms) => Time.toDelay(ms) === ms))
    })

    it.each([
      [Number.NaN, "finite"],
      [Number.POSITIVE_INFINITY, "finite"],
      [1.5, "whole number"],
      [0.1 + 0.2, "whole number"],
      [2 ** 53, "2^53-1"],
      [-1, "negative"],
      [Number.MIN_SAFE_INTEGER, "negative"],
    ])("rejects %s with an InvalidDelay (%s)", (ms, reason) => {
      const e = Time.toDelay(ms) as Errors.InvalidDelay
      expect(e).toBeInstanceOf(Errors.InvalidDelay)
      expect(e.field).toBe("delay")
      expect(Object.is(e.value, ms)).toBe(true)
      expect(e.message).toContain(reason)
      expect(e.message).toContain(String(ms))
    })

    it("converts Effect durations to whole ms exactly", () => {
      expect(Time.toDelay("5 seconds")).toBe(5000)
      expect(Time.toDelay("2 minutes")).toBe(120_000)
      expect(Time.toDelay(Duration.millis(3))).toBe(3)
      expect(Time.toDelay(Duration.days(30))).toBe(30 * 86_400_000)
      expect(Time.toDelay({ seconds: 1, milliseconds: 250 })).toBe(1250)
      expect(Time.toDelay(3_000_000n)).toBe(3) // a bigint is nanoseconds
      expect(Time.toDelay("2000 micros")).toBe(2)
      expect(Time.toDelay("0 millis")).toBe(0)
    })

    it("rejects a sub-millisecond part instead of rounding it", () => {
      for (const input of ["1.5 millis", "1500 micros", Duration.nanos(1n), 1_500_000n] as const) {
        const e = Time.toDelay(input) as Errors.InvalidDelay
        expect(e._tag).toBe("InvalidDelay")
        expect(e.message).toContain("sub-millisecond")
      }
    })

    it("rejects infinite, negative and unparseable durations", () => {
      expect((Time.toDelay(Duration.infinity) as Errors.InvalidDelay).message).toContain("finite")
      expect((Time.toDelay("-5 seconds") as Errors.InvalidDelay).message).toContain("negative")
      expect((Time.toDelay("soon" as never) as Errors.InvalidDelay).message).toContain(
        "not a duration",
      )
    })

    it("rejects a duration beyond 2^53-1 ms", () => {
      const e = Time.toDelay(BigInt(MAX) * 1_000_000n + 1_000_000n) as Errors.InvalidDelay
      expect(e.message).toContain("2^53-1")
    })

    it("names the field it is told to", () => {
      expect((Time.toDelay(-1, "retry.base") as Errors.InvalidDelay).field).toBe("retry.base")
    })
  })

  describe("toInstant", () => {
    it("accepts any safe integer epoch ms, past ones included, and Dates", () => {
      expect(Time.toInstant(0)).toBe(0)
      expect(Time.toInstant(-5)).toBe(-5)
      expect(Time.toInstant(MAX)).toBe(MAX)
      expect(Time.toInstant(new Date(1234))).toBe(1234)
    })

    it.each([[1.5], [Number.NaN], [2 ** 53], [new Date(Number.NaN)]])(
      "rejects %s with an InvalidTime",
      (input) => {
        const e = Time.toInstant(input) as Errors.InvalidTime
        expect(e._tag).toBe("InvalidTime")
        expect(e.field).toBe("time")
        expect(e.value).toBe(input)
      },
    )
  })
})

describe("combinators", () => {
  it("slotAfter adds exactly up to 2^53-1 and refuses to pass it", () => {
    expect(Time.MAX_MS).toBe(2 ** 53 - 1)
    expect(Time.slotAfter(MAX - 10, 10, "delay", 10)).toBe(MAX)
    const e = Time.slotAfter(MAX - 10, 11, "delay", 11) as Errors.InvalidDelay
    expect(e._tag).toBe("InvalidDelay")
    expect(e.value).toBe(11)
    expect(e.message).toContain("2^53-1")
  })

  it("toMillisWith hands the reason to the caller's error constructor", () => {
    expect(Time.toMillisWith(-3, (reason) => `bad: ${reason}`)).toBe("bad: must not be negative")
    expect(Time.toMillisWith("1 second", () => "bad")).toBe(1000)
  })
})

describe("bounds and messages of durations and instants (SPEC §2, §13)", () => {
  it("SPEC §2: a duration of exactly 2^53-1 ms is accepted; 1 ms more is refused", () => {
    expect(Time.toDelay(Duration.millis(MAX))).toBe(MAX)
    expect(Time.toDelay(BigInt(MAX) * 1_000_000n)).toBe(MAX)
    const over = Time.toDelay(BigInt(MAX + 1) * 1_000_000n) as Errors.InvalidDelay
    expect(over.message).toBe(`delay must be at most 2^53-1 ms, got ${MAX + 1}000000n`)
    expect((Time.toDelay(-1) as Errors.InvalidDelay).message).toBe(
      "delay must not be negative, got -1",
    )
    expect((Time.toDelay(Duration.infinity) as Errors.InvalidDelay).message).toMatch(
      /^delay must be finite, got /,
    )
  })

  it("SPEC §13: toInstant takes a DateTime and names its field and the rule", () => {
    expect(Time.toInstant(DateTime.makeUnsafe(1234))).toBe(1234)
    expect(Time.toInstant(1.5, "at")).toMatchObject({
      field: "at",
      value: 1.5,
      message: "at must be a safe integer number of epoch milliseconds, got 1.5",
    })
    expect(Time.toInstant("5" as never)).toMatchObject({ _tag: "InvalidTime", value: "5" })
  })

  it("SPEC §13: slotAfter names the field, the value and the time it counted from", () => {
    expect(Time.slotAfter(MAX - 10, 11, "retry.base", "11 millis")).toMatchObject({
      field: "retry.base",
      value: "11 millis",
      message: `retry.base "11 millis" from now=${MAX - 10} puts the slot beyond 2^53-1 ms`,
    })
  })
})
