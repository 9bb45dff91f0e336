/**
 * SPEC §13 Errors for bad input: typed, naming the field and the value, and a rejected call
 * changes no state. Unknown ids are not errors for cancel and status.
 */
import { Duration } from "effect"
import { describe, expect, it } from "vitest"
import { type Driver, Errors, Kernel, Schedule } from "../../src/index.ts"
import { err, lines, noop, observe, setup } from "../support.ts"

const MAX = Number.MAX_SAFE_INTEGER

interface Case {
  readonly name: string
  readonly options: Kernel.TaskOptions<Driver.Job>
  readonly tag: string
  readonly field: string
  readonly value: unknown
}

const job = noop
const cases: ReadonlyArray<Case> = [
  // InvalidDelay
  {
    name: "negative delay",
    options: { job, schedule: Schedule.once(-1) },
    tag: "InvalidDelay",
    field: "delay",
    value: -1,
  },
  {
    name: "NaN delay",
    options: { job, schedule: Schedule.once(Number.NaN) },
    tag: "InvalidDelay",
    field: "delay",
    value: Number.NaN,
  },
  {
    name: "Infinity delay",
    options: { job, schedule: Schedule.once(Number.POSITIVE_INFINITY) },
    tag: "InvalidDelay",
    field: "delay",
    value: Number.POSITIVE_INFINITY,
  },
  {
    name: "fractional delay",
    options: { job, schedule: Schedule.once(1.5) },
    tag: "InvalidDelay",
    field: "delay",
    value: 1.5,
  },
  {
    name: "2^53 delay",
    options: { job, schedule: Schedule.once(2 ** 53) },
    tag: "InvalidDelay",
    field: "delay",
    value: 2 ** 53,
  },
  {
    name: "sub-ms duration",
    options: { job, schedule: Schedule.once("1.5 millis") },
    tag: "InvalidDelay",
    field: "delay",
    value: "1.5 millis",
  },
  {
    name: "slot past 2^53-1",
    options: { job, schedule: Schedule.once(MAX) },
    tag: "InvalidDelay",
    field: "delay",
    value: MAX,
  },
  {
    name: "fixed-rate delay",
    options: { job, schedule: Schedule.fixedRate(10, { delay: -5 }) },
    tag: "InvalidDelay",
    field: "delay",
    value: -5,
  },
  // InvalidTime
  {
    name: "fractional instant",
    options: { job, schedule: Schedule.at(1.5) },
    tag: "InvalidTime",
    field: "time",
    value: 1.5,
  },
  {
    name: "instant past 2^53-1",
    options: { job, schedule: Schedule.at(2 ** 53) },
    tag: "InvalidTime",
    field: "time",
    value: 2 ** 53,
  },
  {
    name: "custom first slot NaN",
    options: { job, schedule: Schedule.custom(() => Number.NaN) },
    tag: "InvalidTime",
    field: "next()",
    value: Number.NaN,
  },
  // InvalidPeriod
  {
    name: "zero period",
    options: { job, schedule: Schedule.fixedRate(0) },
    tag: "InvalidPeriod",
    field: "period",
    value: 0,
  },
  {
    name: "negative period",
    options: { job, schedule: Schedule.fixedDelay(-10) },
    tag: "InvalidPeriod",
    field: "period",
    value: -10,
  },
  {
    name: "fractional period",
    options: { job, schedule: Schedule.fixedRate(2.5) },
    tag: "InvalidPeriod",
    field: "period",
    value: 2.5,
  },
  // InvalidPriority
  {
    name: "unknown priority",
    options: { job, schedule: Schedule.once(0), priority: "urgent" as never },
    tag: "InvalidPriority",
    field: "priority",
    value: "urgent",
  },
  // InvalidRetryPolicy
  {
    name: "negative maxRetries",
    options: { job, schedule: Schedule.once(0), retry: { maxRetries: -1 } },
    tag: "InvalidRetryPolicy",
    field: "retry.maxRetries",
    value: -1,
  },
  {
    name: "factor below 1",
    options: { job, schedule: Schedule.once(0), retry: { factor: 0.5 } },
    tag: "InvalidRetryPolicy",
    field: "retry.factor",
    value: 0.5,
  },
  {
    name: "negative base",
    options: { job, schedule: Schedule.once(0), retry: { base: -3 } },
    tag: "InvalidRetryPolicy",
    field: "retry.base",
    value: -3,
  },
  {
    name: "sub-ms maxDelay",
    options: { job, schedule: Schedule.once(0), retry: { maxDelay: "0.5 millis" } },
    tag: "InvalidRetryPolicy",
    field: "retry.maxDelay",
    value: "0.5 millis",
  },
  {
    name: "unknown jitter",
    options: { job, schedule: Schedule.once(0), retry: { jitter: "some" as never } },
    tag: "InvalidRetryPolicy",
    field: "retry.jitter",
    value: "some",
  },
  // InvalidCronExpression / InvalidTimeZone
  {
    name: "unparsable cron",
    options: { job, schedule: Schedule.cron("every day") },
    tag: "InvalidCronExpression",
    field: "expression",
    value: "every day",
  },
  {
    name: "out-of-range cron",
    options: { job, schedule: Schedule.cron("61 * * * *") },
    tag: "InvalidCronExpression",
    field: "expression",
    value: "61 * * * *",
  },
  {
    name: "cron that never matches",
    options: { job, schedule: Schedule.cron("0 0 31 2 *") },
    tag: "InvalidCronExpression",
    field: "expression",
    value: "0 0 31 2 *",
  },
  {
    name: "unknown zone",
    options: { job, schedule: Schedule.cron("0 9 * * *", { timeZone: "Mars/Olympus" }) },
    tag: "InvalidTimeZone",
    field: "timeZone",
    value: "Mars/Olympus",
  },
  // DuplicateTaskId
  {
    name: "live id",
    options: { job, schedule: Schedule.once(0), id: "taken" },
    tag: "DuplicateTaskId",
    field: "id",
    value: "taken",
  },
  // InvalidOption
  {
    name: "unknown missed-run policy",
    options: { job, schedule: Schedule.fixedRate(10), missedRuns: "sometimes" as never },
    tag: "InvalidOption",
    field: "missedRuns",
    value: "sometimes",
  },
  {
    name: "negative pause policy",
    options: { job, schedule: Schedule.fixedRate(10), pauseAfterConsecutiveFailures: -1 },
    tag: "InvalidOption",
    field: "pauseAfterConsecutiveFailures",
    value: -1,
  },
  {
    name: "empty id",
    options: { job, schedule: Schedule.once(0), id: "" },
    tag: "InvalidOption",
    field: "id",
    value: "",
  },
  {
    name: "generated-form id",
    options: { job, schedule: Schedule.once(0), id: "#0.1" },
    tag: "InvalidOption",
    field: "id",
    value: "#0.1",
  },
  {
    name: "job not a function",
    options: { job: "echo hi" as never, schedule: Schedule.once(0) },
    tag: "InvalidOption",
    field: "job",
    value: "echo hi",
  },
  {
    name: "hand-made schedule",
    options: { job, schedule: { _tag: "Hourly" } as never },
    tag: "InvalidOption",
    field: "schedule",
    value: { _tag: "Hourly" },
  },
]

