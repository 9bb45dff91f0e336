import { describe, expect, it } from "@effect/vitest"
import type { Task } from "@tickwork/core"
import { Effect, Fiber, Logger, Metric, Option, References, Stream, Tracer } from "effect"
import { TestClock } from "effect/testing"
import { Metrics, Schedule, Scheduler } from "../src/index.ts"

/** Runs `body` with a metric registry of its own, so counts start at zero. */
const isolated = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.provideService(body, Metric.MetricRegistry, new Map())

describe("metrics", () => {
  it.effect(
    "count runs by outcome, record lateness and duration in seconds, and gauge pending and running",
    () =>
      isolated(
        Effect.gen(function* () {
          const s = yield* Scheduler.make({ workers: 1 })
          yield* s.schedule({ schedule: Schedule.once(0), job: Effect.sleep(30) })
          yield* s.schedule({ schedule: Schedule.once(10), job: Effect.fail("x") })
          yield* s.schedule({ schedule: Schedule.once(20), job: Effect.die("y") })
          yield* s.schedule({ schedule: Schedule.once(100), job: Effect.void })
          yield* TestClock.adjust(50)
          const m = Metrics.forScheduler("default")
          expect((yield* Metric.value(m.runs.succeeded)).count).toBe(1)
          expect((yield* Metric.value(m.runs.failed)).count).toBe(1)
          expect((yield* Metric.value(m.runs.defect)).count).toBe(1)
          const lateness = yield* Metric.value(m.lateness)
          expect(lateness.count).toBe(3)
          // The second and third waited for the only worker: 20 ms and 10 ms.
          expect(lateness.sum).toBeCloseTo(0 + 0.02 + 0.01, 9)
          expect(lateness.max).toBe(0.02)
          const duration = yield* Metric.value(m.duration)
          expect(duration.count).toBe(3)
          expect(duration.max).toBe(0.03)
          expect((yield* Metric.value(m.pending)).value).toBe(1)
          expect((yield* Metric.value(m.running)).value).toBe(0)
        }),
      ),
  )

  it.effect(
    "report the state Effect's own histogram and counter would hold for the same values",
    () =>
      isolated(
        Effect.gen(function* () {
          const s = yield* Scheduler.make({ workers: 1, name: "same" })
          const durations = [0, 1, 3, 7, 40, 2_500]
          for (const ms of durations) {
            yield* s.schedule({ schedule: Schedule.once(0), job: Effect.sleep(ms) })
          }
          yield* TestClock.adjust(10_000)
          // A pushed histogram and counter fed the same durations, in a registry of their own.
          const pushed = Effect.provideService(
            Effect.gen(function* () {
              const duration = Metric.histogram("d", { boundaries: Metrics.secondsBoundaries })
              for (const ms of durations) yield* Metric.update(duration, ms / 1000)
              const runs = Metric.counter("r", { incremental: true })
              yield* Metric.update(runs, durations.length)
              return { duration: yield* Metric.value(duration), runs: yield* Metric.value(runs) }
            }),
            Metric.MetricRegistry,
            new Map(),
          )
          const expected = yield* pushed
          const m = Metrics.forScheduler("same")
          expect(yield* Metric.value(m.duration)).toEqual(expected.duration)
          expect(yield* Metric.value(m.runs.succeeded)).toEqual(expected.runs)
          // No run failed: that series does not exist, as with a pushed counter.
          const names = (yield* Metric.snapshot).map(
            (x) => `${x.id}/${x.attributes?.outcome ?? ""}`,
          )
          expect(names).toContain("tickwork_runs_total/succeeded")
          expect(names).not.toContain("tickwork_runs_total/failed")
        }),
      ),
  )

  it.effect(
    "go on counting in a scheduler made again with the same name, apart from other names",
    () =>
      isolated(
        Effect.gen(function* () {
          const runOnce = (name: string) =>
            Effect.scoped(
              Effect.gen(function* () {
                const s = yield* Scheduler.make({ name })
                yield* s.schedule({ schedule: Schedule.once(0), job: Effect.void })
                yield* TestClock.adjust(1)
              }),
            )
          yield* runOnce("billing")
          yield* runOnce("billing")
          yield* runOnce("mail")
          const count = (name: string) =>
            Effect.map(Metric.value(Metrics.forScheduler(name).runs.succeeded), (v) => v.count)
          expect(yield* count("billing")).toBe(2)
          expect(yield* count("mail")).toBe(1)
        }),
      ),
  )
})

