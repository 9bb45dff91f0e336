/**
 * SPEC §19 through the runtime Scheduler on TestClock: `trigger` runs a task once now on the
 * pool and leaves its grid as it was, without counting its wait as lateness; `retry` gives a
 * failed task one more attempt, its ledger kept; refusals are typed and change nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Metric, Option } from "effect"
import { TestClock } from "effect/testing"
import { type Ledger, Metrics, Run, Schedule, Scheduler } from "../src/index.ts"

const isolated = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.provideService(body, Metric.MetricRegistry, new Map())

const runs = (ledger: ReadonlyArray<Ledger.Occurrence>) =>
  ledger.flatMap((o) =>
    o.kind === "ran" || o.kind === "retried"
      ? [[o.slot, o.startedAt, o.attempt, o.manual === true, o.outcome.kind] as const]
      : [],
  )

describe("trigger (SPEC §19.1)", () => {
  it.effect("runs once now, keeps the grid, and its wait is not lateness", () =>
    isolated(
      Effect.gen(function* () {
        const s = yield* Scheduler.make({ workers: 1 })
        const seen: Array<boolean | undefined> = []
        yield* s.schedule({
          id: "report",
          schedule: Schedule.fixedRate(1_000, { delay: 1_000 }),
          job: Effect.gen(function* () {
            seen.push((yield* Run.CurrentRun).manual)
          }),
        })
        yield* s.schedule({ id: "busy", schedule: Schedule.once(0), job: Effect.sleep(30) })
        yield* TestClock.adjust(0)
        expect(yield* s.status("busy")).toBe("running")
        yield* s.trigger("report")
        // The manual run waits 30 ms for the only worker, then runs.
        yield* TestClock.adjust(50)
        expect(runs(yield* s.ledger("report"))).toEqual([[0, 30, 1, true, "succeeded"]])
        expect(Option.getOrThrow(yield* s.info("report")).scheduledFor).toBe(1_000)
        const m = Metrics.forScheduler("default")
        // Only busy's run was measured: the manual run's 30 ms wait is not lateness.
        expect((yield* Metric.value(m.lateness)).count).toBe(1)
        expect((yield* Metric.value(m.lateness)).sum).toBe(0)
        yield* TestClock.adjust(2_000)
        expect(runs(yield* s.ledger("report")).map(([slot, , , manual]) => [slot, manual])).toEqual(
          [
            [0, true],
            [1_000, false],
            [2_000, false],
          ],
        )
        expect(seen).toEqual([true, false, false])
        expect((yield* Metric.value(m.lateness)).count).toBe(3)
      }),
    ),
  )

  it.effect("is refused for a running, paused or unknown task, with the id and state", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ id: "long", schedule: Schedule.fixedRate(100), job: Effect.sleep(50) })
      yield* TestClock.adjust(10)
      const running = yield* Effect.flip(s.trigger("long"))
      expect(running).toMatchObject({
        _tag: "ManualRunRefused",
        action: "trigger",
        id: "long",
        state: "running",
      })
      yield* TestClock.adjust(50)
      yield* s.pause("long")
      expect(yield* Effect.flip(s.trigger("long"))).toMatchObject({ state: "paused" })
      expect(yield* Effect.flip(s.trigger("ghost"))).toMatchObject({ state: "unknown" })
      expect(runs(yield* s.ledger("long"))).toHaveLength(1)
    }),
  )
})

describe("retry (SPEC §19.2)", () => {
  it.effect("a failed task gets one more attempt now; the ledger keeps every run", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      let fail = true
      yield* s.schedule({
        id: "charge",
        schedule: Schedule.once(10),
        retry: { maxRetries: 1, base: 5 },
        job: Effect.suspend(() => (fail ? Effect.fail("declined") : Effect.void)),
      })
      yield* TestClock.adjust(100)
      expect(yield* s.status("charge")).toBe("failed")
      fail = false
      yield* s.retry("charge")
      yield* TestClock.adjust(0)
      expect(yield* s.status("charge")).toBe("done")
      expect(runs(yield* s.ledger("charge"))).toEqual([
        [10, 10, 1, false, "failed"],
        [10, 15, 2, false, "failed"],
        [10, 100, 3, false, "succeeded"],
      ])
      expect(yield* Effect.flip(s.retry("charge"))).toMatchObject({
        action: "retry",
        id: "charge",
        state: "done",
      })
    }),
  )
})
