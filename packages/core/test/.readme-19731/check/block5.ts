import assert from "node:assert/strict"
import { Clock, Driver, Random, Schedule } from "@tickwork/core"

const driver = Driver.make({ clock: new Clock.ManualClock(0), random: Random.seeded(42) })
let calls = 0
const id = driver.scheduleUnsafe({
  job: () => {
    if (++calls < 4) throw new Error(`attempt ${calls} failed`)
  },
  schedule: Schedule.once(0),
  retry: { maxRetries: 5, base: 100, factor: 2, maxDelay: "1 second" },
})
const records = driver.tick(10_000)
assert.deepEqual(
  records.map((r) => [r.attempt, r.scheduledFor, r.outcome.kind]),
  [
    [1, 0, "failed"],
    [2, 100, "failed"],
    [3, 300, "failed"],
    [4, 700, "succeeded"],
  ],
)
assert.equal(driver.status(id), "done")

export {}
