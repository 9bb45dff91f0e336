/**
 * The durable figures of deduplication keys (SPEC §20.3): `stats().dedup` (`keys` read from the
 * store, `deduplicated` and `replaced` counted by this process), the counter
 * `tickwork_schedules_deduplicated_total{scheduler, outcome}`, and an operator's
 * `StoreAdmin.info(...).dedup`. SQLite under the TestClock and PostgreSQL.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Metrics } from "@tickwork/runtime"
import { Effect, Metric } from "effect"
import { TestClock } from "effect/testing"
import { type DurableScheduler, Postgres, StoreAdmin } from "../src/index.ts"
import { recording, sqlite, tempDir, withScheduler } from "./helpers.ts"
import { freshDatabase } from "./pg.ts"

type D = DurableScheduler.DurableSchedulerShape

/** A pending task of `record` under `dedup`, due an hour after it is accepted. */
const task = (
  id: string,
  dedup: { key: string; mode?: "singleton" | "debounce" | "throttle"; window?: number },
) => ({ id, handler: "record", payload: { n: 1 }, schedule: Schedule.once(3_600_000), dedup })

const counter = (name: string, outcome: "deduplicated" | "replaced") =>
  Effect.map(Metric.value(Metrics.forScheduler(name).deduplicated(outcome)), (state) => state.count)

/**
 * Three keys held (singleton `s`, debounce `d`, throttle `w`), three requests deduplicated and
 * one replaced; then `s`'s holder cancelled. Returns the stats before and after the cancel.
 */
const figures = (d: D) =>
  Effect.gen(function* () {
    const before = (yield* d.stats).dedup
    yield* d.schedule(task("a", { key: "s" }))
    yield* d.schedule(task("a2", { key: "s" }))
    yield* d.scheduleAll([task("a3", { key: "s" })])
    yield* d.schedule(task("h", { key: "d", mode: "debounce" }))
    const replaced = yield* d.scheduleDeduplicated(task("h2", { key: "d", mode: "debounce" }))
    yield* d.schedule(task("w", { key: "w", mode: "throttle", window: 3_600_000 }))
    yield* d.schedule(task("w2", { key: "w", mode: "throttle", window: 3_600_000 }))
    // A task without a key counts nowhere.
    yield* d.schedule({ ...task("plain", { key: "x" }), dedup: undefined })
    const held = (yield* d.stats).dedup
    yield* d.cancel("a")
    const afterCancel = (yield* d.stats).dedup
    return { before, replaced, held, afterCancel }
  })

const expectFigures = (seen: Effect.Success<ReturnType<typeof figures>>) => {
  expect(seen.before).toEqual({ keys: 0, deduplicated: 0, replaced: 0 })
  expect(seen.replaced).toEqual({ id: "h", outcome: "replaced" })
  expect(seen.held).toEqual({ keys: 3, deduplicated: 3, replaced: 1 })
  // `s`'s only row is final: its key is free, no longer held.
  expect(seen.afterCancel).toEqual({ keys: 2, deduplicated: 3, replaced: 1 })
}

describe("SQLite: deduplication figures (SPEC §20.3)", () => {
  it.effect("stats().dedup, the deduplicated counter and StoreAdmin.info(...).dedup", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const file = t.file()
      const { handler } = recording()
      const name = "dedup-figures"
      const seen = yield* withScheduler(
        sqlite(file),
        { handlers: [handler], runtime: { name } },
        (d) =>
          Effect.gen(function* () {
            const seen = yield* figures(d)
            const metric = [yield* counter(name, "deduplicated"), yield* counter(name, "replaced")]
            // A throttle key whose newest holder is final is not held, though an older task
            // under it is still pending (the holder is the newest row, as in the kernel). The
            // request's own window (1 ms) has passed, so it creates `w`'s successor.
            yield* TestClock.adjust(1_000)
            yield* d.schedule(task("w3", { key: "w", mode: "throttle", window: 1 }))
            const successor = (yield* d.stats).dedup.keys
            yield* d.cancel("w3")
            const newestFinal = (yield* d.stats).dedup.keys
            return { ...seen, metric, successor, newestFinal }
          }),
      )
      expectFigures(seen)
      expect(seen.metric).toEqual([3, 1])
      expect([seen.successor, seen.newestFinal]).toEqual([2, 1])
      // An operator's tool reads each task's key from the row.
      const infos = yield* Effect.scoped(
        Effect.flatMap(StoreAdmin.open(file, { readOnly: true }), (admin) =>
          Effect.all([admin.info("h"), admin.info("w"), admin.info("plain")]),
        ),
      )
      expect(infos.map((i) => i.dedup)).toEqual([
        { key: "d", mode: "debounce" },
        { key: "w", mode: "throttle", window: 3_600_000 },
        undefined,
      ])
      t.cleanup()
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())),
  )
})

describe("PostgreSQL: deduplication figures (SPEC §20.3)", () => {
  let db: { url: string; drop: () => Promise<void> }
  beforeEach(async () => {
    db = await freshDatabase()
  })
  afterEach(async () => {
    await db.drop()
  })

  it.live("stats().dedup and the deduplicated counter", () =>
    Effect.gen(function* () {
      const { handler } = recording()
      const name = "dedup-figures-pg"
      const seen = yield* withScheduler(
        Postgres.layer({ url: db.url }),
        { handlers: [handler], runtime: { name }, pollInterval: 60_000 },
        (d) =>
          Effect.gen(function* () {
            const seen = yield* figures(d)
            const metric = [yield* counter(name, "deduplicated"), yield* counter(name, "replaced")]
            return { ...seen, metric }
          }),
      )
      expectFigures(seen)
      expect(seen.metric).toEqual([3, 1])
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())),
  )
})
