/**
 * A few end-to-end checks on the real clock, with generous bounds: the same code that sleeps
 * under TestClock in the other suites sleeps for real here.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Logger, Scope } from "effect"
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

describe("a backlog does not hold the event loop", () => {
  it("built under Effect.runSync, the actor lets Node's callbacks run between its batches", async () => {
    const scope = Scope.makeUnsafe()
    const run = <A, E>(effect: Effect.Effect<A, E>): A => Effect.runSync(quiet(effect))
    // Effect.runSync gives the fibers it forks a scheduler that yields with microtasks.
    const s = run(Scheduler.make({ workers: 8 }).pipe(Scope.provide(scope)))
    const n = 5_000
    // Event-loop turns, counted by a chain of setImmediate callbacks while the backlog runs.
    let turns = 0
    let done = 0
    let turnsAtFirst = -1
    let turnsAtLast = -1
    let all: () => void = () => {}
    const finished = new Promise<void>((resolve) => {
      all = resolve
    })
    const job = Effect.sync(() => {
      done++
      if (done === 1) turnsAtFirst = turns
      if (done === n) {
        turnsAtLast = turns
        all()
      }
    })
    // All due together, once the timer of the first slot fires.
    run(
      Effect.gen(function* () {
        for (let k = 0; k < n; k++) yield* s.schedule({ schedule: Schedule.once(100), job })
      }),
    )
    const tick = (): void => {
      turns++
      if (done < n) setImmediate(tick)
    }
    setImmediate(tick)
    await finished
    await Effect.runPromise(Scope.close(scope, Exit.void))
    // 5,000 runs are ten batches: the loop turned between them, not once after all of them.
    expect(turnsAtFirst).toBeGreaterThanOrEqual(0)
    expect(turnsAtLast - turnsAtFirst).toBeGreaterThanOrEqual(2)
  })

  it("a job scheduled under Effect.runSync yields to the event loop, not to microtasks", async () => {
    const scope = Scope.makeUnsafe()
    const run = <A, E>(effect: Effect.Effect<A, E>): A => Effect.runSync(quiet(effect))
    const s = run(Scheduler.make().pipe(Scope.provide(scope)))
    let turns = 0
    let finished = false
    let turnsAtStart = -1
    let turnsAtEnd = -1
    let ended: () => void = () => {}
    const done = new Promise<void>((resolve) => {
      ended = resolve
    })
    // A long job that yields now and then, as Effect does on its own every 2,048 steps.
    const job = Effect.gen(function* () {
      turnsAtStart = turns
      for (let k = 0; k < 20; k++) yield* Effect.yieldNow
      turnsAtEnd = turns
      finished = true
      ended()
    })
    run(s.schedule({ schedule: Schedule.once(50), job }))
    const tick = (): void => {
      turns++
      if (!finished) setImmediate(tick)
    }
    setImmediate(tick)
    await done
    await Effect.runPromise(Scope.close(scope, Exit.void))
    // Its twenty yields gave the event loop turns; under runSync's scheduler they were microtasks.
    expect(turnsAtStart).toBeGreaterThanOrEqual(0)
    expect(turnsAtEnd - turnsAtStart).toBeGreaterThanOrEqual(10)
  })
})
