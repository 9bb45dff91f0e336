import assert from "node:assert/strict"
import { Result } from "effect"
import { Clock, Driver, Schedule } from "@tickwork/core"

const clock = new Clock.ManualClock(0)
const driver = Driver.make({ clock })
const job = () => {}
driver.scheduleUnsafe({ id: "mail", job, schedule: Schedule.fixedRate(10), tags: ["io"] })
driver.scheduleUnsafe({ id: "report", job, schedule: Schedule.once(50), tags: ["io", "daily"] })
driver.scheduleUnsafe({ id: "gc", job, schedule: Schedule.fixedDelay(30) })

assert.deepEqual(driver.pauseAll({ tag: "io" }), ["mail", "report"])
assert.deepEqual(
  driver.tasks({ state: "paused" }).map((t) => [t.id, t.pausedReason]),
  [
    ["mail", "manual"],
    ["report", "manual"],
  ],
)
assert.deepEqual(driver.resumeAll({ tag: "daily" }), ["report"])

clock.set(7)
assert.equal(Result.getOrThrow(driver.update("gc", { schedule: Schedule.fixedRate(100) })), true)
assert.equal(driver.info("gc")?.scheduledFor, 7) // as if scheduled at 7
const bad = driver.update("gc", { priority: "urgent" as never })
assert.equal(Result.isFailure(bad) && bad.failure._tag, "InvalidPriority")

export {}
