import { Cron, Duration, Result } from "effect"
import { describe, expect, it } from "vitest"
import { Clock, Driver, MissedRun, Schedule } from "../src/index.ts"

const resolve = (schedule: Schedule.Schedule, now: number): Schedule.Resolved => {
  const r = Schedule.resolve(schedule, now)
  if (!("first" in r)) throw new Error(r.message)
  return r
}

describe("constructors", () => {
  it("build plain data with the documented defaults", () => {
    expect(Schedule.once(5)).toEqual({ _tag: "Once", delay: 5 })
    expect(Schedule.at(7)).toEqual({ _tag: "At", time: 7 })
    expect(Schedule.fixedRate(10)).toEqual({ _tag: "FixedRate", period: 10, delay: 0 })
    expect(Schedule.fixedDelay("1 second", { delay: 3 })).toEqual({
      _tag: "FixedDelay",
      period: "1 second",
      delay: 3,
    })
    expect(Schedule.cron("0 9 * * *")).toEqual({
      _tag: "Cron",
      expression: "0 9 * * *",
      timeZone: "UTC",
    })
  })

  describe("resolve: first slots (SPEC §3)", () => {
    it("once: now + delay, no plan", () => {
      expect(resolve(Schedule.once(25), 100)).toEqual({ first: 125, plan: undefined })
      expect(resolve(Schedule.once("2 seconds"), 100).first).toBe(2100)
    })

    it("at: the instant itself, in the past too", () => {
      expect(resolve(Schedule.at(50), 100)).toEqual({ first: 50, plan: undefined })
      expect(resolve(Schedule.at(new Date(500)), 100).first).toBe(500)
    })

    it("fixed rate: now + delay, on a grid of the period from there", () => {
      const r = resolve(Schedule.fixedRate(10, { delay: 5 }), 100)
      expect(r.first).toBe(105)
      expect(r.plan).toMatchObject({ kind: "fixed-rate", period: 10 })
      const plan = r.plan as Extract<Schedule.Plan, { kind: "fixed-rate" }>
      expect(plan.grid.after(105)).toBe(115)
    })

    it("fixed delay: now + delay", () => {
      const r = resolve(Schedule.fixedDelay(Duration.millis(30), { delay: 0 }), 100)
      expect(r).toEqual({ first: 100, plan: { kind: "fixed-delay", period: 30 } })
    })

    it("cron: the first match strictly after now", () => {
      const hourly = Schedule.cron("0 * * * *")
      const ten = Date.parse("2026-01-01T10:00:00Z")
      expect(resolve(hourly, ten - 1).first).toBe(ten)
      expect(resolve(hourly, ten).first).toBe(ten + 3_600_000)
      expect(resolve(hourly, ten + 1).first).toBe(ten + 3_600_000)
      // Six fields: seconds first.
      expect(resolve(Schedule.cron("*/20 * * * * *"), ten + 1).first).toBe(ten + 20_000)
    })

    it("custom: next(undefined, now)", () => {
      const calls: Array<[number | undefined, number]> = []
      const r = resolve(
        Schedule.custom((slot, at) => {
          calls.push([slot, at])
          return at + 7
        }),
        100,
      )
      expect(r.first).toBe(107)
      expect(calls).toEqual([[undefined, 100]])
    })
  })

  describe("resolve: rejected schedules", () => {
    it("names the field of each bad input", () => {
      const cases: Array<[Schedule.Schedule, string, string]> = [
        [Schedule.once(-1), "InvalidDelay", "delay"],
        [Schedule.at(1.5), "InvalidTime", "time"],
        [Schedule.fixedRate(0), "InvalidPeriod", "period"],
        [Schedule.fixedDelay(10, { delay: Number.NaN }), "InvalidDelay", "delay"],
        [Schedule.cron("60 * * * *"), "InvalidCronExpression", "expression"],
        [
          Schedule.cron("0 * * * *", { timeZone: "Nowhere/Special" }),
          "InvalidTimeZone",
          "timeZone",
        ],
        [Schedule.custom(() => undefined), "InvalidTime", "next()"],
        [Schedule.custom(() => 1.5), "InvalidTime", "next()"],
        [{ _tag: "Custom", next: 5 } as never, "InvalidOption", "schedule.next"],
        [{ _tag: "Weekly" } as never, "InvalidOption", "schedule"],
        [undefined as never, "InvalidOption", "schedule"],
      ]
      for (const [schedule, tag, field] of cases) {
        expect(Schedule.resolve(schedule, 0)).toMatchObject({ _tag: tag, field })
      }
    })

    it("a period of 0 would loop within one instant, so it is rejected in every form", () => {
      for (const period of [0, "0 millis", Duration.zero] as const) {
        const e = Schedule.resolve(Schedule.fixedRate(period), 0)
        expect(e).toMatchObject({ _tag: "InvalidPeriod", field: "period" })
        expect((e as { message: string }).message).toContain("positive")
      }
    })
  })

  describe("parseCron", () => {
    it("tells a bad zone from a bad expression", () => {
      expect(Schedule.parseCron("0 9 * * *", "Mars/Olympus")).toMatchObject({
        _tag: "InvalidTimeZone",
        value: "Mars/Olympus",
      })
      expect(Schedule.parseCron("0 25 * * *", "Europe/Berlin")).toMatchObject({
        _tag: "InvalidCronExpression",
        value: "0 25 * * *",
      })
      expect(Schedule.parseCron("0 9 * * MON-FRI", "Europe/Berlin")).toMatchObject({
        _tag: "ParsedCron",
      })
    })

    it("the fall-back rule follows the set of matching hours, not how the hour field is written", () => {
      const overlap = (expression: string) =>
        (Schedule.parseCron(expression, "Europe/Berlin") as Schedule.ParsedCron).spec.everyHour
      for (const everyHour of [
        "0 * * * *",
        "0 */1 * * *",
        "0 0-23 * * *",
        "0 0-12,13-23 * * *",
        "0 0-23/1 * * *",
        "*/30 * * * *",
        "0 0 0-23 * * *",
      ]) {
        expect(overlap(everyHour), everyHour).toBe(true)
      }
      for (const someHours of ["0 1 * * *", "0 */2 * * *", "0 0-22 * * *", "0 0 1,2 * * *"]) {
        expect(overlap(someHours), someHours).toBe(false)
      }
    })
  })
})

