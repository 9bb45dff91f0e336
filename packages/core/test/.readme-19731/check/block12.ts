import assert from "node:assert/strict"
import { Driver, Schedule, Task } from "@tickwork/core"

// New York springs forward on 2026-03-08: 02:30 does not exist and runs at 03:30.
const slots = Schedule.preview(Schedule.cron("30 2 * * *", { timeZone: "America/New_York" }), {
  from: Date.parse("2026-03-07T12:00:00Z"),
  count: 2,
})
assert.ok(Array.isArray(slots))
assert.deepEqual(slots[0]?.dst, { kind: "gap", shiftedBy: 3_600_000 })
assert.equal(slots[1]?.dst, undefined)

// SPEC §7's example, without jobs: A (one retry) fails then succeeds; R always fails.
const sim = Driver.simulate(
  [
    { id: "A", schedule: Schedule.once(0), retry: { maxRetries: 1, base: 1 } },
    { id: "R", schedule: Schedule.fixedRate(10) },
  ],
  {
    until: 10,
    outcome: (run) => (run.id === "R" || run.attempt === 1 ? Task.failed("boom") : Task.succeeded),
  },
)
assert.ok(!("_tag" in sim))
assert.deepEqual(
  sim.runs.map((r) => `${r.id}@${r.scheduledFor} ${r.outcome.kind}`),
  ["A@0 failed", "R@0 failed", "A@1 succeeded", "R@10 failed"],
)

export {}
