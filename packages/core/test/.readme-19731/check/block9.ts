import assert from "node:assert/strict"
import { Clock, Driver, Schedule } from "@tickwork/core"

const clock = new Clock.ManualClock(0)
const driver = Driver.make({ clock })
const id = driver.scheduleUnsafe({ job: () => {}, schedule: Schedule.fixedRate(10) })
driver.tick(5) // slot 0 ran; 10 is next
assert.equal(driver.pause(id), true)
assert.equal(driver.pause(id), false) // already paused
clock.set(45)
assert.equal(driver.resume(id), true)
const skipped = driver.drainOccurrences().filter((o) => o.kind === "skipped")
assert.deepEqual(
  skipped.map((o) => [o.cause, o.first, o.last, o.count, o.nextSlot]),
  [["paused", 10, 40, 4, 50]],
)
assert.deepEqual(
  driver.tick(60).map((r) => r.scheduledFor),
  [50, 60],
)

export {}
