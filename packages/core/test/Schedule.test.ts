import { describe, expect, it } from "vitest"
import { Clock, Driver, Schedule } from "../src/index.ts"

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
