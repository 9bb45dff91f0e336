/**
 * SPEC §5, §7, §15 through the runtime Scheduler on TestClock: pause and resume, update in
 * place, tags and bulk controls, a catch-up window, a shared circuit breaker, explain — each
 * decided by the kernel, recorded in the ledger and the occurrence stream.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, Stream } from "effect"
import { TestClock } from "effect/testing"
import { type Ledger, Schedule, Scheduler } from "../src/index.ts"

const kinds = (ledger: ReadonlyArray<Ledger.Occurrence>) =>
  ledger.map((o) => (o.kind === "skipped" ? `skipped(${o.cause}:${o.count})` : o.kind))

const starts = (ledger: ReadonlyArray<Ledger.Occurrence>) =>
  ledger.flatMap((o) => (o.kind === "ran" || o.kind === "retried" ? [o.startedAt] : []))

describe("pause and resume (SPEC §5, §15)", () => {
  it.effect(
    "a paused task starts no run; resume skips the passed slots once and rejoins the grid",
    () =>
      Effect.gen(function* () {
        const s = yield* Scheduler.make()
        yield* s.schedule({ id: "tick", schedule: Schedule.fixedRate(10), job: Effect.void })
        yield* TestClock.adjust(5) // ran at 0
        expect(yield* s.pause("tick")).toBe(true)
        expect(yield* s.pause("tick")).toBe(false) // already paused
        expect(yield* s.status("tick")).toBe("paused")
        yield* TestClock.adjust(40) // 10, 20, 30, 40 pass while paused
        expect(starts(yield* s.ledger("tick"))).toEqual([0])
        expect(yield* s.resume("tick")).toBe(true)
        expect(Option.getOrThrow(yield* s.info("tick")).scheduledFor).toBe(50)
        yield* TestClock.adjust(10)
        const ledger = yield* s.ledger("tick")
        expect(starts(ledger)).toEqual([0, 50])
        expect(kinds(ledger)).toEqual(["ran", "paused", "skipped(paused:4)", "resumed", "ran"])
      }),
  )

  it.effect("pausing a running task lets the run finish and report, then holds the task", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ id: "long", schedule: Schedule.fixedRate(100), job: Effect.sleep(30) })
      yield* TestClock.adjust(10)
      expect(yield* s.pause("long")).toBe(true)
      expect(yield* s.status("long")).toBe("running")
      yield* TestClock.adjust(30)
      expect(yield* s.status("long")).toBe("paused")
      const ran = (yield* s.ledger("long")).find((o) => o.kind === "ran")
      expect(ran?.kind === "ran" && ran.outcome.kind).toBe("succeeded")
      expect(yield* s.cancel("long")).toBe(true) // paused → cancelled
      expect(yield* s.status("long")).toBe("cancelled")
    }),
  )
})

describe("update in place (SPEC §15)", () => {
  it.effect("a new schedule, priority and job keep the id, generation, run count and ledger", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const seen: Array<string> = []
      yield* s.schedule({
        id: "u",
        schedule: Schedule.fixedRate(10),
        job: Effect.sync(() => seen.push("old")),
      })
      yield* TestClock.adjust(15) // ran at 0 and 10
      const before = Option.getOrThrow(yield* s.info("u"))
      expect(
        yield* s.update("u", {
          schedule: Schedule.fixedRate(100, { delay: 100 }),
          priority: "high",
          job: Effect.sync(() => seen.push("new")),
        }),
      ).toBe(true)
      const after = Option.getOrThrow(yield* s.info("u"))
      expect([after.generation, after.runNumber, after.priority]).toEqual([
        before.generation,
        2,
        "high",
      ])
      expect(after.scheduledFor).toBe(115) // the new schedule's first slot, as if scheduled now
      yield* TestClock.adjust(100)
      expect(seen).toEqual(["old", "old", "new"])
      expect((yield* s.ledger("u")).filter((o) => o.kind === "ran")).toHaveLength(3)
    }),
  )

  it.effect("a bad change is a typed error and changes nothing; an unknown id is false", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ id: "u", schedule: Schedule.fixedRate(10), job: Effect.void })
      const error = yield* Effect.flip(s.update("u", { schedule: Schedule.fixedRate(0) }))
      expect(error._tag).toBe("InvalidPeriod")
      const typo = yield* Effect.flip(
        s.update("u", { priorty: "high" } as Scheduler.UpdateChanges<void, never, never>),
      )
      expect(typo).toMatchObject({ _tag: "InvalidOption", field: "priorty" })
      expect(Option.getOrThrow(yield* s.info("u")).kind).toBe("fixed-rate")
      expect(yield* s.update("nobody", { priority: "low" })).toBe(false)
    }),
  )
})

describe("tags and bulk controls (SPEC §15)", () => {
  it.effect(
    "tasks filters by state, tag and kind; pauseAll, resumeAll and cancelAll return what they changed",
    () =>
      Effect.gen(function* () {
        const s = yield* Scheduler.make()
        yield* s.schedule({
          id: "a",
          tags: ["mail"],
          schedule: Schedule.fixedRate(10),
          job: Effect.void,
        })
        yield* s.schedule({
          id: "b",
          tags: ["mail"],
          schedule: Schedule.once(100),
          job: Effect.void,
        })
        yield* s.schedule({
          id: "c",
          tags: ["billing"],
          schedule: Schedule.fixedRate(10),
          job: Effect.void,
        })
        const ids = (infos: ReadonlyArray<{ readonly id: string }>) => infos.map((i) => i.id).sort()
        expect(ids(yield* s.tasks({ tag: "mail" }))).toEqual(["a", "b"])
        expect(ids(yield* s.tasks({ kind: "fixed-rate" }))).toEqual(["a", "c"])
        expect([...(yield* s.pauseAll({ tag: "mail" }))].sort()).toEqual(["a", "b"])
        expect(ids(yield* s.tasks({ state: "paused" }))).toEqual(["a", "b"])
        expect([...(yield* s.resumeAll({ tag: "mail", kind: "once" }))]).toEqual(["b"])
        expect([...(yield* s.cancelAll({ tag: "mail" }))].sort()).toEqual(["a", "b"])
        expect(ids(yield* s.tasks({ state: "cancelled" }))).toEqual(["a", "b"])
        expect(yield* s.status("c")).toBe("scheduled")
        const badTag = yield* Effect.flip(
          s.schedule({ tags: [""], schedule: Schedule.once(0), job: Effect.void }),
        )
        expect(badTag._tag).toBe("InvalidOption")
      }),
  )
})

describe("catch-up window (SPEC §3)", () => {
  it.effect("a run that would start more than the window late is skipped (cause window)", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 1 })
      yield* s.schedule({ id: "hog", schedule: Schedule.once(0), job: Effect.sleep(50) })
      yield* s.schedule({
        id: "tick",
        schedule: Schedule.fixedRate(20),
        window: 5,
        job: Effect.void,
      })
      yield* TestClock.adjust(70)
      const ledger = yield* s.ledger("tick")
      // Slots 0, 20 and 40 waited behind the hog past their window; 60 ran on time.
      expect(starts(ledger)).toEqual([60])
      expect(ledger.some((o) => o.kind === "skipped" && o.cause === "window")).toBe(true)
    }),
  )

  it.effect("a one-shot past its deadline expires and ends failed", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 1 })
      yield* s.schedule({ id: "hog", schedule: Schedule.once(0), job: Effect.sleep(50) })
      yield* s.schedule({ id: "late", schedule: Schedule.once(10), window: 20, job: Effect.void })
      yield* TestClock.adjust(60)
      expect(yield* s.status("late")).toBe("failed")
      expect(kinds(yield* s.ledger("late"))).toEqual(["expired"])
    }),
  )
})

describe("a shared circuit breaker (SPEC §7)", () => {
  it.effect(
    "opens after n failed slots of its tasks, holds them all, probes after the cool-down, closes on success",
    () =>
      Effect.gen(function* () {
        let up = false
        const s = yield* Scheduler.make({
          breakers: { smtp: { failures: 2, coolDown: "1 minute" } },
          logFailures: false,
        })
        const transitions = yield* Effect.forkChild(
          Stream.runCollect(
            Stream.take(
              Stream.filter(s.occurrences, (o) => o.kind === "breaker"),
              3,
            ),
          ),
          { startImmediately: true },
        )
        const send = Effect.suspend(() => (up ? Effect.void : Effect.fail("smtp down")))
        yield* s.schedule({
          id: "digest",
          breaker: "smtp",
          schedule: Schedule.fixedRate(10_000),
          job: send,
        })
        yield* s.schedule({
          id: "receipt",
          breaker: "smtp",
          schedule: Schedule.once(15_000),
          job: send,
        })
        yield* TestClock.adjust(10_000) // digest fails at 0 and 10 s: open
        const open = Option.getOrThrow(yield* s.breaker("smtp"))
        expect(open.state).toBe("open")
        expect([...open.held].sort()).toEqual(["digest", "receipt"])
        expect(yield* s.status("receipt")).toBe("paused")
        up = true
        yield* TestClock.adjust(60_000) // half-open at 70 s: one probe, it succeeds: closed
        expect(Option.getOrThrow(yield* s.breaker("smtp")).state).toBe("closed")
        // The held one-shot was not lost: it ran after the breaker closed.
        yield* TestClock.adjust(10_000)
        expect(yield* s.status("receipt")).toBe("done")
        const changes = yield* Fiber.join(transitions)
        expect(
          [...changes].map((o) => (o.kind === "breaker" ? `${o.from}→${o.to}` : o.kind)),
        ).toEqual(["closed→open", "open→half-open", "half-open→closed"])
        expect((yield* s.breakers).map((b) => b.name)).toContain("smtp")
      }),
  )
  for (const control of ["cancel", "pause"] as const)
    it.effect(
      `${control === "cancel" ? "cancelling" : "pausing"} the half-open breaker's probe lets the next held task through at once`,
      () =>
        Effect.gen(function* () {
          const s = yield* Scheduler.make({
            breakers: { smtp: { failures: 1, coolDown: "1 minute" } },
            logFailures: false,
          })
          yield* s.schedule({
            id: "digest",
            breaker: "smtp",
            priority: "high",
            schedule: Schedule.fixedRate(10_000),
            retry: { maxRetries: 1, base: "30 seconds" },
            job: Effect.fail("smtp down"),
          })
          yield* s.schedule({
            id: "receipt",
            breaker: "smtp",
            priority: "low",
            schedule: Schedule.fixedRate(10_000),
            job: Effect.void,
          })
          // digest fails at 0 and its retry at 30 s (before receipt's slot 30 s, by priority):
          // open until 90 s, both held.
          yield* TestClock.adjust(30_000)
          expect(Option.getOrThrow(yield* s.breaker("smtp")).state).toBe("open")
          // At 90 s (both resume on their grid, digest first by priority) digest probes, fails
          // and waits for its retry at 120 s: still the probe.
          yield* TestClock.adjust(70_000)
          const half = Option.getOrThrow(yield* s.breaker("smtp"))
          expect(half.state).toBe("half-open")
          expect(half.probe).toBe("digest")
          expect(yield* s.status("receipt")).toBe("paused")
          expect(yield* control === "cancel" ? s.cancel("digest") : s.pause("digest")).toBe(true)
          // receipt is the probe now and due at once: it must not wait for digest's old wake-up.
          yield* TestClock.adjust(1)
          expect(starts(yield* s.ledger("receipt"))).toEqual([0, 10_000, 20_000, 100_000])
          expect(Option.getOrThrow(yield* s.breaker("smtp")).state).toBe("closed")
        }),
    )
})

describe("explain (SPEC §15)", () => {
  it.effect("a paused task's next slots as if resumed now, with a note", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ id: "x", schedule: Schedule.fixedRate(10), job: Effect.void })
      yield* TestClock.adjust(25)
      yield* s.pause("x")
      const e = Option.getOrThrow(yield* s.explain("x", 3))
      expect(e.state).toBe("paused")
      expect(e.slots.map((p) => p.slot)).toEqual([30, 40, 50])
      expect(e.notes.length).toBeGreaterThan(0)
      expect(Option.isNone(yield* s.explain("nobody"))).toBe(true)
    }),
  )
})
