import assert from "node:assert/strict"
import { Clock, Driver, Schedule } from "@tickwork/core"

const run = (schedule: Schedule.Schedule) => {
  const clock = new Clock.ManualClock(0)
  const driver = Driver.make({ clock })
  driver.scheduleUnsafe({ job: () => clock.advance(3), schedule }) // every run takes 3 ms
  return driver.tick(40).map((r) => r.scheduledFor)
}
assert.deepEqual(run(Schedule.fixedRate(10)), [0, 10, 20, 30, 40])
assert.deepEqual(run(Schedule.fixedDelay(10)), [0, 13, 26, 39])
