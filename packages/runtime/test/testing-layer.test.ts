/**
 * `@tickwork/runtime/testing`: the test layer (TestClock, quiet logs, one worker), `settle` and
 * `advance`, and the run-trace recorder.
 */
import { it as effectIt } from "@effect/vitest"
import { Cause, Clock, Effect, Exit, Logger, References } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { Schedule, Scheduler } from "../src/index.ts"
import { TestScheduler, Trace } from "../src/testing/index.ts"

describe("TestScheduler.layer", () => {
  it("runs on a TestClock that the program moves, from 0 or from startAt", async () => {
    const starts = (startAt?: Date) =>
      TestScheduler.run(
        Effect.gen(function* () {
          const scheduler = yield* Scheduler.Scheduler
          const seen: Array<number> = []
          yield* scheduler.schedule({
            schedule: Schedule.fixedRate("1 hour"),
            job: (run) => Effect.sync(() => seen.push(run.startedAt)),
          })
          yield* TestClock.adjust("2 hours") // the program's TestClock is the scheduler's
          yield* TestScheduler.settle()
          return { seen, now: yield* TestScheduler.now }
        }),
        startAt === undefined ? {} : { startAt },
      )
    expect(await starts()).toEqual({ seen: [0, 3_600_000, 7_200_000], now: 7_200_000 })
    const t0 = Date.UTC(2026, 2, 9, 2, 30)
    expect(await starts(new Date(t0))).toEqual({
      seen: [t0, t0 + 3_600_000, t0 + 7_200_000],
      now: t0 + 7_200_000,
    })
  })

  it("has one worker by default: due runs start one after another, in SPEC §4 order", async () => {
    const order = await TestScheduler.run(
      Effect.gen(function* () {
        const scheduler = yield* Scheduler.Scheduler
        const order: Array<string> = []
        const job = (name: string) => (run: { startedAt: number }) =>
          Effect.andThen(
            Effect.sync(() => order.push(`${name}@${run.startedAt}`)),
            Effect.sleep(10),
          )
        yield* scheduler.schedule({ schedule: Schedule.once(5), priority: "low", job: job("low") })
        yield* scheduler.schedule({
          schedule: Schedule.once(5),
          priority: "high",
          job: job("high"),
        })
        yield* scheduler.schedule({ schedule: Schedule.once(5), job: job("normal") })
        yield* TestScheduler.advance(40)
        expect((yield* scheduler.stats).workers).toBe(1)
        return order
      }),
    )
    expect(order).toEqual(["high@5", "normal@15", "low@25"])
  })

  it("drops logs below Warn by default; logLevel changes that", async () => {
    const logged = async (logLevel?: "Info" | "None") => {
      const lines: Array<string> = []
      const capture = Logger.make((o) => {
        lines.push(`${o.logLevel}: ${String(o.message)}`)
      })
      await Effect.runPromise(
        Effect.gen(function* () {
          const scheduler = yield* Scheduler.Scheduler
          yield* scheduler.schedule({
            schedule: Schedule.once(1),
            job: Effect.andThen(Effect.logInfo("job info"), Effect.logWarning("job warning")),
          })
          yield* TestScheduler.advance(1)
        }).pipe(
          Effect.scoped,
          Effect.provide(TestScheduler.layer(logLevel === undefined ? {} : { logLevel })),
          Effect.provide(Logger.layer([capture])),
        ),
      )
      return lines
    }
    expect(await logged()).toEqual(["Warn: job warning"])
    expect(await logged("Info")).toEqual([
      "Info: job info",
      "Warn: job warning",
      "Info: tickwork scheduler closed",
    ])
    expect(await logged("None")).toEqual([])
  })

  it("closes without waiting on virtual time for a run still going (shutdown: interrupt)", async () => {
    const status = await TestScheduler.run(
      Effect.gen(function* () {
        const scheduler = yield* Scheduler.Scheduler
        yield* scheduler.schedule({
          id: "long",
          schedule: Schedule.once(0),
          job: Effect.sleep("1 day"),
        })
        yield* Effect.yieldNow
        return yield* scheduler.status("long")
      }),
    )
    expect(status).toBe("running")
  })

  it("passes the Scheduler's options through and reports bad ones", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.scoped(Scheduler.Scheduler.use(() => Effect.void)).pipe(
        Effect.provide(TestScheduler.layer({ workers: 0 })),
      ),
    )
    expect(Exit.isFailure(exit) && String(Cause.squash(exit.cause))).toMatch(/workers/)
    const workers = await TestScheduler.run(
      Scheduler.Scheduler.use((s) => Effect.map(s.stats, (stats) => stats.workers)),
      { workers: 3 },
    )
    expect(workers).toBe(3)
  })

  effectIt.effect("works under @effect/vitest: the layer's TestClock replaces it.effect's", () =>
    Effect.gen(function* () {
      const scheduler = yield* Scheduler.Scheduler
      const id = yield* scheduler.schedule({
        schedule: Schedule.once("1 minute"),
        job: Effect.void,
      })
      yield* TestScheduler.advance("1 minute")
      expect(yield* scheduler.status(id)).toBe("done")
      expect(yield* References.MinimumLogLevel).toBe("Warn")
    }).pipe(Effect.provide(TestScheduler.layer())),
  )
})

