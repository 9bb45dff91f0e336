/**
 * A few end-to-end checks on the real clock, with generous bounds: the same code that sleeps
 * under TestClock in the other suites sleeps for real here.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Logger } from "effect"
import { Schedule, Scheduler } from "../src/index.ts"

const quiet = Effect.provide(Logger.layer([]))

describe("on the real clock", () => {
  it.live("a one-shot runs at its slot, never before, and not much after", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const ran = yield* Deferred.make<{ scheduledFor: number; startedAt: number; at: number }>()
      const t0 = Date.now()
      yield* s.schedule({
        schedule: Schedule.once(50),
        job: (run) =>
          Deferred.succeed(ran, {
            scheduledFor: run.scheduledFor,
            startedAt: run.startedAt,
            at: Date.now(),
          }),
      })
      const r = yield* Deferred.await(ran)
      expect(r.startedAt).toBeGreaterThanOrEqual(r.scheduledFor)
      expect(r.at - t0).toBeGreaterThanOrEqual(45) // Date.now() and the monotonic clock may differ by a ms or two
      expect(r.startedAt - r.scheduledFor).toBeLessThan(1_000)
    }).pipe(quiet),
  )

  it.live("a fixed-rate task keeps its grid and a retrying task eventually succeeds", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 2 })
      const slots: Array<number> = []
      const three = yield* Deferred.make<void>()
      yield* s.schedule({
        id: "rate",
        schedule: Schedule.fixedRate(30),
        job: (run) =>
          Effect.suspend(() => {
            slots.push(run.scheduledFor)
            return slots.length === 3 ? Deferred.succeed(three, undefined) : Effect.void
          }),
      })
      let attempts = 0
      const recovered = yield* Deferred.make<number>()
      yield* s.schedule({
        schedule: Schedule.once(0),
        retry: { maxRetries: 3, base: 10 },
        job: Effect.suspend(() =>
          ++attempts < 3 ? Effect.fail("not yet") : Deferred.succeed(recovered, attempts),
        ),
      })
      yield* Deferred.await(three)
      const [first, second, third] = slots as [number, number, number]
      expect(second - first).toBe(30)
      expect(third - first).toBe(60)
      expect(yield* Deferred.await(recovered)).toBe(3)
    }).pipe(quiet),
  )
})
