import assert from "node:assert/strict"
import { Clock, Driver, Schedule } from "@tickwork/core"

const driver = Driver.make({ clock: new Clock.ManualClock(0) })
const waiting = driver.scheduleUnsafe({ job: () => {}, schedule: Schedule.once(100) })
driver.scheduleUnsafe({ job: () => {}, schedule: Schedule.once(200) })
driver.scheduleUnsafe({ job: () => {}, schedule: Schedule.once(300) })
assert.equal(driver.cancel(waiting), true)
assert.equal(driver.cancel(waiting), false) // already final
assert.equal(driver.cancel("no-such-task"), false) // unknown ids are not errors
assert.equal(driver.stats().deadEntries, 1)

driver.scheduleUnsafe({
  id: "once-enough",
  job: (run) => {
    driver.cancel(run.id) // from inside its own job
  },
  schedule: Schedule.fixedRate(10),
})
const [own] = driver.tick(1_000).filter((r) => r.id === "once-enough")
assert.equal(own?.outcome.kind, "succeeded") // the run's outcome is still reported
assert.equal(own?.state, "cancelled")
assert.equal(driver.status("once-enough"), "cancelled")
