import assert from "node:assert/strict"
import { Clock, Driver, Schedule } from "@tickwork/core"

const clock = new Clock.ManualClock(Date.parse("2026-03-06T00:00:00Z")) // a Friday
const driver = Driver.make({ clock })
driver.scheduleUnsafe({
  job: () => {},
  schedule: Schedule.cron("0 9 * * MON-FRI", { timeZone: "America/New_York" }),
})
const runs = driver.tick(Date.parse("2026-03-10T00:00:00Z")).map((r) => new Date(r.scheduledFor))
// 09:00 in New York both times: EST (UTC-5) on Friday, EDT (UTC-4) after the 8 March change.
assert.deepEqual(
  runs.map((d) => d.toISOString()),
  ["2026-03-06T14:00:00.000Z", "2026-03-09T13:00:00.000Z"],
)

export {}
