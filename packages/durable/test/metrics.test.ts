/**
 * Durable runs are runs: the runtime's run metrics (runs by outcome, lateness, duration) count
 * them under the scheduler's name, as they count in-memory runs.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Metrics, Scheduler } from "@tickwork/runtime"
import { Effect, Metric, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Handler, StoreAdmin } from "../src/index.ts"
import { advance, sqlite, tempDir, withScheduler } from "./helpers.ts"

describe("durable run metrics", () => {
  it.effect(
    "count each run by outcome, with its lateness and duration, under the scheduler's name",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const job = Handler.make("job", Schema.Struct({ fail: Schema.Boolean }), (p) =>
          p.fail ? Effect.fail("no") : Effect.sleep(20),
        )
        yield* withScheduler(
          sqlite(t.file()),
          { handlers: [job], runtime: { name: "billing" } },
          (d) =>
            Effect.gen(function* () {
              yield* d.schedule({
                handler: job,
                payload: { fail: false },
                schedule: Schedule.once(10),
              })
              yield* d.schedule({
                handler: job,
                payload: { fail: true },
                schedule: Schedule.once(10),
              })
              for (let k = 0; k < 5; k++) yield* advance(d, 10)
            }),
        )
        const m = Metrics.forScheduler("billing")
        expect((yield* Metric.value(m.runs.succeeded)).count).toBe(1)
        expect((yield* Metric.value(m.runs.failed)).count).toBe(1)
        expect((yield* Metric.value(m.duration)).max).toBe(0.02)
        expect((yield* Metric.value(m.lateness)).count).toBe(2)
        t.cleanup()
      }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())),
  )

  it.effect("count together with an in-memory scheduler of the same name in one registry", () =>
    Effect.gen(function* () {
      const t = tempDir()
      const job = Handler.make("job", Schema.Struct({}), () => Effect.void)
      const memory = yield* Scheduler.make({ name: "billing" })
      yield* memory.schedule({ schedule: Schedule.once(0), job: Effect.void })
      yield* TestClock.adjust(1)
      yield* withScheduler(
        sqlite(t.file()),
        { handlers: [job], runtime: { name: "billing" } },
        (d) =>
          Effect.gen(function* () {
            yield* d.schedule({ handler: job, payload: {}, schedule: Schedule.once(10) })
            for (let k = 0; k < 3; k++) yield* advance(d, 10)
          }),
      )
      yield* memory.schedule({ schedule: Schedule.once(0), job: Effect.void })
      yield* TestClock.adjust(1)
      const m = Metrics.forScheduler("billing")
      expect((yield* Metric.value(m.runs.succeeded)).count).toBe(3)
      expect((yield* Metric.value(m.lateness)).count).toBe(3)
      t.cleanup()
    }).pipe(Effect.scoped, Effect.provideService(Metric.MetricRegistry, new Map())),
  )

  it.effect(
    "count a past `at`'s lateness from acceptance (SPEC §6.8), in the metric and the store's figures",
    () =>
      Effect.gen(function* () {
        const t = tempDir()
        const day = 86_400_000
        const job = Handler.make("job", Schema.Struct({}), () => Effect.sleep(30))
        yield* TestClock.adjust(day)
        yield* withScheduler(
          sqlite(t.file()),
          { handlers: [job], workers: 1, runtime: { name: "past" } },
          (d) =>
            Effect.gen(function* () {
              // B holds the only worker from +0 to +30 ms; A, accepted at +10 ms for a time a
              // day gone, starts when B ends: 20 ms late, not a day and 30 ms.
              yield* d.schedule({ id: "B", handler: job, payload: {}, schedule: Schedule.once(0) })
              yield* advance(d, 10)
              yield* d.schedule({ id: "A", handler: job, payload: {}, schedule: Schedule.at(0) })
              for (let k = 0; k < 8; k++) yield* advance(d, 10)
            }),
        )
        const lateness = yield* Metric.value(Metrics.forScheduler("past").lateness)
        expect(lateness.count).toBe(2)
        expect(lateness.max).toBe(0.02)
        const stats = yield* Effect.scoped(
          Effect.flatMap(StoreAdmin.open(t.file(), { readOnly: true }), (admin) => admin.stats),
        )
        expect(stats.lateness).toMatchObject({ runs: 2, max: 20 })
        t.cleanup()
      }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())),
  )
})
