/**
 * Durable runs are runs: the runtime's run metrics (runs by outcome, lateness, duration,
 * retries, missed slots) count them under the scheduler's name and their handler, as they count
 * in-memory runs; the gauges read the store's counts; failures are logged by default.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Metrics, Scheduler } from "@tickwork/runtime"
import { Effect, Logger, Metric, Schema } from "effect"
import { PrometheusMetrics } from "effect/observability"
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
        const m = Metrics.forScheduler("billing", "job")
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
      // The in-memory runs under the handler "default", the durable one under its own.
      const memoryRuns = Metrics.forScheduler("billing")
      const durableRuns = Metrics.forScheduler("billing", "job")
      expect((yield* Metric.value(memoryRuns.runs.succeeded)).count).toBe(2)
      expect((yield* Metric.value(durableRuns.runs.succeeded)).count).toBe(1)
      expect((yield* Metric.value(durableRuns.lateness)).count).toBe(1)
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
        const lateness = yield* Metric.value(Metrics.forScheduler("past", "job").lateness)
        expect(lateness.count).toBe(2)
        expect(lateness.max).toBe(0.02)
        const stats = yield* Effect.scoped(
          Effect.flatMap(StoreAdmin.open(t.file(), { readOnly: true }), (admin) => admin.stats),
        )
        expect(stats.lateness).toMatchObject({ runs: 2, max: 20 })
        t.cleanup()
      }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())),
  )

  it.effect(
    "count retries and skipped slots by handler, gauge the store's tasks, and log failures by default",
    () => {
      const logged: Array<string> = []
      const logger = Logger.make((o) => {
        if (o.logLevel === "Warn" || o.logLevel === "Error") logged.push(String(o.message))
      })
      return Effect.gen(function* () {
        const t = tempDir()
        const flaky = Handler.make("flaky", Schema.Struct({}), (_, run) =>
          run.attempt === 1 ? Effect.fail("first attempt") : Effect.void,
        )
        const slow = Handler.make("slow", Schema.Struct({}), () => Effect.sleep(35))
        const idle = Handler.make("idle", Schema.Struct({}), () => Effect.void)
        yield* withScheduler(
          sqlite(t.file()),
          { handlers: [flaky, slow, idle], runtime: { name: "app-durable" } },
          (d) =>
            Effect.gen(function* () {
              // Four one-shots that fail once and are retried.
              for (let k = 0; k < 4; k++) {
                yield* d.schedule({
                  id: `charge-${k}`,
                  handler: flaky,
                  payload: {},
                  schedule: Schedule.once(10),
                  retry: { maxRetries: 1, base: 10 },
                })
              }
              // Runs 35 ms every 10 ms: slots 10, 20 and 30 pass while the run at 0 goes on.
              yield* d.schedule({
                id: "report",
                handler: slow,
                payload: {},
                schedule: Schedule.fixedRate(10),
                missedRuns: "skip",
              })
              // Three tasks far ahead, still scheduled at the end.
              for (let k = 0; k < 3; k++) {
                yield* d.schedule({
                  id: `later-${k}`,
                  handler: idle,
                  payload: {},
                  schedule: Schedule.once("1 day"),
                })
              }
              for (let k = 0; k < 4; k++) yield* advance(d, 10)
              yield* d.cancel("report")
              // The gauges re-read the store at most every STORE_COUNTS_REFRESH_MS.
              yield* advance(d, 5_000)
              yield* advance(d, 5_000)
              const m = Metrics.forScheduler("app-durable", "flaky")
              expect((yield* Metric.value(m.retries)).count).toBe(4)
              expect((yield* Metric.value(m.runs.failed)).count).toBe(4)
              expect((yield* Metric.value(m.runs.succeeded)).count).toBe(4)
              const report = Metrics.forScheduler("app-durable", "slow")
              expect((yield* Metric.value(report.slotsMissed("overlap", "skip"))).count).toBe(3)
              expect((yield* Metric.value(report.retries)).count).toBe(0)
              expect((yield* Metric.value(m.pending)).value).toBe(3)
              const states = yield* Effect.forEach(
                ["scheduled", "done", "cancelled", "failed"] as const,
                (state) => Effect.map(Metric.value(m.tasks(state)), (v) => [state, v.value]),
              )
              expect(Object.fromEntries(states)).toEqual({
                scheduled: 3,
                done: 4,
                cancelled: 1,
                failed: 0,
              })
              // As a scrape reads them: the text `Prometheus.layer` serves.
              const text = yield* PrometheusMetrics.format()
              for (const line of [
                'tickwork_tasks_pending{scheduler="app-durable"} 3',
                'tickwork_tasks{scheduler="app-durable",state="scheduled"} 3',
                'tickwork_retries_total{scheduler="app-durable",handler="flaky"} 4',
                'tickwork_runs_total{scheduler="app-durable",handler="flaky",outcome="failed"} 4',
                'tickwork_slots_missed_total{scheduler="app-durable",handler="slow",cause="overlap",policy="skip"} 3',
              ]) {
                expect(text.split("\n")).toContain(line)
              }
            }),
        )
        // Each failed attempt is logged, with no option set (logFailures defaults to true).
        expect(logged.filter((l) => l.includes("tickwork run failed (task charge-")).length).toBe(4)
        t.cleanup()
      }).pipe(
        Effect.provideService(Metric.MetricRegistry, new Map()),
        Effect.provide(Logger.layer([logger])),
      )
    },
  )
})
