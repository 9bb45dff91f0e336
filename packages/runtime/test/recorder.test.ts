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

describe("what the recorder counts (SPEC §6.8, §12, §19.1)", () => {
  it.effect("slots missed are counted by cause and policy, as the ledger records them", () =>
    isolated(
      Effect.gen(function* () {
        const s = yield* Scheduler.make({ workers: 1, name: "missed", shutdown: "interrupt" })
        // Slots of both recurring tasks are merged (before a late start) or dropped (after an
        // overrun); "paused" skips the slots it missed while paused when it is resumed.
        yield* s.schedule({ id: "busy", schedule: Schedule.once(0), job: Effect.sleep(45) })
        yield* s.schedule({
          id: "merging",
          schedule: Schedule.fixedRate(10),
          missedRuns: "coalesce",
          job: Effect.sleep(25),
        })
        yield* s.schedule({
          id: "skipping",
          schedule: Schedule.fixedRate(10),
          missedRuns: "skip",
          job: Effect.sleep(35),
        })
        yield* s.schedule({
          id: "paused",
          schedule: Schedule.fixedRate(100),
          missedRuns: "skip",
          job: Effect.void,
        })
        yield* s.pause("paused")
        yield* TestClock.adjust(300)
        yield* s.resume("paused")
        yield* TestClock.adjust(1)
        const expected = new Map<string, number>()
        for (const id of ["merging", "skipping", "paused"]) {
          for (const o of yield* s.ledger(id)) {
            if (o.kind !== "coalesced" && o.kind !== "skipped") continue
            const key = `${o.cause}/${o.kind === "coalesced" ? "coalesce" : "skip"}`
            expected.set(key, (expected.get(key) ?? 0) + o.count)
          }
        }
        // Each way a slot is missed is here: merged before a start, dropped after a run, and
        // skipped by a resume.
        expect([...expected.keys()].sort()).toEqual(
          expect.arrayContaining(["late/coalesce", "paused/skip"]),
        )
        expect([...expected.keys()].some((k) => k.endsWith("/skip") && k !== "paused/skip")).toBe(
          true,
        )
        const m = Metrics.forScheduler("missed")
        const counted = new Map<string, number>()
        for (const cause of ["late", "overlap", "late-and-overlap", "paused", "unknown"]) {
          for (const policy of ["coalesce", "skip"] as const) {
            const n = (yield* Metric.value(m.slotsMissed(cause, policy))).count
            if (n > 0) counted.set(`${cause}/${policy}`, n)
          }
        }
        expect(counted).toEqual(expected)
      }),
    ),
  )

  it.effect("a retry is counted; a manual run's wait is not counted as lateness", () =>
    isolated(
      Effect.gen(function* () {
        const s = yield* Scheduler.make({ workers: 1, name: "counted", logFailures: false })
        yield* s.schedule({
          id: "flaky",
          schedule: Schedule.once(0),
          retry: { maxRetries: 1, base: 10 },
          job: (run) => (run.attempt === 1 ? Effect.fail("first") : Effect.void),
        })
        yield* TestClock.adjust(20)
        const m = Metrics.forScheduler("counted")
        expect((yield* Metric.value(m.retries)).count).toBe(1)
        expect((yield* Metric.value(m.lateness)).count).toBe(2)
        // A manual run that waits 30 ms for the only worker: not late (SPEC §19.1).
        yield* s.schedule({ id: "busy", schedule: Schedule.once(0), job: Effect.sleep(30) })
        yield* s.schedule({ id: "report", schedule: Schedule.once(60_000), job: Effect.void })
        yield* TestClock.adjust(0)
        yield* s.trigger("report")
        yield* TestClock.adjust(40)
        expect((yield* s.ledger("report")).map((o) => o.kind)).toEqual(["ran"])
        const lateness = yield* Metric.value(m.lateness)
        expect(lateness.count).toBe(3)
        expect(lateness.sum).toBe(0)
      }),
    ),
  )
})

describe("a listener hears only what it has callbacks for", () => {
  it.effect("callbacks it lacks are not called, so nothing is counted as a listener error", () =>
    Effect.gen(function* () {
      const started: Array<string> = []
      const s = yield* Scheduler.make({ listener: { started: (run) => started.push(run.id) } })
      yield* s.schedule({ id: "a", schedule: Schedule.fixedRate(10), job: Effect.void })
      yield* s.schedule({ id: "b", schedule: Schedule.once(50), job: Effect.void })
      yield* TestClock.adjust(15)
      yield* s.pause("a")
      yield* s.resume("a")
      yield* s.cancel("b")
      yield* TestClock.adjust(10)
      expect(started).toEqual(["a", "a", "a"])
      expect((yield* s.stats).listenerErrors).toBe(0)
    }),
  )
})

describe("which records end a task's history (retention.maxFinished)", () => {
  it.effect("a cancel ends it; an update or a pause does not", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ retention: { maxFinished: 1 } })
      yield* s.schedule({ id: "cancelled", schedule: Schedule.once(1_000), job: Effect.void })
      yield* s.schedule({ id: "updated", schedule: Schedule.once(1_000), job: Effect.void })
      yield* s.schedule({ id: "paused", schedule: Schedule.once(1_000), job: Effect.void })
      yield* s.cancel("cancelled")
      yield* s.update("updated", { priority: "high" })
      yield* s.pause("paused")
      expect((yield* s.ledger("cancelled")).map((o) => o.kind)).toEqual(["cancelled"])
      expect((yield* s.ledger("updated")).map((o) => o.kind)).toEqual(["updated"])
      // Another task finishes: past maxFinished, the cancelled task's history goes; the live
      // ones keep theirs.
      yield* s.schedule({ id: "done", schedule: Schedule.once(0), job: Effect.void })
      yield* TestClock.adjust(1)
      expect(yield* s.ledger("cancelled")).toEqual([])
      expect((yield* s.ledger("updated")).map((o) => o.kind)).toEqual(["updated"])
      expect((yield* s.ledger("paused")).map((o) => o.kind)).toEqual(["paused"])
      expect((yield* s.ledger("done")).map((o) => o.kind)).toEqual(["ran"])
    }),
  )
})

describe("an expired one-shot's record ends its history (SPEC §3.7)", () => {
  it.effect("past retention.maxFinished it is dropped like any finished task's", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 1, retention: { maxFinished: 1 } })
      // "busy" holds the only worker past "late"'s deadline (its slot + 5 ms).
      yield* s.schedule({ id: "busy", schedule: Schedule.once(0), job: Effect.sleep(30) })
      yield* s.schedule({ id: "late", schedule: Schedule.once(10), window: 5, job: Effect.void })
      yield* TestClock.adjust(30)
      expect(Option.getOrThrow(yield* s.info("late")).state).toBe("failed")
      yield* s.schedule({ id: "done", schedule: Schedule.once(0), job: Effect.void })
      yield* TestClock.adjust(1)
      expect(yield* s.ledger("late")).toEqual([])
      expect((yield* s.ledger("done")).map((o) => o.kind)).toEqual(["ran"])
    }),
  )
})

describe("the pending and in-flight gauges", () => {
  it.effect("read 0, not NaN, before the scheduler has taken its first turn", () =>
    isolated(
      Effect.gen(function* () {
        yield* Scheduler.make({ name: "fresh" })
        const m = Metrics.forScheduler("fresh")
        expect((yield* Metric.value(m.pending)).value).toBe(0)
        expect((yield* Metric.value(m.running)).value).toBe(0)
      }),
    ),
  )
})