describe("tracing and logs", () => {
  it.effect("each run has a span with the task id, slot and attempt, and annotated logs", () =>
    Effect.gen(function* () {
      const spans: Array<{ name: string; attributes: Record<string, unknown> }> = []
      const tracer = Tracer.make({
        span: (options) => {
          const span = new Tracer.NativeSpan(options)
          const end = span.end.bind(span)
          span.end = (t, exit) => {
            end(t, exit)
            spans.push({ name: span.name, attributes: Object.fromEntries(span.attributes) })
          }
          return span
        },
      })
      const annotations: Array<Record<string, unknown>> = []
      const logger = Logger.make((o) => {
        annotations.push({ ...o.fiber.getRef(References.CurrentLogAnnotations) })
      })
      yield* Effect.gen(function* () {
        const s = yield* Scheduler.make()
        yield* s.schedule({
          id: "traced",
          schedule: Schedule.once(5),
          retry: { maxRetries: 1, base: 1 },
          job: (run) => (run.attempt === 1 ? Effect.fail("first") : Effect.log("second attempt")),
        })
        yield* TestClock.adjust(10)
      }).pipe(Effect.withTracer(tracer), Effect.provide(Logger.layer([logger])))
      expect(
        spans.map((s) => [
          s.name,
          s.attributes["tickwork.task"],
          s.attributes["tickwork.slot"],
          s.attributes["tickwork.attempt"],
        ]),
      ).toEqual([
        ["tickwork.run", "traced", 5, 1],
        ["tickwork.run", "traced", 5, 2], // a retry keeps its slot
      ])
      expect(spans[1]?.attributes["tickwork.due"]).toBe(6)
      // The retry started at its due time: it is not late, though it is 1 ms past its slot.
      expect(spans[1]?.attributes["tickwork.lateness_ms"]).toBe(0)
      expect(annotations).toContainEqual({
        "tickwork.task": "traced",
        "tickwork.slot": 5,
        "tickwork.attempt": 2,
      })
    }),
  )
})

describe("occurrence stream", () => {
  it.effect("publishes every occurrence to each subscriber in order", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const collected = yield* Effect.forkChild(Stream.runCollect(Stream.take(s.occurrences, 4)), {
        startImmediately: true,
      })
      yield* s.schedule({ id: "a", schedule: Schedule.once(1), job: Effect.void })
      yield* s.schedule({ id: "b", schedule: Schedule.fixedRate(2), job: Effect.void })
      yield* s.schedule({ id: "c", schedule: Schedule.once(5), job: Effect.void })
      yield* s.cancel("c")
      yield* TestClock.adjust(2)
      const records = yield* Fiber.join(collected)
      expect(records.map((o) => `${o.kind}:${o.kind === "breaker" ? o.breaker : o.id}`)).toEqual([
        "cancelled:c",
        "ran:b",
        "ran:a",
        "ran:b",
      ])
      const info = Option.getOrThrow(yield* s.info("b"))
      expect(info.runNumber).toBe(2)
    }),
  )
})

describe("lateness of a retry", () => {
  it.effect("is measured from the retry's due time, not from its slot on the grid", () =>
    isolated(
      Effect.gen(function* () {
        const s = yield* Scheduler.make({ workers: 1, name: "retry-late", logFailures: false })
        const starts: Array<{ attempt: number; scheduledFor: number; startedAt: number }> = []
        // A fails at 0 and retries 100 ms later; B holds the only worker from 50 to 130 ms, so
        // the retry due at 100 starts 30 ms late (130 ms after its slot).
        yield* s.schedule({
          id: "A",
          schedule: Schedule.once(0),
          retry: { maxRetries: 1, base: 100 },
          job: (run) =>
            Effect.suspend(() => {
              starts.push({
                attempt: run.attempt,
                scheduledFor: run.scheduledFor,
                startedAt: run.startedAt,
              })
              return run.attempt === 1 ? Effect.fail("first") : Effect.void
            }),
        })
        yield* s.schedule({ id: "B", schedule: Schedule.once(50), job: Effect.sleep(80) })
        yield* TestClock.adjust(200)
        expect(starts).toEqual([
          { attempt: 1, scheduledFor: 0, startedAt: 0 },
          { attempt: 2, scheduledFor: 100, startedAt: 130 },
        ])
        const lateness = yield* Metric.value(Metrics.forScheduler("retry-late").lateness)
        expect(lateness.count).toBe(3)
        // A's first attempt and B started on time; the retry 130 - 100 ms late.
        expect(lateness.sum).toBeCloseTo(0.03, 9)
        expect(lateness.max).toBe(0.03)
      }),
    ),
  )
})