/** Existing work the rejected call must not disturb: a live caller id, a retry, a cancel. */
const script = (driver: Driver.Driver) => {
  driver.scheduleUnsafe({ id: "taken", job: noop, schedule: Schedule.fixedRate(10) })
  let n = 0
  driver.scheduleUnsafe({
    job: () => {
      if (n++ === 0) throw new Error("once")
    },
    schedule: Schedule.once(5),
    retry: { maxRetries: 1, base: 3, jitter: "full" },
  })
  const gone = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(50) })
  driver.cancel(gone)
  driver.runDue()
}

describe("§13 each bad input is a typed error naming the field and value, and changes nothing", () => {
  it.each(cases)("$name → $tag on $field", ({ options, tag, field, value }) => {
    const { clock, driver } = setup(1)
    const { clock: controlClock, driver: control } = setup(1)
    script(driver)
    script(control)
    const before = observe(driver)

    const e = err(driver.schedule(options))
    expect(e._tag).toBe(tag)
    expect(e).toBeInstanceOf(Error)
    expect(Errors.isScheduleError(e)).toBe(true)
    expect(e.field).toBe(field)
    expect(e.value).toEqual(value)
    expect(e.message).toContain(field)
    expect(e.message).toContain(Errors.show(value))
    // The throwing twin throws the same error.
    expect(() => driver.scheduleUnsafe(options)).toThrow(e.message)

    expect(observe(driver)).toEqual(before)
    driver.checkInvariants()
    expect(lines(driver.tick(100))).toEqual(lines(control.tick(100)))
    expect(clock.now()).toBe(controlClock.now())
    // The next accepted task gets the id it would have had.
    expect(driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(0) })).toBe(
      control.scheduleUnsafe({ job: noop, schedule: Schedule.once(0) }),
    )
  })

  it("covers every schedule error tag", () => {
    expect(new Set(cases.map((c) => c.tag))).toEqual(
      new Set([
        "InvalidDelay",
        "InvalidTime",
        "InvalidPeriod",
        "InvalidPriority",
        "InvalidRetryPolicy",
        "InvalidCronExpression",
        "InvalidTimeZone",
        "DuplicateTaskId",
        "InvalidOption",
      ]),
    )
  })
})

describe("§13 inputs that are fine", () => {
  it("Effect durations for delays, periods and backoffs", () => {
    const { driver } = setup(0)
    const id = driver.scheduleUnsafe({
      job: noop,
      schedule: Schedule.fixedRate(Duration.seconds(2), { delay: "5 seconds" }),
      retry: { maxRetries: 1, base: Duration.millis(3), maxDelay: "1 minute" },
    })
    expect(driver.info(id)?.scheduledFor).toBe(5000)
    expect(driver.tick(9000).map((r) => r.scheduledFor)).toEqual([5000, 7000, 9000])
  })
})

describe("§13 other typed errors", () => {
  it("a manual clock moved backwards throws InvalidTime", () => {
    const { clock, driver } = setup(10)
    expect(() => clock.set(9)).toThrow(Errors.InvalidTime)
    expect(() => driver.runUntil(9)).toThrow(Errors.InvalidTime)
    expect(() => driver.tick(9)).toThrow(/no earlier than now/)
    expect(clock.now()).toBe(10)
  })

  it("bad retention options are InvalidOption when the driver is made", () => {
    expect(() => setup(0, { retention: { maxFinished: -1 } })).toThrow(Errors.InvalidOption)
    expect(() => setup(0, { retention: { maxAgeMs: 0.5 } })).toThrow(/retention.maxAgeMs/)
    expect(() => new Kernel.Kernel({ retention: { maxFinished: Number.NaN } })).toThrow(
      Errors.InvalidOption,
    )
  })

  it("unknown ids are not errors: cancel is false, status is unknown, info is undefined", () => {
    const { driver } = setup()
    for (const id of ["nope", "#0.1", "#x.y", ""]) {
      expect(driver.cancel(id)).toBe(false)
      expect(driver.status(id)).toBe("unknown")
      expect(driver.info(id)).toBeUndefined()
    }
  })
})
