import { describe, expect, it } from "@effect/vitest"
import { Cause, Data, Effect, Fiber, Option, Stream } from "effect"
import { TestClock } from "effect/testing"
import { type Ledger, Schedule, Scheduler } from "../src/index.ts"

class Boom extends Data.TaggedError("Boom")<{ readonly n: number }> {}

const summary = (o: Ledger.Occurrence): string => {
  switch (o.kind) {
    case "ran":
    case "retried":
      return `${o.kind}:${(o as Ledger.Ran).outcome.kind}@${(o as Ledger.Ran).startedAt}`
    case "cancelled":
      return `cancelled(${o.from}${o.interrupted ? ",interrupted" : ""})`
    default: {
      const m = o as Ledger.Missed
      return `${m.kind}:${m.count}[${m.first}..${m.last}](${m.cause})`
    }
  }
}

describe("outcomes (SPEC §6)", () => {
  it.effect("each kind is recorded and leaves its task accounted for", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 8 })
      yield* s.schedule({
        id: "ok",
        schedule: Schedule.once(1),
        job: Effect.succeed(42),
        keepResult: true,
      })
      yield* s.schedule({
        id: "typed",
        schedule: Schedule.once(1),
        job: Effect.fail(new Boom({ n: 1 })),
      })
      yield* s.schedule({
        id: "defect",
        schedule: Schedule.once(1),
        job: Effect.die(new Error("bug")),
      })
      yield* s.schedule({
        id: "throws",
        schedule: Schedule.once(1),
        job: (): Effect.Effect<void> => {
          throw new Error("thrown while building the job")
        },
      })
      yield* s.schedule({
        id: "hang",
        schedule: Schedule.once(1),
        timeout: "5 seconds",
        job: Effect.never,
      })
      yield* s.schedule({
        id: "sync-throw",
        schedule: Schedule.once(1),
        job: Effect.sync(() => JSON.parse("{")),
      })
      yield* TestClock.adjust(10_000)
      const outcome = function* (id: string) {
        const [o] = yield* s.ledger(id)
        return o?.kind === "ran" ? o.outcome : undefined
      }
      expect(yield* outcome("ok")).toEqual({ kind: "succeeded", value: 42 })
      expect(yield* outcome("typed")).toMatchObject({ kind: "failed", error: new Boom({ n: 1 }) })
      // The Cause is kept with the outcome (SPEC §16).
      const typed = yield* outcome("typed")
      expect(typed?.kind === "failed" && Cause.hasFails(typed.cause as Cause.Cause<unknown>)).toBe(
        true,
      )
      expect((yield* outcome("defect"))?.kind).toBe("defect")
      expect((yield* outcome("throws"))?.kind).toBe("defect")
      expect(yield* outcome("hang")).toMatchObject({ kind: "timed-out", afterMs: 5_000 })
      expect((yield* outcome("sync-throw"))?.kind).toBe("defect")
      const stats = yield* s.stats
      expect({
        done: stats.done,
        failed: stats.failed,
        running: stats.running,
        inFlight: stats.inFlight,
      }).toEqual({
        done: 1,
        failed: 5,
        running: 0,
        inFlight: 0,
      })
      expect(stats.scheduled + stats.running + stats.done + stats.failed + stats.cancelled).toBe(
        stats.accepted,
      )
    }),
  )

  it.effect("a failure never stops other tasks or the scheduler", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 1 })
      let beats = 0
      yield* s.schedule({ schedule: Schedule.fixedRate(10), job: Effect.die("always broken") })
      yield* s.schedule({ schedule: Schedule.fixedRate(10), job: Effect.sync(() => beats++) })
      yield* TestClock.adjust(95)
      expect(beats).toBe(10)
    }),
  )
})

