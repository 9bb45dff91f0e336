/**
 * `update` naming the breaker a task already has (SPEC §15.6): a change that moves nothing, so
 * a half-open breaker keeps its probe and its held tasks.
 */
import { describe, expect, it } from "vitest"
import { Clock, Driver, Schedule } from "../src/index.ts"
import { failing, ok } from "./support.ts"

describe("update: the breaker a task already has (SPEC §15.6)", () => {
  it("naming a task's shared breaker again keeps it its probe; the held task stays held", () => {
    const clock = new Clock.ManualClock(0)
    const driver = Driver.make({ clock, breakers: { smtp: { failures: 2, coolDown: 100 } } })
    driver.scheduleUnsafe({
      id: "a",
      job: failing(),
      schedule: Schedule.fixedRate(10),
      breaker: "smtp",
    })
    driver.scheduleUnsafe({
      id: "slow",
      job: failing(),
      schedule: Schedule.fixedRate(1000, { delay: 1 }),
      breaker: "smtp",
    })
    driver.tick(10) // a@0 and slow@1 fail: open at 1, half-open at 101
    driver.tick(101)
    expect(driver.breaker("smtp")).toMatchObject({ state: "half-open", probe: "a", held: ["slow"] })
    expect(ok(driver.update("a", { breaker: "smtp" }))).toBe(true)
    // Leaving and joining again would hand the probe to slow and hold a.
    expect(driver.breaker("smtp")).toMatchObject({ state: "half-open", probe: "a", held: ["slow"] })
    expect(driver.info("a")).toMatchObject({ state: "scheduled", breaker: "smtp" })
    expect(driver.info("slow")).toMatchObject({ state: "paused", pausedReason: "breaker" })
  })
})