describe("combinators", () => {
  describe("nextAfterRun", () => {
    it("fixed rate: the grid slot after the run's slot, then the missed-run policy", () => {
      const { plan } = resolve(Schedule.fixedRate(10), 0)
      const p = plan as Schedule.Plan
      expect(Schedule.nextAfterRun(p, "catch-up", 0, 0)).toEqual({ slot: 10, dropped: undefined })
      expect(Schedule.nextAfterRun(p, "catch-up", 0, 35)).toEqual({ slot: 10, dropped: undefined })
      expect(Schedule.nextAfterRun(p, "skip", 0, 35)).toMatchObject({ slot: 40 })
      expect(Schedule.nextAfterRun(p, "coalesce", 0, 35)).toMatchObject({ slot: 30 })
    })

    it("fixed delay: finishedAt + period, whatever the slot was", () => {
      const p = resolve(Schedule.fixedDelay(10), 0).plan as Schedule.Plan
      expect(Schedule.nextAfterRun(p, "catch-up", 0, 37)).toEqual({ slot: 47, dropped: undefined })
      expect(Schedule.nextAfterRun(p, "skip", 0, 37)).toEqual({ slot: 47, dropped: undefined })
      expect(Schedule.nextAfterRun(p, "catch-up", 0, Number.MAX_SAFE_INTEGER - 5)).toBeUndefined()
    })

    it("cron: the next match after the run's slot, then the missed-run policy", () => {
      const p = resolve(Schedule.cron("*/10 * * * * *"), 0).plan as Schedule.Plan
      expect(Schedule.nextAfterRun(p, "catch-up", 10_000, 10_000)).toMatchObject({ slot: 20_000 })
      expect(Schedule.nextAfterRun(p, "catch-up", 10_000, 45_000)).toMatchObject({ slot: 20_000 })
      expect(Schedule.nextAfterRun(p, "coalesce", 10_000, 45_000)).toMatchObject({ slot: 40_000 })
      expect(Schedule.nextAfterRun(p, "skip", 10_000, 45_000)).toMatchObject({ slot: 50_000 })
    })

    it("custom: next(slot, finishedAt); undefined means no more; bad values are InvalidTime", () => {
      const seen: Array<[number | undefined, number]> = []
      const plan: Schedule.Plan = {
        kind: "custom",
        next: (slot, at) => {
          seen.push([slot, at])
          return slot === undefined ? at : slot < 100 ? slot + 50 : undefined
        },
      }
      expect(Schedule.nextAfterRun(plan, "catch-up", 40, 45)).toEqual({
        slot: 90,
        dropped: undefined,
      })
      expect(Schedule.nextAfterRun(plan, "catch-up", 100, 101)).toBeUndefined()
      expect(seen).toEqual([
        [40, 45],
        [100, 101],
      ])
      const bad: Schedule.Plan = { kind: "custom", next: () => Number.NaN }
      expect(Schedule.nextAfterRun(bad, "catch-up", 0, 0)).toMatchObject({ _tag: "InvalidTime" })
      const throwing: Schedule.Plan = {
        kind: "custom",
        next: () => {
          throw new Error("no")
        },
      }
      expect(Schedule.nextAfterRun(throwing, "catch-up", 0, 0)).toMatchObject({
        _tag: "InvalidTime",
        field: "next()",
      })
    })

    it("grid plans defer to MissedRun.next with the plan's grid", () => {
      const p = resolve(Schedule.fixedRate(7, { delay: 3 }), 0).plan as Extract<
        Schedule.Plan,
        { kind: "fixed-rate" }
      >
      for (const policy of MissedRun.policies)
        expect(Schedule.nextAfterRun(p, policy, 3, 40)).toEqual(
          MissedRun.next(policy, p.grid, 3, 40),
        )
    })
  })
})

