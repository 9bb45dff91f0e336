import assert from "node:assert/strict"
import { Result } from "effect"
import { Clock, Driver, Schedule } from "@tickwork/core"

const clock = new Clock.ManualClock(0)
const driver = Driver.make({ clock, retention: { maxFinished: 2, maxAgeMs: 60_000 } })
const job = () => {}

assert.equal(driver.scheduleUnsafe({ job, schedule: Schedule.once(0) }), "#0.1")
driver.scheduleUnsafe({ id: "report", job, schedule: Schedule.once(10) })
const again = driver.schedule({ id: "report", job, schedule: Schedule.once(20) })
assert.ok(Result.isFailure(again) && again.failure._tag === "DuplicateTaskId")

driver.runUntil(10)
assert.equal(driver.status("report"), "done")
driver.scheduleUnsafe({ id: "report", job, schedule: Schedule.once(5) }) // final: reusable
assert.equal(driver.info("report")?.generation, 2)

const other = driver.scheduleUnsafe({ job, schedule: Schedule.once(2) })
driver.runUntil(20)
assert.equal(driver.status("#0.1"), "unknown") // three final tasks: the oldest was dropped
assert.equal(driver.status(other), "done")
clock.set(100_000)
driver.scheduleUnsafe({ job, schedule: Schedule.once(1) }) // a step: expired ones go
assert.equal(driver.status("report"), "unknown")
assert.equal(driver.status(other), "unknown")
// Removed: the replaced first "report", "#0.1" by count, two by age.
assert.equal(driver.stats().removed, 4)
