/**
 * `@tickwork/durable/testing`: the durable scheduler in virtual time. Moving the clock costs
 * real time in proportion to the runs on the way, not to the span (no fiber wakes on a fixed
 * interval while there is no work), and `TestClock.setTime` moves it either way.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Clock, Effect, Layer, References, Schema } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql/SqlClient"
import { TestClock } from "effect/testing"
import { DurableScheduler, Handler, SqliteClient, TaskStore } from "../src/index.ts"
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
 * The test layer's scheduler on a TestClock that counts the sleeps started on it and those whose
 * timer fired (every fired sleep is one wake-up TestClock runs: what advancing the clock costs),
 * on an in-memory SQLite store that counts the statements it executes.
 */
const counted = <H extends Handler.Any>(
  handler: H,
  options: Partial<DurableScheduler.DurableSchedulerOptions<H>> = {},
) => {
  const sleeps = { count: 0, fired: 0 }
  const statements = { count: 0 }
  const clock = Layer.effect(
    Clock.Clock,
    Effect.map(Clock.Clock, (c) => ({
      ...c,
      sleep: (d: Parameters<Clock.Clock["sleep"]>[0]) => {
        sleeps.count++
        return Effect.tap(
          c.sleep(d),
          Effect.sync(() => void sleeps.fired++),
        )
      },
    })),
  ).pipe(Layer.provideMerge(TestClock.layer()))
  const store = Layer.effect(
    TaskStore.TaskStore,
    Effect.gen(function* () {
      const { client, db } = yield* SqliteClient.make({ filename: ":memory:" })
      countStatements(db, statements)
      return yield* TaskStore.make({ exclusive: true }).pipe(
        Effect.provideService(SqlClient, client),
      )
    }),
  ).pipe(Layer.provide(Reactivity.layer))
  const layer = DurableScheduler.layer({
    ...TestDurable.defaults,
    ...options,
    handlers: [handler],
  }).pipe(
    Layer.provide(store),
    Layer.provideMerge(clock),
    Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Warn")),
  )
  return { sleeps, statements, layer }
}

/** Counts every execution of a statement `db` prepares from now on (cached ones included). */
const countStatements = (db: SqliteClient.Db, counter: { count: number }) => {
  const prepare = db.prepare.bind(db)
  db.prepare = ((source: string) => {
    const statement = prepare(source)
    const all = statement.all.bind(statement)
    const run = statement.run.bind(statement)
    statement.all = ((...args: Array<unknown>) => {
      counter.count++
      return all(...args)
    }) as typeof statement.all
    statement.run = ((...args: Array<unknown>) => {
      counter.count++
      return run(...args)
    }) as typeof statement.run
    return statement
  }) as typeof db.prepare
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
        const week = sleeps.count - before
        // Then a month: the dispatcher's longest sleep ends once on the way, and nothing else.
        const fired = sleeps.fired
        yield* TestDurable.advance(30 * DAY)
        return { week, month: sleeps.fired - fired }
      }).pipe(Effect.scoped, Effect.provide(layer)),
    )
    // Only the dispatcher's longest sleep (about 24.8 days) may be pending: nothing wakes in a
    // week. A lease renewer or health refresh on a fixed interval would sleep thousands of times.
    expect(woken).toEqual({ week: 0, month: 1 })
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

  it("costs a bounded amount of work per run: one timer fired and 11 statements", async () => {
    const { runs, handler } = recorder()
    const { sleeps, statements, layer } = counted(handler)
    const cost = await Effect.runPromise(
      Effect.gen(function* () {
        const d = yield* DurableScheduler.DurableScheduler
        yield* d.schedule({
          handler,
          payload: {},
          schedule: Schedule.fixedRate(DAY, { delay: DAY }),
        })
        yield* TestDurable.settle()
        const before = { ...sleeps, statements: statements.count }
        yield* TestDurable.advance(30 * DAY)
        return {
          started: sleeps.count - before.count,
          fired: sleeps.fired - before.fired,
          statements: statements.count - before.statements,
        }
      }).pipe(Effect.scoped, Effect.provide(layer)),
    )
    expect(runs.length).toBe(30)
    // Per run, one timer fires: the dispatcher's, at the slot. Its sleep toward the run's lease
    // deadline is the only other one set, cancelled by the commit at the same instant; the lease
    // guard and renewer set none for a run that starts, ends and commits at once, and the store
    // counts are re-read with no timer at all.
    expect(cost.fired).toBe(30)
    expect(cost.started).toBe(2 * 30)
    // Per run, 11 statements: the claim (the due ids, then their UPDATE) and the next due time;
    // the commit (BEGIN, the check for rows changed while they ran, the row UPDATE, the ledger
    // INSERT, COMMIT); after it, a claim that finds nothing due (one read) and the next due
    // time; the store's counts by state for the gauges.
    expect(cost.statements).toBeLessThanOrEqual(11 * 30)
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

  it("settles while handlers sleep in virtual time, and wakes each at its own time (a key's runs in series)", async () => {
    const spans: Array<string> = []
    const slow = Handler.make("slow", Schema.Struct({ ms: Schema.Number }), (p, run) =>
      Effect.gen(function* () {
        yield* Effect.sleep(p.ms)
        spans.push(`${run.id} ${run.startedAt}-${yield* Clock.currentTimeMillis}`)
      }),
    )
    const result = await TestDurable.run(
      Effect.gen(function* () {
        const d = yield* DurableScheduler.DurableScheduler
        for (const [id, ms] of [
          ["a", 300],
          ["b", 100],
          ["c", 200],
        ] as const) {
          yield* d.schedule({
            id,
            handler: slow,
            payload: { ms },
            schedule: Schedule.once(0),
            key: "k",
          })
        }
        // Right after scheduling, `a` sleeps inside its handler: settling stops there.
        yield* TestDurable.settle()
        const early = [yield* d.status("a"), yield* d.status("b"), yield* TestDurable.now]
        yield* TestDurable.advance("250 millis")
        const mid = [yield* d.status("a"), yield* d.status("b")]
        yield* TestDurable.advance("1 second")
        return { early, mid }
      }),
      { handlers: [slow], limits: { keys: { concurrency: 1 } } },
    )
    expect(result).toEqual({ early: ["running", "scheduled", 0], mid: ["running", "scheduled"] })
    expect(spans).toEqual(["a 0-300", "b 300-400", "c 400-600"])
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