describe("retry and failure policy (SPEC §7)", () => {
  it.effect("SPEC's example: one-off A retries once, fixed-rate R keeps its grid", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 1 })
      const trace: Array<string> = []
      let aCalls = 0
      yield* s.schedule({
        id: "A",
        schedule: Schedule.once(0),
        retry: { maxRetries: 1, base: 1 },
        job: Effect.suspend(() => (++aCalls === 1 ? Effect.fail("a") : Effect.void)),
      })
      yield* s.schedule({ id: "R", schedule: Schedule.fixedRate(10), job: Effect.fail("r") })
      // Read the trace from the published stream, as a subscriber would.
      const fiber = yield* Effect.forkChild(
        Stream.runForEach(s.occurrences, (o) =>
          Effect.sync(() => {
            if (o.kind !== "breaker") trace.push(`${o.id}:${summary(o)}`)
          }),
        ),
        { startImmediately: true },
      )
      yield* TestClock.adjust(10)
      expect(trace).toEqual([
        "A:retried:failed@0",
        "R:ran:failed@0",
        "A:ran:succeeded@1",
        "R:ran:failed@10",
      ])
      expect(yield* s.status("A")).toBe("done")
      expect(yield* s.status("R")).toBe("scheduled")
      expect((yield* s.nextSlot)._tag).toBe("Some")
      yield* Fiber.interrupt(fiber)
    }),
  )

  it.effect("backoff grows by factor and is capped by maxDelay", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const starts: Array<number> = []
      yield* s.schedule({
        schedule: Schedule.once(0),
        retry: { maxRetries: 5, base: "100 millis", factor: 3, maxDelay: "1 second" },
        job: (run) =>
          Effect.andThen(
            Effect.sync(() => starts.push(run.startedAt)),
            Effect.fail("no"),
          ),
      })
      yield* TestClock.adjust(10_000)
      // 100, 300, 900, 1000 (capped), 1000
      expect(starts).toEqual([0, 100, 400, 1300, 2300, 3300])
    }),
  )

  it.effect("jitter is drawn from the seeded source: same seed, same delays", () =>
    Effect.gen(function* () {
      const run = (seed: number) =>
        Effect.scoped(
          Effect.gen(function* () {
            const s = yield* Scheduler.make({ seed })
            const starts: Array<number> = []
            yield* s.schedule({
              schedule: Schedule.once(0),
              retry: { maxRetries: 4, base: 1_000, jitter: "full" },
              job: (r) =>
                Effect.andThen(
                  Effect.sync(() => starts.push(r.startedAt)),
                  Effect.fail("no"),
                ),
            })
            yield* TestClock.adjust(100_000)
            return starts.map((t) => t - (starts[0] as number))
          }),
        )
      const a = yield* run(7)
      const b = yield* run(7)
      expect(a).toEqual(b)
      expect(a).toHaveLength(5)
      const gaps = a.slice(1).map((t, k) => t - (a[k] as number))
      gaps.forEach((gap, k) => {
        expect(gap).toBeGreaterThanOrEqual(0)
        expect(gap).toBeLessThanOrEqual(1_000 * 2 ** k)
      })
    }),
  )

  it.effect(
    "a recurring task pauses (reason failures) after pauseAfterConsecutiveFailures, and resumes",
    () =>
      Effect.gen(function* () {
        const s = yield* Scheduler.make()
        let runs = 0
        yield* s.schedule({
          id: "flaky",
          schedule: Schedule.fixedRate(10),
          retry: { maxRetries: 1, base: 1 },
          pauseAfterConsecutiveFailures: 2,
          job: Effect.suspend(() => {
            runs++
            return Effect.fail("down")
          }),
        })
        yield* TestClock.adjust(100)
        expect(runs).toBe(4) // two slots, each with one retry
        // Paused, never final (SPEC §7): slots that pass are skipped, not run.
        expect(yield* s.status("flaky")).toBe("paused")
        const info = Option.getOrThrow(yield* s.info("flaky"))
        expect(info.pausedReason).toBe("failures")
        const ledger = yield* s.ledger("flaky")
        expect(ledger.at(-1)).toMatchObject({ kind: "paused", reason: "failures" })
        expect(yield* s.resume("flaky")).toBe(true)
        expect(yield* s.status("flaky")).toBe("scheduled")
        yield* TestClock.adjust(5)
        expect(runs).toBe(6) // it runs again from slot 100 (>= now): a run and its retry
      }),
  )
})

describe("cancellation (SPEC §8)", () => {
  it.effect(
    "cancelling a running task is cooperative: the run ends and reports, nothing more",
    () =>
      Effect.gen(function* () {
        const s = yield* Scheduler.make()
        let ended = false
        yield* s.schedule({
          id: "long",
          schedule: Schedule.fixedRate(100),
          job: Effect.andThen(
            Effect.sleep(50),
            Effect.sync(() => (ended = true)),
          ),
        })
        yield* TestClock.adjust(10)
        expect(yield* s.cancel("long")).toBe(true)
        expect(yield* s.status("long")).toBe("cancelled")
        yield* TestClock.adjust(1_000)
        expect(ended).toBe(true)
        expect((yield* s.ledger("long")).map(summary)).toEqual([
          "cancelled(running)",
          "ran:succeeded@0",
        ])
        expect(yield* s.cancel("long")).toBe(false)
        expect(yield* s.cancel("nobody")).toBe(false)
      }),
  )

  it.effect("cancel with interrupt stops the running fiber; its outcome is interrupted", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      let finalized = false
      yield* s.schedule({
        id: "stuck",
        schedule: Schedule.once(0),
        job: Effect.never.pipe(Effect.ensuring(Effect.sync(() => (finalized = true)))),
      })
      yield* TestClock.adjust(1)
      expect(yield* s.cancel("stuck", { interrupt: true })).toBe(true)
      expect(finalized).toBe(true)
      yield* TestClock.adjust(1)
      expect((yield* s.ledger("stuck")).map(summary)).toEqual([
        "cancelled(running,interrupted)",
        "ran:interrupted@0",
      ])
      expect((yield* s.stats).inFlight).toBe(0)
    }),
  )

  it.effect("a cancelled scheduled task never runs", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      let ran = false
      yield* s.schedule({
        id: "x",
        schedule: Schedule.once(10),
        job: Effect.sync(() => (ran = true)),
      })
      expect(yield* s.cancel("x")).toBe(true)
      yield* TestClock.adjust(100)
      expect(ran).toBe(false)
      expect((yield* s.ledger("x")).map(summary)).toEqual(["cancelled(scheduled)"])
    }),
  )
})

