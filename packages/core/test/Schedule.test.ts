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
})
