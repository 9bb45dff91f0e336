import assert from "node:assert/strict"
import { Clock, Driver, Schedule } from "@tickwork/core"

const driver = Driver.make({ clock: new Clock.ManualClock(0) })
const job = () => {}
driver.scheduleUnsafe({ id: "low", job, schedule: Schedule.at(5), priority: "low" })
driver.scheduleUnsafe({ id: "normal", job, schedule: Schedule.at(5) })
driver.scheduleUnsafe({ id: "high", job, schedule: Schedule.at(5), priority: "high" })
driver.scheduleUnsafe({ id: "earlier", job, schedule: Schedule.at(4), priority: "low" })
assert.deepEqual(
  driver.tick(5).map((r) => r.id),
  ["earlier", "high", "normal", "low"],
)
