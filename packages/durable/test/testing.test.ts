/**
 * `@tickwork/durable/testing`: the durable scheduler in virtual time. Moving the clock costs
 * real time in proportion to the runs on the way, not to the span (no fiber wakes on a fixed
 * interval while there is no work), and `TestClock.setTime` moves it either way.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Clock, Effect, Layer, References, Schema } from "effect"
import { TestClock } from "effect/testing"
import { DurableScheduler, Handler, Sqlite } from "../src/index.ts"
import { TestDurable } from "../src/testing/index.ts"

const DAY = 86_400_000

/** A handler recording each run's start (virtual ms) and attempt; fails while `fail` says so. */
const recorder = (fail: (attempt: number) => boolean = () => false) => {
  const runs: Array<{ readonly at: number; readonly attempt: number }> = []
  const handler = Handler.make("tick", Schema.Struct({}), (_, run) =>
    Effect.suspend(() => {
      runs.push({ at: run.startedAt, attempt: run.attempt })
      return fail(run.attempt) ? Effect.fail("unavailable") : Effect.void
    }),
  )
  return { runs, handler }
}

/**
 * The test layer's scheduler on a TestClock that counts the sleeps started on it: every
 * periodic fiber's wake-up is one sleep, so the count is what advancing the clock costs.
 */
const counted = <H extends Handler.Any>(
  handler: H,
  options: Partial<DurableScheduler.DurableSchedulerOptions<H>> = {},
) => {
  const sleeps = { count: 0 }
  const clock = Layer.effect(
    Clock.Clock,
    Effect.map(Clock.Clock, (c) => ({
      ...c,
      sleep: (d: Parameters<Clock.Clock["sleep"]>[0]) => {
        sleeps.count++
        return c.sleep(d)
      },
    })),
  ).pipe(Layer.provideMerge(TestClock.layer()))
  const layer = DurableScheduler.layer({
    ...TestDurable.defaults,
    ...options,
    handlers: [handler],
  }).pipe(
    Layer.provide(Sqlite.layer({ filename: ":memory:" })),
    Layer.provideMerge(clock),
    Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Warn")),
  )
  return { sleeps, layer }
}