describe("regressions", () => {
  it("a cron expression that never matches is an InvalidCronExpression, not a thrown Error", () => {
    for (const expression of ["0 0 30 2 *", "0 0 31 4 *"]) {
      const r = Schedule.resolve(Schedule.cron(expression), 0)
      expect(r).toMatchObject({
        _tag: "InvalidCronExpression",
        field: "expression",
        value: expression,
      })
    }
    const driver = Driver.make({ clock: new Clock.ManualClock(0) })
    const r = driver.schedule({ job: () => {}, schedule: Schedule.cron("0 0 30 2 *") })
    expect(r._tag).toBe("Failure")
    expect(driver.stats().accepted).toBe(0)
  })

  it("a custom next() that throws for the first slot is an InvalidTime, not a thrown Error", () => {
    const boom = new Error("boom")
    const r = Schedule.resolve(
      Schedule.custom(() => {
        throw boom
      }),
      0,
    )
    expect(r).toMatchObject({ _tag: "InvalidTime", field: "next()", value: boom })
  })

  it("an every-30-minutes cron keeps its real-time cadence through a fall-back hour", () => {
    // America/New_York falls back on 2026-11-01 at 02:00 EDT (06:00Z) to 01:00 EST. The local
    // hour 01:00–02:00 happens twice; a job that fires every 30 minutes must not pause for an
    // hour of real time (cronie: jobs running at least hourly are scheduled normally).
    const from = Date.parse("2026-11-01T04:00:00Z")
    const clock = new Clock.ManualClock(from)
    const driver = Driver.make({ clock })
    driver.scheduleUnsafe({
      job: () => {},
      schedule: Schedule.cron("*/30 * * * *", { timeZone: "America/New_York" }),
    })
    const slots = driver.tick(Date.parse("2026-11-01T07:30:00Z")).map((r) => r.scheduledFor)
    const expected: Array<number> = []
    for (let t = from + 30 * 60_000; t <= Date.parse("2026-11-01T07:30:00Z"); t += 30 * 60_000)
      expected.push(t)
    expect(slots).toEqual(expected)
  })
})