describe("missed runs and overlap (SPEC §3, §6)", () => {
  const slowRecurring = (missedRuns: "catch-up" | "coalesce" | "skip") =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 4 })
      const starts: Array<string> = []
      let first = true
      yield* s.schedule({
        id: "slow",
        schedule: Schedule.fixedRate(10),
        missedRuns,
        job: (run) =>
          Effect.suspend(() => {
            starts.push(`${run.scheduledFor}@${run.startedAt}`)
            if (!first) return Effect.void
            first = false
            return Effect.sleep(35) // the first run overlaps slots 10, 20 and 30
          }),
      })
      yield* TestClock.adjust(45)
      return { starts, ledger: (yield* s.ledger("slow")).map(summary) }
    })

  it.effect("catch-up runs every missed slot back to back, never two at once", () =>
    Effect.gen(function* () {
      const { starts, ledger } = yield* slowRecurring("catch-up")
      expect(starts).toEqual(["0@0", "10@35", "20@35", "30@35", "40@40"])
      expect(ledger).toEqual([
        "ran:succeeded@0",
        "ran:succeeded@35",
        "ran:succeeded@35",
        "ran:succeeded@35",
        "ran:succeeded@40",
      ])
    }),
  )

  it.effect("coalesce runs once for the missed slots and records the merged ones", () =>
    Effect.gen(function* () {
      const { starts, ledger } = yield* slowRecurring("coalesce")
      expect(starts).toEqual(["0@0", "30@35", "40@40"])
      expect(ledger).toEqual([
        "ran:succeeded@0",
        "coalesced:2[10..20](overlap)",
        "ran:succeeded@35",
        "ran:succeeded@40",
      ])
    }),
  )

  it.effect("skip drops the missed slots and records them", () =>
    Effect.gen(function* () {
      const { starts, ledger } = yield* slowRecurring("skip")
      expect(starts).toEqual(["0@0", "40@40"])
      expect(ledger).toEqual(["ran:succeeded@0", "skipped:3[10..30](overlap)", "ran:succeeded@40"])
    }),
  )

  it.effect("coalesce: slots that passed while every worker was busy are merged and recorded", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 1 })
      yield* s.schedule({ schedule: Schedule.once(0), job: Effect.sleep(25) })
      const starts: Array<string> = []
      yield* s.schedule({
        id: "tick",
        schedule: Schedule.fixedRate(10),
        missedRuns: "coalesce",
        job: (run) => Effect.sync(() => starts.push(`${run.scheduledFor}@${run.startedAt}`)),
      })
      yield* TestClock.adjust(35)
      // Slots 0 and 10 waited for the only worker until 25: one run stands for them, as 20.
      expect(starts).toEqual(["20@25", "30@30"])
      expect((yield* s.ledger("tick")).map(summary)).toEqual([
        "coalesced:2[0..10](late)",
        "ran:succeeded@25",
        "ran:succeeded@30",
      ])
    }),
  )

  it.effect("slots missed while every worker was busy are recorded as late", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 1 })
      yield* s.schedule({ schedule: Schedule.once(0), job: Effect.sleep(25) })
      yield* s.schedule({
        id: "tick",
        schedule: Schedule.fixedRate(10),
        missedRuns: "skip",
        job: Effect.void,
      })
      yield* TestClock.adjust(35)
      // "tick" could not start its slot 0 until 25; slots 10 and 20 had passed by then.
      expect((yield* s.ledger("tick")).map(summary)).toEqual([
        "ran:succeeded@25",
        "skipped:2[10..20](late)",
        "ran:succeeded@30",
      ])
    }),
  )
})