describe("lateness of a run due before its task was accepted", () => {
  it.effect("counts from acceptance (SPEC §6.8): a past `at` runs at once and is not late", () =>
    isolated(
      Effect.gen(function* () {
        const day = 86_400_000
        yield* TestClock.adjust(day)
        const s = yield* Scheduler.make({ workers: 1, name: "past-at" })
        // B holds the only worker from +0 to +30 ms; A, accepted at +10 ms for a time a day
        // gone, waits for it: 20 ms late, not a day and 30 ms.
        yield* s.schedule({ id: "B", schedule: Schedule.once(0), job: Effect.sleep(30) })
        yield* TestClock.adjust(10)
        yield* s.schedule({ id: "A", schedule: Schedule.at(0), job: Effect.void })
        yield* TestClock.adjust(100)
        expect(Option.getOrThrow(yield* s.info("A")).state).toBe("done")
        const lateness = yield* Metric.value(Metrics.forScheduler("past-at").lateness)
        expect(lateness.count).toBe(2)
        expect(lateness.sum).toBeCloseTo(0.02, 9)
        expect(lateness.max).toBe(0.02)
      }),
    ),
  )

  it.effect(
    "a past due time counts from acceptance beside runs that count from their due time",
    () =>
      isolated(
        Effect.gen(function* () {
          const day = 86_400_000
          yield* TestClock.adjust(day)
          const s = yield* Scheduler.make({ workers: 1, name: "past-at-mixed" })
          // B holds the only worker from +0 to +30 ms. C, accepted at +5 ms and due at +25, counts
          // from +25; A, accepted last (+10 ms) for +7, just past, counts from +10. Both start at
          // +30, when B ends: 5 ms and 20 ms late (A would be 23 counted from its due time).
          yield* s.schedule({ id: "B", schedule: Schedule.once(0), job: Effect.sleep(30) })
          yield* TestClock.adjust(5)
          yield* s.schedule({ id: "C", schedule: Schedule.once(20), job: Effect.void })
          yield* TestClock.adjust(5)
          yield* s.schedule({ id: "A", schedule: Schedule.at(day + 7), job: Effect.void })
          yield* TestClock.adjust(100)
          expect(Option.getOrThrow(yield* s.info("A")).state).toBe("done")
          expect(Option.getOrThrow(yield* s.info("C")).state).toBe("done")
          const lateness = yield* Metric.value(Metrics.forScheduler("past-at-mixed").lateness)
          expect(lateness.count).toBe(3)
          expect(lateness.sum).toBeCloseTo(0.025, 9)
          expect(lateness.max).toBe(0.02)
        }),
      ),
  )
})

describe("the ledger of each generation of an id (SPEC §27.4)", () => {
  it.effect("scheduling a final id again keeps generation 1's ledger, read by generation", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ logFailures: false })
      yield* s.schedule({ id: "report", schedule: Schedule.once(0), job: Effect.fail("first") })
      yield* TestClock.adjust(1)
      yield* s.schedule({ id: "report", schedule: Schedule.once(0), job: Effect.void })
      yield* TestClock.adjust(1)
      const outcomes = (ledger: ReadonlyArray<{ readonly kind: string }>) =>
        ledger.map((o) => (o.kind === "ran" ? (o as Task.RunRecord).outcome.kind : o.kind))
      expect(outcomes(yield* s.ledger("report"))).toEqual(["succeeded"])
      expect(outcomes(yield* s.ledger("report", { generation: 2 }))).toEqual(["succeeded"])
      expect(outcomes(yield* s.ledger("report", { generation: 1 }))).toEqual(["failed"])
      expect(yield* s.ledger("report", { generation: 3 })).toEqual([])
      const bad = yield* Effect.flip(s.ledger("report", { generation: 0 }))
      expect(bad).toMatchObject({ _tag: "InvalidOption", field: "generation", value: 0 })
    }),
  )
})
