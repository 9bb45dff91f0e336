/**
 * A program using the installed `@tickwork/core`: the deterministic driver on a manual clock,
 * and a typed error for bad input.
 */
import assert from "node:assert/strict"
import { Clock, Driver, Schedule } from "@tickwork/core"
import { Result } from "effect"

const clock = new Clock.ManualClock(0)
const driver = Driver.make({ clock })
const seen: Array<number> = []
driver.scheduleUnsafe({
  schedule: Schedule.fixedRate(10),
  job: (run) => void seen.push(run.scheduledFor),
})
assert.equal(driver.runUntil(35), 4)
assert.deepEqual(seen, [0, 10, 20, 30])

const bad = driver.schedule({ schedule: Schedule.once(-1), job: () => {} })
assert.ok(Result.isFailure(bad))
assert.equal(bad.failure._tag, "InvalidDelay")

console.log("core: ok")