describe("encode / decode", () => {
  const round = (s: Schedule.Schedule, now: number) => {
    const r = Schedule.resolve(s, now) as Schedule.Resolved
    const encoded = Result.getOrThrow(Schedule.encode(s, r))
    const decoded = Result.getOrThrow(Schedule.decode(JSON.parse(JSON.stringify(encoded))))
    return { r, encoded, decoded }
  }

  it("every storable kind survives JSON with the same slots", () => {
    const { encoded, decoded } = round(Schedule.fixedRate(10, { delay: 5 }), 100)
    expect(encoded).toEqual({ kind: "fixed-rate", first: 105, period: 10 })
    expect(Schedule.nextAfterRun(decoded.plan as Schedule.Plan, "catch-up", 105, 106)).toEqual({
      slot: 115,
      dropped: undefined,
    })
    expect(round(Schedule.once(7), 3).encoded).toEqual({ kind: "once", at: 10 })
    expect(round(Schedule.at(42), 0).encoded).toEqual({ kind: "once", at: 42 })
    expect(round(Schedule.fixedDelay(9), 0).encoded).toEqual({ kind: "fixed-delay", period: 9 })
    const cron = round(Schedule.cron("0 * * * *", { timeZone: "Europe/Berlin" }), 0)
    expect(cron.encoded).toEqual({
      kind: "cron",
      expression: "0 * * * *",
      timeZone: "Europe/Berlin",
    })
    expect(cron.decoded.plan?.kind === "cron" && cron.decoded.plan.grid.after(0)).toBe(3_600_000)
  })

  it("a custom schedule has no encoded form", () => {
    const s = Schedule.custom(() => 1)
    const r = Schedule.resolve(s, 0) as Schedule.Resolved
    expect(Result.isFailure(Schedule.encode(s, r))).toBe(true)
  })

  it("decode gives back each kind's encoded form and its plan", () => {
    const decoded = (data: unknown) => Result.getOrThrow(Schedule.decode(data))
    expect(decoded({ kind: "once", at: 10 })).toEqual({
      encoded: { kind: "once", at: 10 },
      plan: undefined,
    })
    expect(decoded({ kind: "fixed-delay", period: 9 })).toEqual({
      encoded: { kind: "fixed-delay", period: 9 },
      plan: { kind: "fixed-delay", period: 9 },
    })
    const rate = decoded({ kind: "fixed-rate", first: 105, period: 10 })
    expect(rate.encoded).toEqual({ kind: "fixed-rate", first: 105, period: 10 })
    expect(rate.plan?.kind === "fixed-rate" && rate.plan.period).toBe(10)
    expect(rate.plan?.kind === "fixed-rate" && rate.plan.grid.after(105)).toBe(115)
    for (const dayMatch of ["vixie", "either"] as const) {
      const cron = decoded({ kind: "cron", expression: "0 0 */2 * 1", timeZone: "UTC", dayMatch })
      expect(cron.plan?.kind).toBe("cron")
      // 2026-03-02 is a Monday on an even day: a match only under "either" (vixie needs both
      // fields to match when the day of month starts with `*`).
      const monday = Date.UTC(2026, 2, 2)
      const next = cron.plan?.kind === "cron" ? cron.plan.grid.after(monday - 1) : undefined
      expect(next === monday).toBe(dayMatch === "either")
    }
  })

  it("decode names what is wrong with data it did not write, and keeps the data", () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      ["x", "is not an encoded schedule"],
      [null, "is not an encoded schedule"],
      [{ kind: "once" }, "has no whole-ms `at`"],
      [{ kind: "fixed-delay", period: 1.5 }, "has no positive whole-ms period"],
      [{ kind: "fixed-rate", period: 10 }, "has no whole-ms `first`"],
      [{ kind: "cron", expression: "0 * * * *" }, "has no cron expression and time zone"],
      [{ kind: "cron", timeZone: "UTC" }, "has no cron expression and time zone"],
      [
        { kind: "cron", expression: "0 * * * *", timeZone: "UTC", dayMatch: "both" },
        'has a dayMatch that is neither "vixie" nor "either"',
      ],
      [{ kind: "cron", expression: "bogus", timeZone: "UTC" }, "is invalid: "],
      [{ kind: "x" }, "is of no known kind"],
    ]
    for (const [data, why] of cases) {
      const r = Schedule.decode(data)
      if (Result.isSuccess(r)) throw new Error(`decoded ${JSON.stringify(data)}`)
      expect(r.failure.field).toBe("schedule")
      expect(r.failure.value).toBe(data)
      expect(r.failure.message).toMatch(/^stored schedule /)
      expect(r.failure.message).toContain(why)
    }
  })

  it("data it did not write is an InvalidOption on schedule", () => {
    for (const bad of [null, 1, { kind: "fixed-rate", period: 0, first: 0 }, { kind: "x" }]) {
      const r = Schedule.decode(bad)
      expect(Result.isFailure(r) && r.failure.field).toBe("schedule")
    }
  })
})