describe("TestDurable", () => {
  it("wakes nothing on a fixed interval: an idle week costs no sleep per interval", async () => {
    const { handler } = recorder()
    const { sleeps, layer } = counted(handler)
    const woken = await Effect.runPromise(
      Effect.gen(function* () {
        yield* TestDurable.settle()
        const before = sleeps.count
        yield* TestDurable.advance(7 * DAY)
        return sleeps.count - before
      }).pipe(Effect.scoped, Effect.provide(layer)),
    )
    // Only the dispatcher's longest sleep (about 24.8 days) may be pending: nothing wakes in a
    // week. A lease renewer or health refresh on a fixed interval would sleep thousands of times.
    expect(woken).toBe(0)
  })

  it("keeps production's periodic upkeep where it is on: health every 5 s, pruning", async () => {
    const { handler } = recorder()
    const idleHour = (
      options: Partial<DurableScheduler.DurableSchedulerOptions<typeof handler>>,
    ) => {
      const { sleeps, layer } = counted(handler, options)
      return Effect.runPromise(
        Effect.gen(function* () {
          yield* TestDurable.settle()
          const before = sleeps.count
          yield* TestDurable.advance("1 hour")
          return sleeps.count - before
        }).pipe(Effect.scoped, Effect.provide(layer)),
      )
    }
    // The background health refresh (DurableScheduler.layer's default) looks every 5 s.
    expect(await idleHour({ health: { background: true } })).toBeGreaterThanOrEqual(720)
    // A retention prunes every hundredth of it, a minute apart at the least.
    expect(await idleHour({ retention: "1 hour" })).toBeGreaterThanOrEqual(60)
  })

  it("rejects a health.background that is not a boolean, naming it", async () => {
    const { handler } = recorder()
    const error = await Effect.runPromise(
      Effect.flip(
        Layer.build(
          TestDurable.layer({
            handlers: [handler],
            health: { background: "no" as unknown as boolean },
          }),
        ).pipe(Effect.scoped),
      ),
    )
    expect(error).toMatchObject({ _tag: "InvalidOption", field: "health.background", value: "no" })
  })

  it("costs a bounded number of wakes per run: 30 daily runs, at most 5 sleeps each", async () => {
    const { runs, handler } = recorder()
    const { sleeps, layer } = counted(handler)
    const woken = await Effect.runPromise(
      Effect.gen(function* () {
        const d = yield* DurableScheduler.DurableScheduler
        yield* d.schedule({
          handler,
          payload: {},
          schedule: Schedule.fixedRate(DAY, { delay: DAY }),
        })
        yield* TestDurable.settle()
        const before = sleeps.count
        yield* TestDurable.advance(30 * DAY)
        return sleeps.count - before
      }).pipe(Effect.scoped, Effect.provide(layer)),
    )
    expect(runs.length).toBe(30)
    // Per run: the dispatcher toward the next slot, the lease guard and the renewer once each,
    // and the store-count refresh (tasks by state) once after the change the run made, at most
    // every STORE_COUNTS_REFRESH_MS: a cost per run, never per span of time.
    expect(woken).toBeLessThanOrEqual(5 * 30)
  })

  it("runs a daily task 365 times over 365 virtual days", async () => {
    const { runs, handler } = recorder()
    const began = performance.now()
    await TestDurable.run(
      Effect.gen(function* () {
        const d = yield* DurableScheduler.DurableScheduler
        yield* d.schedule({
          handler,
          payload: {},
          schedule: Schedule.fixedRate(DAY, { delay: DAY }),
        })
        yield* TestDurable.advance(365 * DAY)
      }),
      { handlers: [handler] },
    )
    // Measured, not asserted (machine speed): printed for the record.
    console.log(`365 virtual days: ${Math.round(performance.now() - began)} ms real`)
    expect(runs.length).toBe(365)
    expect(runs[0]?.at).toBe(DAY)
    expect(runs[364]?.at).toBe(365 * DAY)
  })

  it("runs a fixed-rate task at each slot", async () => {
    const { runs, handler } = recorder()
    await TestDurable.run(
      Effect.gen(function* () {
        const d = yield* DurableScheduler.DurableScheduler
        yield* d.schedule({ handler, payload: {}, schedule: Schedule.fixedRate("1 minute") })
        yield* TestDurable.advance("5 minutes")
      }),
      { handlers: [handler] },
    )
    expect(runs.map((r) => r.at)).toEqual([0, 60_000, 120_000, 180_000, 240_000, 300_000])
  })

  it("retries a failing run with backoff", async () => {
    const { runs, handler } = recorder((attempt) => attempt < 3)
    const status = await TestDurable.run(
      Effect.gen(function* () {
        const d = yield* DurableScheduler.DurableScheduler
        const id = yield* d.schedule({
          handler,
          payload: {},
          schedule: Schedule.once("1 minute"),
          retry: { maxRetries: 3, base: "10 seconds", jitter: "none" },
        })
        yield* TestDurable.advance("1 hour")
        return yield* d.status(id)
      }),
      { handlers: [handler] },
    )
    // Backoff doubles from 10 s: attempt 2 at 60 + 10 s, attempt 3 at 70 + 20 s.
    expect(runs).toEqual([
      { at: 60_000, attempt: 1 },
      { at: 70_000, attempt: 2 },
      { at: 90_000, attempt: 3 },
    ])
    expect(status).toBe("done")
  })

  it("runs a cron task at its slots from a start date", async () => {
    const { runs, handler } = recorder()
    const start = Date.UTC(2026, 2, 1)
    await TestDurable.run(
      Effect.gen(function* () {
        const d = yield* DurableScheduler.DurableScheduler
        yield* d.schedule({
          handler,
          payload: {},
          schedule: Schedule.cron("30 9 * * 1-5", { timeZone: "UTC" }),
        })
        yield* TestDurable.advanceTo(start + 7 * DAY)
      }),
      { handlers: [handler], startAt: new Date(start) },
    )
    // 2026-03-01 is a Sunday: Monday 2 to Friday 6 March at 09:30 UTC.
    expect(runs.map((r) => new Date(r.at).toISOString())).toEqual(
      [2, 3, 4, 5, 6].map((day) => `2026-03-0${day}T09:30:00.000Z`),
    )
  })

  it("runs the README's daily cron digest 365 times in a virtual year", async () => {
    const { runs, handler } = recorder()
    const status = await TestDurable.run(
      Effect.gen(function* () {
        const durable = yield* DurableScheduler.DurableScheduler
        yield* durable.schedule({
          id: "digest",
          handler,
          payload: {},
          schedule: Schedule.cron("0 8 * * *", { timeZone: "UTC" }),
        })
        yield* TestDurable.advance("365 days")
        return yield* durable.status("digest")
      }),
      { handlers: [handler], startAt: new Date("2026-01-01T00:00:00Z") },
    )
    expect(runs.length).toBe(365)
    expect(new Date(runs[364]?.at ?? 0).toISOString()).toBe("2026-12-31T08:00:00.000Z")
    expect(status).toBe("scheduled")
  })

  it("moves with TestClock.setTime after the layer is built, forward and back", async () => {
    const { runs, handler } = recorder()
    const at = Date.UTC(2026, 0, 1)
    const seen = await TestDurable.run(
      Effect.gen(function* () {
        const d = yield* DurableScheduler.DurableScheduler
        // From 1970 to 2026 in one step, with the scheduler running: nothing wakes on the way
        // but the dispatcher's longest sleep (about 25 days), not a fiber every few seconds.
        yield* TestClock.setTime(at)
        yield* d.schedule({ handler, payload: {}, schedule: Schedule.fixedRate(DAY) })
        yield* TestDurable.settle()
        yield* TestClock.setTime(at + 2 * DAY)
        yield* TestDurable.settle()
        const forward = runs.map((r) => r.at)
        // Back a day: nothing runs again, and the next slot (day 3) is still where it was.
        yield* TestClock.setTime(at + DAY)
        yield* TestDurable.settle()
        const back = { now: yield* TestDurable.now, runs: runs.length }
        yield* TestDurable.setTime(at + 3 * DAY)
        return { forward, back, all: runs.map((r) => r.at) }
      }),
      { handlers: [handler] },
    )
    expect(seen.forward).toEqual([at, at + DAY, at + 2 * DAY])
    expect(seen.back).toEqual({ now: at + DAY, runs: 3 })
    expect(seen.all).toEqual([at, at + DAY, at + 2 * DAY, at + 3 * DAY])
  })
})
