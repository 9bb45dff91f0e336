/**
 * Options as a user writes them: unknown keys are typed errors (SPEC §13), Effect's own types are
 * accepted where users hold them (DateTime, a parsed Cron, Duration inputs), and a retry's run
 * keeps the slot it belongs to (SPEC §1).
 */
import { Cron, DateTime } from "effect"
import { describe, expect, it } from "vitest"
import { Errors, Kernel, Options, Retry, Schedule } from "../src/index.ts"
import { err, failing, noop, ok, setup } from "./support.ts"

describe("unknown option keys", () => {
  it.each([
    ["missedRun", { missedRun: "skip" }],
    ["overlap", { overlap: "skip" }],
    ["tag", { tag: "a" }],
  ])("a task option %s is an InvalidOption naming it, and nothing is scheduled", (key, extra) => {
    const { driver } = setup(0)
    const e = err(driver.schedule({ job: noop, schedule: Schedule.once(5), ...extra } as never))
    expect(e).toBeInstanceOf(Errors.InvalidOption)
    expect(e).toMatchObject({ field: key })
    expect(e.message).toContain(key)
    expect(driver.stats().accepted).toBe(0)
  })

  it("a retry key it does not know is an InvalidOption named retry.<key>", () => {
    const e = Retry.resolve({ maxRetries: 2, backof: 10 } as never)
    expect(e).toBeInstanceOf(Errors.InvalidOption)
    expect(e).toMatchObject({ field: "retry.backof", value: 10 })
    const { driver } = setup(0)
    expect(
      err(
        driver.schedule({
          job: noop,
          schedule: Schedule.once(0),
          retry: { maxRetrys: 1 } as never,
        }),
      ),
    ).toMatchObject({ _tag: "InvalidOption", field: "retry.maxRetrys" })
  })

  it("a retention key it does not know is an InvalidOption", () => {
    expect(() => new Kernel.Kernel({ retention: { maxFinish: 10 } as never })).toThrow(
      expect.objectContaining({ _tag: "InvalidOption", field: "retention.maxFinish" }),
    )
  })
})

describe("Effect's types as inputs", () => {
  it("Schedule.at takes a DateTime", () => {
    const { clock, driver } = setup(0)
    const at = DateTime.makeUnsafe("1970-01-01T00:00:01.500Z")
    const id = ok(driver.schedule({ job: noop, schedule: Schedule.at(at) }))
    expect(driver.info(id)?.scheduledFor).toBe(1500)
    expect(driver.runUntil(2000)).toBe(1)
    expect(clock.now()).toBe(2000)
  })

  it("Schedule.cron takes a Cron parsed by Effect, with its own zone", () => {
    const start = Date.UTC(2026, 0, 5, 0, 0) // a Monday
    const { driver } = setup(start)
    const parsed = Cron.parseUnsafe("0 9 * * MON-FRI", "America/New_York")
    const id = ok(driver.schedule({ job: noop, schedule: Schedule.cron(parsed) }))
    // 09:00 in New York in January is 14:00Z.
    expect(driver.info(id)?.scheduledFor).toBe(Date.UTC(2026, 0, 5, 14, 0))
    expect(Schedule.cron(parsed).timeZone).toBe("America/New_York")
  })

  it("retention.maxAge takes a Duration input and drops final tasks after it", () => {
    const { clock, driver } = setup(0, { retention: { maxAge: "1 second" } })
    const id = ok(driver.schedule({ job: noop, schedule: Schedule.once(0) }))
    driver.runDue()
    expect(driver.status(id)).toBe("done")
    clock.set(999)
    driver.runDue()
    expect(driver.status(id)).toBe("done")
    clock.set(1000)
    ok(driver.schedule({ job: noop, schedule: Schedule.once(10) }))
    expect(driver.status(id)).toBe("unknown")
  })

  it("a sub-millisecond retention.maxAge is rejected, naming the field", () => {
    expect(() => new Kernel.Kernel({ retention: { maxAge: "1.5 millis" } })).toThrow(
      expect.objectContaining({ _tag: "InvalidOption", field: "retention.maxAge" }),
    )
  })
})

