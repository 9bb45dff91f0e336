import assert from "node:assert/strict"
import { Clock, Driver, Schedule } from "@tickwork/core"

const clock = new Clock.ManualClock(1_000)
const driver = Driver.make({ clock })
const job = () => {}
const first = (schedule: Schedule.Schedule) =>
  driver.info(driver.scheduleUnsafe({ job, schedule }))?.scheduledFor

assert.equal(first(Schedule.once(250)), 1_250) // now + delay, runs once
assert.equal(first(Schedule.once("5 seconds")), 6_000)
assert.equal(first(Schedule.at(500)), 500) // an instant in the past is due at once
assert.equal(first(Schedule.fixedRate(100, { delay: 20 })), 1_020) // then s + period: a fixed grid
assert.equal(first(Schedule.fixedDelay("1 second")), 1_000) // then finishedAt + period
// Cron: 5 fields, or 6 with seconds first, in an IANA time zone (default UTC). The first slot
// is the first match strictly after now.
assert.equal(first(Schedule.cron("*/2 * * * * *")), 2_000)
// Custom: next(undefined, now) gives the first slot, next(slot, finishedAt) the following ones,
// undefined means "no more". It must be pure.
assert.equal(
  first(Schedule.custom((slot, finishedAt) => (slot === undefined ? finishedAt + 7 : undefined))),
  1_007,
)