describe("preview: bad options", () => {
  const s = Schedule.fixedRate(10)

  it("a missing or fractional count is an InvalidOption on count, not an empty preview", () => {
    for (const count of [undefined, -1, 1.5]) {
      const r = Schedule.preview(s, { from: 0, count: count as number })
      expect(!Array.isArray(r) && r).toMatchObject({
        field: "count",
        value: count,
        message: `count must be a non-negative integer, got ${count}`,
      })
    }
  })

  it("missing options are an InvalidOption on from", () => {
    const r = Schedule.preview(s, undefined as never)
    expect(!Array.isArray(r) && r).toMatchObject({ field: "from" })
  })
})

describe("custom and bounded schedules: each failure names its field and cause", () => {
  it("a next that is no function, throws, or gives no first slot is refused at resolve", () => {
    expect(Schedule.resolve(Schedule.custom("x" as never), 0)).toMatchObject({
      field: "schedule.next",
      value: "x",
      message: 'schedule.next must be a function, got "x"',
    })
    const boom = new Error("boom")
    expect(
      Schedule.resolve(
        Schedule.custom(() => {
          throw boom
        }),
        5,
      ),
    ).toMatchObject({
      field: "next()",
      value: boom,
      message: "a custom schedule's next(undefined, 5) threw: Error: boom",
    })
    // null reads as "no slot", like undefined, not as an invalid instant.
    for (const none of [undefined, null]) {
      expect(
        Schedule.resolve(
          Schedule.custom(() => none as never),
          0,
        ),
      ).toMatchObject({
        field: "next()",
        message: "a custom schedule's next(undefined, now) must return a first slot, got undefined",
      })
    }
  })

  it("after a run, a custom next that throws is an InvalidTime; one that ends is undefined", () => {
    const plan = (next: Schedule.NextSlot): Schedule.Plan => ({ kind: "custom", next })
    expect(
      Schedule.nextAfterRun(
        plan(() => {
          throw new Error("late")
        }),
        "catch-up",
        10,
        12,
      ),
    ).toMatchObject({
      field: "next()",
      message: "a custom schedule's next(10, 12) threw: Error: late",
    })
    expect(
      Schedule.nextAfterRun(
        plan(() => undefined),
        "catch-up",
        10,
        12,
      ),
    ).toBeUndefined()
  })

  it("a fixed delay may land on 2^53-1 ms exactly, and no further", () => {
    const plan: Schedule.Plan = { kind: "fixed-delay", period: 10 }
    const max = Number.MAX_SAFE_INTEGER
    expect(Schedule.nextAfterRun(plan, "catch-up", 0, max - 10)).toEqual({
      slot: max,
      dropped: undefined,
    })
    expect(Schedule.nextAfterRun(plan, "catch-up", 0, max - 9)).toBeUndefined()
  })

  it("a first delay past 2^53-1 ms is an InvalidDelay on delay", () => {
    const max = Number.MAX_SAFE_INTEGER
    expect(Schedule.resolve(Schedule.fixedDelay(10, { delay: 20 }), max - 10)).toMatchObject({
      field: "delay",
      value: 20,
    })
  })

  it("a custom schedule cannot be encoded, and says why", () => {
    const s = Schedule.custom(() => 1)
    const r = Schedule.encode(s, Schedule.resolve(s, 0) as Schedule.Resolved)
    expect(Result.isFailure(r) && r.failure).toMatchObject({
      field: "schedule",
      value: s,
      message: "schedule: a custom schedule's next() is a function and cannot be stored",
    })
  })
})