describe("a retry keeps its slot (SPEC §1)", () => {
  it("slot stays the grid slot while scheduledFor is the retry's due time", () => {
    const { driver } = setup(0)
    ok(
      driver.schedule({
        id: "r",
        job: failing(),
        schedule: Schedule.fixedRate(100, { delay: 10 }),
        retry: { maxRetries: 2, base: 5 },
      }),
    )
    const records = driver.tick(40)
    expect(records.map((r) => [r.slot, r.scheduledFor, r.attempt])).toEqual([
      [10, 10, 1],
      [10, 15, 2],
      [10, 25, 3],
    ])
  })

  it("a one-shot's retries keep its slot too", () => {
    const { driver } = setup(0)
    ok(
      driver.schedule({
        job: failing(),
        schedule: Schedule.once(7),
        retry: { maxRetries: 1, base: 3 },
      }),
    )
    expect(driver.tick(20).map((r) => [r.slot, r.scheduledFor])).toEqual([
      [7, 7],
      [7, 10],
    ])
  })
})

describe("bounds of size-like options (issue 28, item 4)", () => {
  it("every bound has a reason and sits far below what a process can allocate", () => {
    for (const [name, bound] of Object.entries(Options.bounds)) {
      expect(bound.why.length, name).toBeGreaterThan(10)
      expect(Number.isSafeInteger(bound.max) && bound.max <= 10_000_000, name).toBe(true)
    }
  })

  it("integer with a bound: the bound is accepted, one past it is an InvalidOption saying why", () => {
    const bound = Options.bounds.workers
    expect(Options.integer("workers", bound.max, 4, 1, bound)).toBe(bound.max)
    const e = Options.integer("workers", bound.max + 1, 4, 1, bound)
    expect(e).toBeInstanceOf(Errors.InvalidOption)
    expect(e).toMatchObject({ field: "workers", value: bound.max + 1 })
    expect((e as Errors.InvalidOption).message).toBe(
      `workers must be an integer from 1 to 10,000 (${bound.why}), got 10001`,
    )
    expect(Options.integer("workers", 1e9, 4, 1, bound)).toBeInstanceOf(Errors.InvalidOption)
  })

  it("retention.maxFinished is at most its bound", () => {
    const max = Options.bounds.maxFinished.max
    expect(() => new Kernel.Kernel({ retention: { maxFinished: max + 1 } })).toThrow(
      expect.objectContaining({ _tag: "InvalidOption", field: "retention.maxFinished" }),
    )
    expect(() => new Kernel.Kernel({ retention: { maxFinished: max } })).not.toThrow()
  })

  it("Schedule.preview computes at most its bound of slots", () => {
    const max = Options.bounds.previewCount.max
    const schedule = Schedule.fixedRate(1_000)
    expect(Schedule.preview(schedule, { from: 0, count: max + 1 })).toMatchObject({
      _tag: "InvalidOption",
      field: "count",
      value: max + 1,
    })
    expect(Schedule.preview(schedule, { from: 0, count: max })).toHaveLength(max)
  })
})

describe("integer and millis: defaults, bounds and refusals (SPEC §13, §24)", () => {
  it("SPEC §24: integer takes its default when left out, and refuses below its minimum", () => {
    expect(Options.integer("n", undefined, 4)).toBe(4)
    expect(Options.integer("n", 1, 4)).toBe(1)
    expect(Options.integer("n", 0, 4)).toMatchObject({
      _tag: "InvalidOption",
      field: "n",
      value: 0,
      message: "n must be an integer >= 1, got 0",
    })
    expect(Options.integer("n", 0, 4, 0)).toBe(0)
    expect(Options.integer("n", 2.5, 4)).toBeInstanceOf(Errors.InvalidOption)
    const bound = Options.bounds.workers
    expect(Options.integer("workers", 2, 4, 3, bound)).toMatchObject({
      message: `workers must be an integer from 3 to 10,000 (${bound.why}), got 2`,
    })
    expect(Options.integer("workers", 3, 4, 3, bound)).toBe(3)
    expect(Options.integer("workers", 2.5, 4, 1, bound)).toBeInstanceOf(Errors.InvalidOption)
  })

  it("SPEC §24: millis: false is no limit, left out is the default, 0 only when not positive", () => {
    expect(Options.millis("t", false, 5)).toBe(Number.POSITIVE_INFINITY)
    expect(Options.millis("t", undefined, 5)).toBe(5)
    expect(Options.millis("t", 0, 5)).toBe(0)
    expect(Options.millis("t", "2 seconds", 5, true)).toBe(2_000)
    expect(Options.millis("t", 0, 5, true)).toMatchObject({
      _tag: "InvalidOption",
      field: "t",
      value: 0,
      message: "t must be positive, got 0",
    })
    expect(Options.millis("t", -1, 5, true)).toMatchObject({
      field: "t",
      value: -1,
      message: "t must not be negative, got -1",
    })
    expect(Options.invalid("f", 1, "must be odd")).toMatchObject({
      message: "f must be odd, got 1",
    })
  })
})
