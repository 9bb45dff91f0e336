import assert from "node:assert/strict"
import { Clock, Driver, Schedule } from "@tickwork/core"

const driver = Driver.make({ clock: new Clock.ManualClock(0) })
const id = driver.scheduleUnsafe({
  job: () => {
    throw new Error("the backend is down")
  },
  schedule: Schedule.fixedRate("1 minute"),
  pauseAfterConsecutiveFailures: 3,
})
assert.equal(driver.runUntil(3_600_000), 3) // three slots fail in a row, then it stops
assert.equal(driver.status(id), "paused")
assert.equal(driver.info(id)?.pausedReason, "failures")
assert.equal(driver.info(id)?.consecutiveFailures, 3)
