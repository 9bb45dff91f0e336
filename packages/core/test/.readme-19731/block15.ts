import assert from "node:assert/strict"
import { Kernel, Schedule, Task } from "@tickwork/core"

const kernel = new Kernel.Kernel<string>()
kernel.schedule({ id: "poll", job: "poll the queue", schedule: Schedule.fixedRate(10) }, 0)
kernel.schedule({ job: "send report", schedule: Schedule.once(5) }, 0)

assert.equal(kernel.nextSlot(), 0)
const poll = kernel.takeDue(0)
assert.equal(poll?.job, "poll the queue")
assert.equal(kernel.takeDue(0), undefined) // nothing else is due at 0
assert.equal(kernel.status("poll"), "running")

const report = kernel.takeDue(7) // due at 5, taken at 7: 2 ms late
assert.deepEqual([report?.job, report?.scheduledFor, report?.startedAt], ["send report", 5, 7])

// Outcomes can be reported in any order.
const done = kernel.complete(report as Kernel.Run<string>, Task.succeeded, 8, true)
assert.equal(done?.state, "done")
const next = kernel.complete(poll as Kernel.Run<string>, Task.failed(new Error("timeout")), 9, true)
assert.deepEqual([next?.state, next?.continuation, next?.nextSlot], ["scheduled", "next", 10])

kernel.checkInvariants() // the SPEC §14 structural checks; for tests
assert.deepEqual(
  {
    scheduled: kernel.stats().scheduled,
    done: kernel.stats().done,
    inFlight: kernel.stats().inFlight,
  },
  { scheduled: 1, done: 1, inFlight: 0 },
)
