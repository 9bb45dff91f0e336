/**
 * The recorder seen through a scheduler: what it counts and keeps as the task table grows.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Metric, Option } from "effect"
import { TestClock } from "effect/testing"
import { Metrics, Schedule, Scheduler, type Task } from "../src/index.ts"

/** Runs `body` with a metric registry of its own, so counts start at zero. */
const isolated = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.provideService(body, Metric.MetricRegistry, new Map())

describe("lateness counted from acceptance, past the first 64 tasks (SPEC §6.8)", () => {
  it.effect("keeps each task's acceptance time when its table grows", () =>
    isolated(
      Effect.gen(function* () {
        const day = 86_400_000
        yield* TestClock.adjust(day)
        const s = yield* Scheduler.make({ workers: 1, name: "grown" })
        // B holds the only worker from +0 to +30 ms.
        yield* s.schedule({ id: "B", schedule: Schedule.once(0), job: Effect.sleep(30) })
        yield* TestClock.adjust(10)
        // Accepted at +10 for a time a day gone: the first and the 65th task of the table, the
        // one accepted before the acceptance times grew past 64, the other where they grew.
        yield* s.schedule({ id: "first", schedule: Schedule.at(0), job: Effect.void })
        for (let k = 0; k < 62; k++) {
          yield* s.schedule({ id: `filler${k}`, schedule: Schedule.once(day), job: Effect.void })
        }
        yield* s.schedule({ id: "row64", schedule: Schedule.at(0), job: Effect.void })
        for (let k = 62; k < 80; k++) {
          yield* s.schedule({ id: `filler${k}`, schedule: Schedule.once(day), job: Effect.void })
        }
        yield* TestClock.adjust(100)
        expect(Option.getOrThrow(yield* s.info("first")).state).toBe("done")
        expect(Option.getOrThrow(yield* s.info("row64")).state).toBe("done")
        const lateness = yield* Metric.value(Metrics.forScheduler("grown").lateness)
        // B on time; "first" and "row64" 20 ms after their acceptance, not a day late.
        expect(lateness.count).toBe(3)
        expect(lateness.max).toBe(0.02)
        expect(lateness.sum).toBeCloseTo(0.04, 9)
      }),
    ),
  )
})

describe("what a listener is handed is its own", () => {
  it.effect("completed records kept by a listener do not change with later runs", () =>
    Effect.gen(function* () {
      const kept: Array<Task.RunRecord> = []
      const s = yield* Scheduler.make({ listener: { completed: (record) => kept.push(record) } })
      yield* s.schedule({ id: "a", schedule: Schedule.fixedRate(10), job: Effect.succeed("x") })
      yield* s.schedule({ id: "b", schedule: Schedule.once(15), job: Effect.void })
      yield* TestClock.adjust(20)
      expect(kept.map((r) => [r.id, r.startedAt, r.outcome.kind])).toEqual([
        ["a", 0, "succeeded"],
        ["a", 10, "succeeded"],
        ["b", 15, "succeeded"],
        ["a", 20, "succeeded"],
      ])
    }),
  )
})
