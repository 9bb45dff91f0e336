import assert from "node:assert/strict"
import { Clock, Driver, type MissedRun, Schedule } from "@tickwork/core"

const slotsAfterJump = (missedRuns: MissedRun.MissedRunPolicy) => {
  const clock = new Clock.ManualClock(0)
  const driver = Driver.make({ clock })
  driver.scheduleUnsafe({ job: () => {}, schedule: Schedule.fixedRate(10), missedRuns })
  driver.runDue() // slot 0 runs at 0; the next slot is 10
  clock.set(35) // the process was asleep
  return { ran: driver.tick(35).map((r) => r.scheduledFor), next: driver.nextSlot() }
}
assert.deepEqual(slotsAfterJump("catch-up"), { ran: [10, 20, 30], next: 40 })
assert.deepEqual(slotsAfterJump("coalesce"), { ran: [30], next: 40 }) // once, as the latest slot
assert.deepEqual(slotsAfterJump("skip"), { ran: [10], next: 40 }) // the late one, then the grid

export {}
