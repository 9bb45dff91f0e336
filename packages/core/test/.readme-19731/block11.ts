import assert from "node:assert/strict"
import { Clock, Driver, Schedule } from "@tickwork/core"

const clock = new Clock.ManualClock(0)
const driver = Driver.make({
  clock,
  breakers: { smtp: { failures: 2, coolDown: "100 millis" } },
})
let smtpUp = false
const send = () => {
  if (!smtpUp) throw new Error("smtp is down")
}
driver.scheduleUnsafe({
  id: "digest",
  job: send,
  schedule: Schedule.fixedRate(10),
  breaker: "smtp",
})
driver.scheduleUnsafe({ id: "welcome", job: send, schedule: Schedule.once(50), breaker: "smtp" })

driver.tick(100) // digest@0 and digest@10 fail: the breaker opens at 10
assert.equal(driver.breaker("smtp")?.state, "open")
assert.deepEqual(driver.breaker("smtp")?.held, ["digest", "welcome"]) // the one-shot waits

smtpUp = true
// At 110 it goes half-open: welcome (its slot 50 has passed) is the probe and succeeds, which
// closes the breaker; digest resumes at the first grid slot >= 110.
assert.deepEqual(
  driver.tick(120).map((r) => `${r.id}@${r.scheduledFor}`),
  ["welcome@50", "digest@110", "digest@120"],
)
assert.deepEqual(
  driver
    .drainOccurrences()
    .filter((o) => o.kind === "breaker")
    .map((o) => `${o.from} -> ${o.to}`),
  ["closed -> open", "open -> half-open", "half-open -> closed"],
)