describe("parseCron and cron data: refusals and defaults", () => {
  it("a zone that is no IANA name is an InvalidTimeZone, before the expression is read", () => {
    for (const timeZone of ["Mars/Olympus", 123 as never]) {
      expect(Schedule.parseCron("not cron", timeZone)).toMatchObject({
        _tag: "InvalidTimeZone",
        field: "timeZone",
        value: timeZone,
      })
    }
  })

  it("an expression that is no string, or wrong as a whole, says so without a field", () => {
    expect(Schedule.parseCron(123 as never, "UTC")).toMatchObject({
      _tag: "InvalidCronExpression",
      field: "expression",
      message: "expression 123 is not a valid cron expression",
    })
    const whole = Schedule.parseCron("* *", "UTC")
    expect(whole).toMatchObject({ _tag: "InvalidCronExpression", field: "expression" })
    expect("message" in whole && whole.message).toMatch(
      /^expression "\* \*" is not a valid cron expression: it /,
    )
  })

  it("an Effect Cron without a zone is read in UTC, and cannot be encoded", () => {
    const parsed = Cron.parseUnsafe("0 * * * *")
    const s = Schedule.cron(parsed)
    expect(s.timeZone).toBe("UTC")
    const r = Schedule.encode(s, Schedule.resolve(s, 0) as Schedule.Resolved)
    expect(Result.isFailure(r) && r.failure).toMatchObject({
      field: "schedule",
      message:
        "schedule: a parsed Cron object cannot be stored; give the cron expression as a string",
    })
  })
})

describe("dstNote on an Effect Cron", () => {
  const zone = "America/New_York"
  it("notes the spring gap and the autumn fold as the parsed form does, and nothing without a zone", () => {
    const gap = Cron.parseUnsafe("30 2 * * *", zone)
    // 2026-03-08 02:30 does not exist in New York: the slot is 03:30 EDT, 07:30Z.
    const shifted = Date.UTC(2026, 2, 8, 7, 30)
    expect(Schedule.dstNote(gap, shifted)).toEqual({ kind: "gap", shiftedBy: 3_600_000 })
    const fold = Cron.parseUnsafe("30 1 * * *", zone)
    // 2026-11-01 01:30 happens twice: 05:30Z (EDT) and 06:30Z (EST).
    const first = Date.UTC(2026, 10, 1, 5, 30)
    const second = Date.UTC(2026, 10, 1, 6, 30)
    expect(Schedule.dstNote(fold, first)).toEqual({ kind: "fold", occurrence: "first" })
    expect(Schedule.dstNote(fold, second)).toEqual({ kind: "fold", occurrence: "second" })
    const ordinary = Date.UTC(2026, 5, 1, 5, 30)
    expect(Schedule.dstNote(fold, ordinary)).toBeUndefined()
    for (const [expression, slot] of [
      ["30 2 * * *", shifted],
      ["30 1 * * *", first],
      ["30 1 * * *", second],
      ["30 1 * * *", ordinary],
    ] as const) {
      const parsed = Schedule.parseCron(expression, zone)
      if (!("spec" in parsed)) throw new Error(parsed.message)
      expect(Schedule.dstNote(Cron.parseUnsafe(expression, zone), slot)).toEqual(
        Schedule.dstNote(parsed, slot),
      )
    }
    expect(Schedule.dstNote(Cron.parseUnsafe("30 1 * * *"), first)).toBeUndefined()
  })
})