describe("settle and advance", () => {
  it("settle runs what is due now without moving the clock", async () => {
    const result = await TestScheduler.run(
      Effect.gen(function* () {
        const scheduler = yield* Scheduler.Scheduler
        const a = yield* scheduler.schedule({ schedule: Schedule.once(0), job: Effect.void })
        const b = yield* scheduler.schedule({ schedule: Schedule.once(1), job: Effect.void })
        yield* TestScheduler.settle()
        return [yield* scheduler.status(a), yield* scheduler.status(b), yield* TestScheduler.now]
      }),
    )
    expect(result).toEqual(["done", "scheduled", 0])
  })

  it("advance starts every run at its slot, retries and follow-ups included", async () => {
    const starts = await TestScheduler.run(
      Effect.gen(function* () {
        const scheduler = yield* Scheduler.Scheduler
        const starts: Array<string> = []
        yield* scheduler.schedule({
          schedule: Schedule.once("1 minute"),
          retry: { maxRetries: 2, base: "10 seconds" },
          job: (run) =>
            Effect.andThen(
              Effect.sync(() => starts.push(`${run.attempt}@${run.startedAt}`)),
              Effect.fail("unavailable"),
            ),
        })
        yield* TestScheduler.advance("2 minutes")
        return starts
      }),
    )
    expect(starts).toEqual(["1@60000", "2@70000", "3@90000"])
  })

  it("advanceTo moves to an instant (and not back)", async () => {
    const times = await TestScheduler.run(
      Effect.gen(function* () {
        yield* TestScheduler.advanceTo(new Date("2026-03-09T02:30:00Z"))
        const a = yield* TestScheduler.now
        yield* TestScheduler.advanceTo(0)
        return [a, yield* TestScheduler.now]
      }),
    )
    expect(times).toEqual([Date.UTC(2026, 2, 9, 2, 30), Date.UTC(2026, 2, 9, 2, 30)])
  })

  it("settles while a job sleeps in virtual time: the clock can stop inside a run, and the run ends at its own time", async () => {
    const seen = await TestScheduler.run(
      Effect.gen(function* () {
        const scheduler = yield* Scheduler.Scheduler
        const id = yield* scheduler.schedule({ schedule: Schedule.once(0), job: Effect.sleep(100) })
        const starts: Array<number> = []
        const other = yield* scheduler.schedule({
          schedule: Schedule.once(20),
          job: Effect.map(Clock.currentTimeMillis, (t) => void starts.push(t)),
        })
        yield* TestScheduler.advance(50)
        // With one worker, the run due at 20 waits for it.
        const mid = [yield* scheduler.status(id), yield* scheduler.status(other)]
        yield* TestScheduler.advance(100)
        const end = [yield* scheduler.status(id), yield* scheduler.status(other)]
        return { mid, end, starts }
      }),
      { workers: 1 },
    )
    expect(seen).toEqual({
      mid: ["running", "scheduled"],
      end: ["done", "done"],
      starts: [100],
    })
  })

  it("settles with a job waiting on something that never comes: the run stays running", async () => {
    const status = await TestScheduler.run(
      Effect.gen(function* () {
        const scheduler = yield* Scheduler.Scheduler
        const id = yield* scheduler.schedule({ schedule: Schedule.once(0), job: Effect.never })
        yield* TestScheduler.settle()
        return yield* scheduler.status(id)
      }),
    )
    expect(status).toBe("running")
  })

  it("settle dies with NotSettled when its turns run out before the scheduler is quiet", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.gen(function* () {
        const scheduler = yield* Scheduler.Scheduler
        yield* scheduler.schedule({ schedule: Schedule.once(0), job: Effect.never })
        yield* TestScheduler.settle({ maxTurns: 50 })
      }).pipe(Effect.scoped, Effect.provide(TestScheduler.layer())),
    )
    expect(Exit.isFailure(exit)).toBe(true)
    const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
    expect(defect).toBeInstanceOf(TestScheduler.NotSettled)
    expect(defect).toMatchObject({ turns: 50, inFlight: 1, nextSlot: undefined, now: 0 })
  })
})

