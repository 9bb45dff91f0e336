/**
 * The recorder marks a task final in the ledger when it is cancelled or expires, not only when
 * its last run ends: an earlier generation's records are kept while its task is among the
 * `maxFinished` retained final tasks (SPEC §27.4), so a task made final either way must count.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Metric } from "effect"
import { TestClock } from "effect/testing"
import { type Ledger, Metrics, Schedule, Scheduler } from "../src/index.ts"

const kinds = (ledger: ReadonlyArray<Ledger.Occurrence>) => ledger.map((o) => o.kind)

describe("an earlier generation's records leave with the maxFinished bound (SPEC §27.4)", () => {
  it.effect("a cancelled generation counts among the retained final tasks", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ retention: { maxFinished: 1 } })
      yield* s.schedule({ id: "a", schedule: Schedule.once(1_000), job: Effect.void })
      expect(yield* s.cancel("a")).toBe(true)
      // Generation 2 of the id: generation 1's records stay readable by generation.
      yield* s.schedule({ id: "a", schedule: Schedule.once(1_000), job: Effect.void })
      expect(kinds(yield* s.ledger("a", { generation: 1 }))).toEqual(["cancelled"])
      // A second final task passes maxFinished: the first (a's generation 1) is dropped.
      yield* s.schedule({ id: "b", schedule: Schedule.once(1_000), job: Effect.void })
      expect(yield* s.cancel("b")).toBe(true)
      expect(yield* s.ledger("a", { generation: 1 })).toEqual([])
      expect(kinds(yield* s.ledger("b"))).toEqual(["cancelled"])
    }),
  )

  it.effect("an expired one-shot's generation counts among the retained final tasks", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 1, retention: { maxFinished: 1 } })
      // The hog holds the only worker past late's window; it repeats, so it never turns final.
      yield* s.schedule({ id: "hog", schedule: Schedule.fixedRate(1_000), job: Effect.sleep(50) })
      yield* s.schedule({ id: "late", schedule: Schedule.once(10), window: 20, job: Effect.void })
      yield* TestClock.adjust(60)
      expect(yield* s.status("late")).toBe("failed")
      yield* s.schedule({ id: "late", schedule: Schedule.once(10_000), job: Effect.void })
      expect(kinds(yield* s.ledger("late", { generation: 1 }))).toEqual(["expired"])
      yield* s.schedule({ id: "b", schedule: Schedule.once(10_000), job: Effect.void })
      expect(yield* s.cancel("b")).toBe(true)
      expect(yield* s.ledger("late", { generation: 1 })).toEqual([])
      expect(yield* s.status("hog")).toBe("scheduled")
    }),
  )
})

/** A Clock whose monotonic time is TestClock's and whose wall clock is TestClock's + `step`. */
const steppingClock = Effect.gen(function* () {
  const test = yield* Clock.Clock
  let step = 0
  const clock: Clock.Clock = Object.create(test, {
    currentTimeMillisUnsafe: { value: () => test.currentTimeMillisUnsafe() + step },
    currentTimeMillis: { value: Effect.sync(() => test.currentTimeMillisUnsafe() + step) },
  })
  return { clock, stepBy: (ms: number) => (step += ms) }
})

const HOUR = 3_600_000

/** Runs `body` with a metric registry of its own, so counts start at zero. */
const isolated = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.provideService(body, Metric.MetricRegistry, new Map())

describe("lateness counted from acceptance across a wall-clock step (SPEC §2, §6.8)", () => {
  it.effect("-1 h: runs that waited a minute since their acceptance are a minute late", () =>
    isolated(
      Effect.gen(function* () {
        const { clock, stepBy } = yield* steppingClock
        yield* TestClock.setTime(5 * HOUR)
        const s = yield* Scheduler.make({ workers: 1, name: "step-back" }).pipe(
          Effect.provideService(Clock.Clock, clock),
        )
        // Each holds the only worker for a monotonic minute; "before" waits for the hog.
        const minute = Effect.sleep(60_000)
        yield* s.schedule({ id: "hog", schedule: Schedule.once(0), job: minute })
        yield* s.schedule({ id: "before", schedule: Schedule.once(0), job: minute })
        stepBy(-HOUR)
        // The hog ends: the actor re-anchors (now 4 h + 1 min on the calendar), starts "before".
        yield* TestClock.adjust(60_000)
        expect((yield* s.stats).clockSteps).toBe(1)
        // Accepted after the step, for 10 s before it; it waits a minute for "before".
        yield* s.schedule({
          id: "after",
          schedule: Schedule.at(4 * HOUR + 50_000),
          job: Effect.void,
        })
        yield* TestClock.adjust(60_000)
        expect(yield* s.status("after")).toBe("done")
        // The hog started on time; the others a minute after their acceptance.
        const lateness = yield* Metric.value(Metrics.forScheduler("step-back").lateness)
        expect(lateness.count).toBe(3)
        expect(lateness.sum).toBe(120)
      }),
    ),
  )

  it.effect("+1 h: an at instant passed by the step counts from its acceptance, not its time", () =>
    isolated(
      Effect.gen(function* () {
        const { clock, stepBy } = yield* steppingClock
        yield* TestClock.setTime(5 * HOUR)
        const s = yield* Scheduler.make({ workers: 1, name: "step-ahead" }).pipe(
          Effect.provideService(Clock.Clock, clock),
        )
        yield* s.schedule({ id: "hog", schedule: Schedule.once(0), job: Effect.sleep(60_000) })
        yield* TestClock.adjust(0)
        // Due half an hour after its acceptance; the step makes its acceptance 6 h.
        yield* s.schedule({ id: "soon", schedule: Schedule.at(5.5 * HOUR), job: Effect.void })
        stepBy(HOUR)
        // The hog ends a monotonic minute on: the actor re-anchors, then starts "soon".
        yield* TestClock.adjust(60_000)
        expect((yield* s.stats).clockSteps).toBe(1)
        expect(yield* s.status("soon")).toBe("done")
        const lateness = yield* Metric.value(Metrics.forScheduler("step-ahead").lateness)
        expect(lateness.count).toBe(2)
        expect(lateness.sum).toBe(60)
      }),
    ),
  )
})
