/**
 * A program using the installed `@tickwork/runtime`: the Scheduler service on Effect's
 * `TestClock` (a fixed-rate task, a retry, the ledger and metrics), then on the real clock with a
 * short delay.
 */
import assert from "node:assert/strict"
import { Metrics, Schedule, Scheduler } from "@tickwork/runtime"
import { Deferred, Effect, Metric } from "effect"
import { TestClock } from "effect/testing"

const virtual = Effect.gen(function* () {
  const scheduler = yield* Scheduler.make({ name: "packed", workers: 2, logFailures: false })
  const slots: Array<number> = []
  yield* scheduler.schedule({
    id: "tick",
    schedule: Schedule.fixedRate("1 second"),
    job: (run) => Effect.sync(() => void slots.push(run.slot)),
  })
  yield* scheduler.schedule({
    id: "flaky",
    schedule: Schedule.once(500),
    retry: { maxRetries: 1, base: 100 },
    job: (run) => (run.attempt === 1 ? Effect.fail("first attempt") : Effect.void),
  })
  yield* TestClock.adjust("3500 millis")
  assert.deepEqual(slots, [0, 1000, 2000, 3000])
  assert.equal(yield* scheduler.status("flaky"), "done")
  const kinds = (yield* scheduler.ledger("flaky")).map((o) => o.kind)
  assert.deepEqual(kinds, ["retried", "ran"])
  const metrics = Metrics.forScheduler("packed")
  assert.equal((yield* Metric.value(metrics.runs.succeeded)).count, 5)
  assert.equal((yield* Metric.value(metrics.retries)).count, 1)
}).pipe(Effect.scoped, Effect.provide(TestClock.layer()))

const live = Effect.gen(function* () {
  const scheduler = yield* Scheduler.make({ name: "live" })
  const done = yield* Deferred.make<number>()
  const scheduledAt = Date.now()
  yield* scheduler.schedule({
    schedule: Schedule.once("20 millis"),
    job: Effect.sync(() => Date.now()).pipe(Effect.flatMap((t) => Deferred.succeed(done, t))),
  })
  const ranAt = yield* Deferred.await(done).pipe(Effect.timeout("30 seconds"))
  assert.ok(ranAt - scheduledAt >= 19, `ran after ${ranAt - scheduledAt} ms`)
}).pipe(Effect.scoped)

await Effect.runPromise(virtual)
await Effect.runPromise(live)
console.log("runtime: ok")