describe("Trace", () => {
  const scenario = (missedRuns: "skip" | "coalesce") =>
    Effect.gen(function* () {
      const trace = yield* Trace.record()
      const scheduler = yield* Scheduler.Scheduler
      // The one worker is busy with "report" until 35, so "poll" starts late.
      yield* scheduler.schedule({
        id: "report",
        priority: "high",
        schedule: Schedule.once(0),
        job: Effect.sleep(35),
      })
      yield* scheduler.schedule({
        id: "poll",
        schedule: Schedule.fixedRate(10),
        missedRuns,
        job: Effect.void,
      })
      yield* scheduler.schedule({ id: "reminder", schedule: Schedule.once(100), job: Effect.void })
      yield* scheduler.schedule({
        id: "pay",
        schedule: Schedule.once(38),
        retry: { maxRetries: 1, base: 5 },
        job: (run) => (run.attempt === 1 ? Effect.fail("declined") : Effect.void),
      })
      yield* TestScheduler.advance(45)
      yield* scheduler.cancel("reminder")
      yield* scheduler.schedule({ id: "export", schedule: Schedule.once(5), job: Effect.never })
      yield* TestClock.adjust(5)
      yield* scheduler.cancel("export", { interrupt: true })
      yield* TestScheduler.settle()
      return trace
    })

  it("records every kind of occurrence as one line, in the order they happened", async () => {
    const skip = await TestScheduler.run(Effect.map(scenario("skip"), (t) => t.lines()))
    expect(skip).toEqual([
      "35 report ran slot=0 start=0 attempt=1 run=1 succeeded -> done",
      "35 poll ran slot=0 start=35 attempt=1 run=1 succeeded -> scheduled@40",
      "35 poll skipped 10..30 count=3 cause=late next=40",
      "38 pay retried slot=38 start=38 attempt=1 run=1 failed -> scheduled@43",
      "40 poll ran slot=40 start=40 attempt=1 run=2 succeeded -> scheduled@50",
      "43 pay ran slot=38 due=43 start=43 attempt=2 run=2 succeeded -> done",
      "45 reminder cancelled from=scheduled slot=100",
      "50 poll ran slot=50 start=50 attempt=1 run=3 succeeded -> scheduled@60",
      "50 export cancelled from=running slot=50 interrupted",
      "50 export ran slot=50 start=50 attempt=1 run=1 interrupted -> cancelled",
    ])
    const coalesce = await TestScheduler.run(
      Effect.map(scenario("coalesce"), (t) => t.lines({ id: "poll" })),
    )
    expect(coalesce.slice(0, 2)).toEqual([
      "35 poll coalesced 0..20 count=3 cause=late next=30",
      "35 poll ran slot=30 start=35 attempt=1 run=1 succeeded -> scheduled@40",
    ])
  })

  it("subscribes before returning: a run due at once is recorded", async () => {
    const lines = await TestScheduler.run(
      Effect.gen(function* () {
        const trace = yield* Trace.record()
        const scheduler = yield* Scheduler.Scheduler
        yield* scheduler.schedule({ id: "now", schedule: Schedule.once(0), job: Effect.void })
        yield* TestScheduler.settle()
        return trace.lines()
      }),
    )
    expect(lines).toEqual(["0 now ran slot=0 start=0 attempt=1 run=1 succeeded -> done"])
  })

  it("writes ISO times when asked", async () => {
    const t0 = Date.UTC(2026, 2, 9, 2, 30)
    const lines = await TestScheduler.run(
      Effect.gen(function* () {
        const trace = yield* Trace.record({ time: "iso" })
        const scheduler = yield* Scheduler.Scheduler
        yield* scheduler.schedule({
          id: "digest",
          schedule: Schedule.cron("30 2 * * *"),
          job: Effect.void,
        })
        yield* TestScheduler.advance("1 day")
        return trace.lines()
      }),
      { startAt: t0 - 1 },
    )
    expect(lines).toEqual([
      "2026-03-09T02:30:00.000Z digest ran slot=2026-03-09T02:30:00.000Z start=2026-03-09T02:30:00.000Z attempt=1 run=1 succeeded -> scheduled@2026-03-10T02:30:00.000Z",
    ])
  })

  it("expectLines and expectContains fail with a TraceMismatch that shows the difference", async () => {
    const results = await TestScheduler.run(
      Effect.gen(function* () {
        const trace = yield* scenario("skip")
        const ok = yield* Effect.exit(
          trace.expectContains([/report ran/, "45 reminder cancelled from=scheduled slot=100"]),
        )
        const order = yield* Effect.flip(
          trace.expectContains(["45 reminder cancelled from=scheduled slot=100", /report ran/]),
        )
        const exact = yield* Effect.exit(
          trace.expectLines(
            [
              "38 pay retried slot=38 start=38 attempt=1 run=1 failed -> scheduled@43",
              "43 pay ran slot=38 due=43 start=43 attempt=2 run=2 succeeded -> done",
            ],
            { id: "pay" },
          ),
        )
        const wrong = yield* Effect.flip(trace.expectLines(["0 pay ran"], { id: "pay" }))
        trace.clear()
        const cleared = trace.lines()
        return { ok, order, exact, wrong, cleared }
      }),
    )
    expect(Exit.isSuccess(results.ok)).toBe(true)
    expect(results.order).toBeInstanceOf(Trace.TraceMismatch)
    expect(results.order.message).toMatch(/no line \/report ran\/ after the earlier expected lines/)
    expect(Exit.isSuccess(results.exact)).toBe(true)
    expect(results.wrong.message).toMatch(
      /^line 1: expected "0 pay ran", got "38 pay retried slot=38/,
    )
    expect(results.wrong.actual).toHaveLength(2)
    expect(results.cleared).toEqual([])
  })

  it("diff is undefined for equal traces and names the first differing line otherwise", () => {
    expect(Trace.diff(["a", "b"], ["a", "b"])).toBeUndefined()
    expect(Trace.diff(["a", "b"], ["a"])).toMatch(/^line 2: expected "b", got nothing/)
    expect(Trace.diff([], ["x"])).toMatch(/^line 1: expected nothing, got "x"/)
  })
})
