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

  it.effect("a task with a generated id keeps its manual run marked in the ledger", () =>
    isolated(
      Effect.gen(function* () {
        const s = yield* Scheduler.make()
        const id = yield* s.schedule({
          schedule: Schedule.fixedRate(1_000, { delay: 1_000 }),
          job: Effect.void,
        })
        yield* s.trigger(id)
        yield* TestClock.adjust(1_000)
        expect(runs(yield* s.ledger(id)).map(([slot, , , manual]) => [slot, manual])).toEqual([
          [0, true],
          [1_000, false],
        ])
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

describe("retry of one slot (SPEC §19.7)", () => {
  it.effect("runs a recurring task's failed slot again now, attempt + 1, the grid untouched", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const failAt = new Set([1_000])
      const seen: Array<[number, number, boolean | undefined]> = []
      yield* s.schedule({
        id: "sync",
        schedule: Schedule.fixedRate(1_000, { delay: 1_000 }),
        job: Effect.gen(function* () {
          const run = yield* Run.CurrentRun
          seen.push([run.slot, run.attempt, run.manual])
          if (failAt.has(run.slot) && run.attempt === 1) return yield* Effect.fail("down")
        }),
      })
      yield* TestClock.adjust(2_500)
      // A Date names the slot as well as its epoch ms.
      yield* s.retry("sync", { slot: new Date(1_000) })
      yield* TestClock.adjust(0)
      expect(runs(yield* s.ledger("sync"))).toEqual([
        [1_000, 1_000, 1, false, "failed"],
        [2_000, 2_000, 1, false, "succeeded"],
        [1_000, 2_500, 2, true, "succeeded"],
      ])
      expect(seen.at(-1)).toEqual([1_000, 2, true])
      expect(Option.getOrThrow(yield* s.info("sync"))).toMatchObject({
        state: "scheduled",
        scheduledFor: 3_000,
        attempt: 1,
      })
      // Retried to success: a second retry of it is refused, with the slot.
      const again = yield* Effect.flip(s.retry("sync", { slot: 1_000 }))
      expect(again).toMatchObject({ _tag: "ManualRunRefused", state: "scheduled", slot: 1_000 })
      expect(again.message).toContain("(attempt 2) succeeded")
      yield* TestClock.adjust(500)
      expect(runs(yield* s.ledger("sync")).map(([slot]) => slot)).toEqual([
        1_000, 2_000, 1_000, 3_000,
      ])
    }),
  )

  it.effect("refusals are typed and change nothing; a bad slot is InvalidTime", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ id: "tick", schedule: Schedule.fixedRate(100), job: Effect.void })
      yield* TestClock.adjust(150)
      const before = Option.getOrThrow(yield* s.info("tick"))
      const never = yield* Effect.flip(s.retry("tick", { slot: 50 }))
      expect(never).toMatchObject({ _tag: "ManualRunRefused", slot: 50 })
      expect(never.message).toContain("its ledger has no run of slot 50")
      const ok = yield* Effect.flip(s.retry("tick", { slot: 100 }))
      expect(ok.message).toContain("succeeded")
      const bad = yield* Effect.flip(s.retry("tick", { slot: Number.NaN }))
      expect(bad).toMatchObject({ _tag: "InvalidTime", field: "slot" })
      expect(yield* Effect.flip(s.retry("ghost", { slot: 100 }))).toMatchObject({
        state: "unknown",
      })
      yield* s.pause("tick")
      expect(yield* Effect.flip(s.retry("tick", { slot: 100 }))).toMatchObject({
        state: "paused",
      })
      yield* s.resume("tick")
      expect(Option.getOrThrow(yield* s.info("tick")).runNumber).toBe(before.runNumber)
    }),
  )
})

describe("a breaker's hold and a waiting manual run (SPEC §19.1)", () => {
  it.effect(
    "the hold keeps it; it runs when the breaker lets the task go, the kept run resumes on its grid",
    () =>
      Effect.gen(function* () {
        const s = yield* Scheduler.make({
          workers: 1,
          breakers: { db: { failures: 1, coolDown: 1_000 } },
        })
        yield* s.schedule({
          id: "b",
          schedule: Schedule.fixedRate(100),
          job: Effect.void,
          breaker: "db",
        })
        // busy holds the only worker from 40 to 60, so a (due 42) and b's manual run (45) wait.
        yield* s.schedule({ id: "busy", schedule: Schedule.once(40), job: Effect.sleep(20) })
        yield* s.schedule({
          id: "a",
          schedule: Schedule.once(42),
          job: Effect.fail("down"),
          breaker: "db",
        })
        yield* TestClock.adjust(45)
        yield* s.trigger("b")
        // At 60 a runs first (due earlier), fails and opens db, which holds b: its manual run waits.
        yield* TestClock.adjust(15)
        expect(Option.getOrThrow(yield* s.info("b"))).toMatchObject({
          state: "paused",
          pausedReason: "breaker",
        })
        // Half-open at 1060: b is the probe; its manual run goes first, as it was, then slot 1100.
        yield* TestClock.adjust(1_040)
        const ledger = yield* s.ledger("b")
        expect(runs(ledger)).toEqual([
          [0, 0, 1, false, "succeeded"],
          [45, 1_060, 1, true, "succeeded"],
          [1_100, 1_100, 1, false, "succeeded"],
        ])
        expect(ledger.filter((o) => o.kind === "skipped")).toEqual([
          expect.objectContaining({ cause: "breaker", first: 100, last: 1_000, count: 10 }),
        ])
      }),
  )
})
