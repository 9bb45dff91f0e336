import assert from "node:assert/strict"
import { Result } from "effect"
import { Clock, Driver, Errors, Schedule } from "@tickwork/core"

const driver = Driver.make({ clock: new Clock.ManualClock(0) })
const job = () => {}

const r = driver.schedule({ job, schedule: Schedule.fixedRate(0) })
assert.ok(Result.isFailure(r))
assert.equal(r.failure._tag, "InvalidPeriod")
assert.equal(r.failure.field, "period")
assert.equal(r.failure.value, 0)

const tags = [
  Schedule.once(-1),
  Schedule.once("1.5 millis"),
  Schedule.at(Number.NaN),
  Schedule.cron("0 25 * * *"),
  Schedule.cron("0 9 * * *", { timeZone: "Mars/Olympus" }),
].map((schedule) =>
  Result.match(driver.schedule({ job, schedule }), {
    onSuccess: () => "accepted",
    onFailure: (e) => e._tag,
  }),
)
assert.deepEqual(tags, [
  "InvalidDelay",
  "InvalidDelay",
  "InvalidTime",
  "InvalidCronExpression",
  "InvalidTimeZone",
])

assert.throws(
  () => driver.scheduleUnsafe({ job, schedule: Schedule.once(0), retry: { factor: 0.5 } }),
  (e) => e instanceof Errors.InvalidRetryPolicy && e.field === "retry.factor",
)
assert.equal(driver.stats().accepted, 0)
