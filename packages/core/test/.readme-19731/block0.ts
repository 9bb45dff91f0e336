import assert from "node:assert/strict"
import { Clock, Driver, Schedule } from "@tickwork/core"

const clock = new Clock.ManualClock(0) // virtual time: it moves only when you move it
const driver = Driver.make({ clock })

const seen: Array<number> = []
driver.scheduleUnsafe({
  job: (run) => {
    seen.push(run.scheduledFor)
  },
  schedule: Schedule.fixedRate(10),
})

// runUntil steps the clock to each due slot, runs it there, then moves to the end.
assert.equal(driver.runUntil(35), 4)
assert.deepEqual(seen, [0, 10, 20, 30])
assert.equal(clock.now(), 35)

// tick does the same and returns a record of every run, in run order.
const [record] = driver.tick(40)
assert.equal(record?.scheduledFor, 40)
assert.equal(record?.outcome.kind, "succeeded")
assert.equal(record?.nextSlot, 50)

// runDue runs what is due now, without moving the clock.
clock.set(75)
assert.equal(driver.runDue(), 3) // slots 50, 60 and 70, all starting at 75
