/**
 * The timing actor's command turns, through the public Scheduler on TestClock: which run a
 * cancel interrupts, what `cancelAll` and `update` record, which slot's runs a retry reads, the
 * gauges a burst of schedule calls leaves, and the precise clock's anchor bound.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Exit, Fiber, Logger, Metric, Scope } from "effect"
import { TestClock } from "effect/testing"
import { type Ledger, Metrics, Run, Schedule, Scheduler } from "../src/index.ts"
import { anchorOffset } from "../src/internal/actor.ts"

const isolated = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.provideService(body, Metric.MetricRegistry, new Map())

const cancels = (ledger: ReadonlyArray<Ledger.Occurrence>) =>
  ledger.flatMap((o) => (o.kind === "cancelled" ? [[o.from, o.interrupted] as const] : []))

describe("cancel with interrupt (SPEC §8)", () => {
  it.effect("interrupts only the cancelled task's run; an unknown id is not cancelled", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 2 })
      const finished: Array<string> = []
      for (const id of ["a", "b"]) {
        yield* s.schedule({
          id,
          schedule: Schedule.once(0),
          job: Effect.andThen(
            Effect.sleep(100),
            Effect.sync(() => finished.push(id)),
          ),
        })
      }
      yield* TestClock.adjust(0)
      expect(yield* s.status("a")).toBe("running")
      expect(yield* s.status("b")).toBe("running")
      expect(yield* s.cancel("a", { interrupt: true })).toBe(true)
      expect(yield* s.cancel("ghost", { interrupt: true })).toBe(false)
      yield* TestClock.adjust(200)
      // Both runs are generation 1 of their task: the row tells them apart.
      expect(finished).toEqual(["b"])
      expect(cancels(yield* s.ledger("a"))).toEqual([["running", true]])
    }),
  )

  it.effect("interrupts the current generation's run, not an earlier one still going", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 2 })
      const finished: Array<string> = []
      const job = (name: string) =>
        Effect.andThen(
          Effect.sleep(100),
          Effect.sync(() => finished.push(name)),
        )
      yield* s.schedule({ id: "a", schedule: Schedule.once(0), job: job("first") })
      yield* TestClock.adjust(0)
      // Cancelled without interrupt: its run goes on while the id is scheduled anew.
      expect(yield* s.cancel("a")).toBe(true)
      yield* s.schedule({ id: "a", schedule: Schedule.once(0), job: job("second") })
      yield* TestClock.adjust(0)
      expect(yield* s.status("a")).toBe("running")
      expect(yield* s.cancel("a", { interrupt: true })).toBe(true)
      yield* TestClock.adjust(200)
      expect(finished).toEqual(["first"])
    }),
  )
})

describe("cancelAll (SPEC §8)", () => {
  it.effect("reports the ids it cancelled and lets their running runs finish", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 1 })
      const finished: Array<string> = []
      yield* s.schedule({
        id: "busy",
        tags: ["batch"],
        schedule: Schedule.once(0),
        job: Effect.andThen(
          Effect.sleep(100),
          Effect.sync(() => finished.push("busy")),
        ),
      })
      yield* s.schedule({
        id: "later",
        tags: ["batch"],
        schedule: Schedule.once(5_000),
        job: Effect.void,
      })
      yield* TestClock.adjust(0)
      expect([...(yield* s.cancelAll({ tag: "batch" }))].sort()).toEqual(["busy", "later"])
      yield* TestClock.adjust(200)
      // A bulk cancel never interrupts: the run that was going finishes.
      expect(finished).toEqual(["busy"])
      expect(cancels(yield* s.ledger("busy"))).toEqual([["running", false]])
      expect(cancels(yield* s.ledger("later"))).toEqual([["scheduled", false]])
    }),
  )
})

describe("update is recorded (SPEC §15)", () => {
  it.effect("a change made is an `updated` occurrence; a refused change records nothing", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ id: "u", schedule: Schedule.fixedRate(1_000), job: Effect.void })
      const refused = yield* Effect.flip(s.update("u", { schedule: Schedule.fixedRate(0) }))
      expect(refused._tag).toBe("InvalidPeriod")
      expect((yield* s.ledger("u")).filter((o) => o.kind === "updated")).toEqual([])
      expect(yield* s.update("u", { priority: "low" })).toBe(true)
      const updated = (yield* s.ledger("u")).filter((o) => o.kind === "updated")
      expect(updated).toHaveLength(1)
      expect(updated[0]).toMatchObject({ kind: "updated", id: "u", generation: 1, at: 0 })
    }),
  )
})

describe("ledger by generation (SPEC §27.4)", () => {
  it.effect("the current generation's occurrences are read; a later one has none", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ id: "g", schedule: Schedule.fixedRate(100), job: Effect.void })
      yield* TestClock.adjust(250)
      const current = yield* s.ledger("g")
      expect(current.length).toBeGreaterThan(0)
      expect(yield* s.ledger("g", { generation: 1 })).toEqual(current)
      expect(yield* s.ledger("g", { generation: 2 })).toEqual([])
    }),
  )
})

describe("retry of one slot reads that slot's runs only (SPEC §19.7)", () => {
  it.effect("a later slot's success does not stand for the failed one", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const seen: Array<[number, number]> = []
      yield* s.schedule({
        id: "sync",
        schedule: Schedule.fixedRate(1_000, { delay: 1_000 }),
        job: Effect.gen(function* () {
          const run = yield* Run.CurrentRun
          seen.push([run.slot, run.attempt])
          if (run.slot === 1_000 && run.attempt < 3) return yield* Effect.fail("down")
        }),
      })
      yield* TestClock.adjust(2_500)
      yield* s.retry("sync", { slot: 1_000 })
      yield* TestClock.adjust(0)
      // Its second attempt failed too: the next retry is its third.
      yield* s.retry("sync", { slot: 1_000 })
      yield* TestClock.adjust(0)
      expect(seen).toEqual([
        [1_000, 1],
        [2_000, 1],
        [1_000, 2],
        [1_000, 3],
      ])
    }),
  )
})

describe("retry of an expired slot (SPEC §19.7)", () => {
  it.effect("an expiry is not a run of its slot: a failed one-shot's slot retry is refused", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 1 })
      yield* s.schedule({ id: "hog", schedule: Schedule.once(0), job: Effect.sleep(50) })
      yield* s.schedule({ id: "late", schedule: Schedule.once(10), window: 20, job: Effect.void })
      yield* TestClock.adjust(60)
      expect(yield* s.status("late")).toBe("failed")
      const refused = yield* Effect.flip(s.retry("late", { slot: 10 }))
      expect(refused).toMatchObject({ _tag: "ManualRunRefused", slot: 10 })
      // Refused as failed (retry it without a slot), the expiry's record read as no run.
      expect(refused.message).toContain("it is failed; retry it without a slot")
      expect(yield* s.status("late")).toBe("failed")
    }),
  )
})

describe("gauges after a burst of schedule calls", () => {
  it.effect("pending is current once the burst's microtask ran, burst after burst", () =>
    isolated(
      Effect.gen(function* () {
        const s = yield* Scheduler.make()
        const m = Metrics.forScheduler("default")
        // Each task is due after the first, so no call wakes the actor to refresh them.
        yield* s.schedule({ id: "t0", schedule: Schedule.once(10_000), job: Effect.void })
        yield* TestClock.adjust(0)
        for (let i = 1; i <= 3; i++) {
          yield* s.schedule({ id: `t${i}`, schedule: Schedule.once(20_000), job: Effect.void })
        }
        yield* Effect.promise(() => Promise.resolve())
        expect((yield* Metric.value(m.pending)).value).toBe(4)
        for (let i = 4; i <= 5; i++) {
          yield* s.schedule({ id: `t${i}`, schedule: Schedule.once(20_000), job: Effect.void })
        }
        yield* Effect.promise(() => Promise.resolve())
        expect((yield* Metric.value(m.pending)).value).toBe(6)
      }),
    ),
  )
})

describe("anchorOffset's precise bound", () => {
  it("takes the precise reading only inside the whole ms the wall clock read", () => {
    const at = (precise: number) =>
      anchorOffset({ mono: () => 250, wall: () => 10_000, preciseWall: () => precise })
    expect(at(10_000.999)).toBe(10_000.999 - 250)
    // One ms on is the next ms, not this one.
    expect(at(10_001)).toBe(10_000 - 250)
    expect(at(10_002.5)).toBe(10_000 - 250)
    expect(at(9_999.5)).toBe(10_000 - 250)
  })
})

describe("lateness of a task due before it was accepted (SPEC §6.8)", () => {
  it.effect("is measured from its acceptance, not from its past due time", () =>
    isolated(
      Effect.gen(function* () {
        const s = yield* Scheduler.make()
        const m = Metrics.forScheduler("default")
        yield* TestClock.adjust(1_000)
        yield* s.schedule({ id: "past", schedule: Schedule.at(0), job: Effect.void })
        yield* TestClock.adjust(0)
        expect((yield* s.ledger("past")).some((o) => o.kind === "ran")).toBe(true)
        expect((yield* Metric.value(m.lateness)).count).toBe(1)
        expect((yield* Metric.value(m.lateness)).sum).toBe(0)
      }),
    ),
  )
})

describe("pause and resume are in the ledger as soon as they return (SPEC §15)", () => {
  it.effect("each reads back at once, in order", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ id: "p", schedule: Schedule.fixedRate(1_000), job: Effect.void })
      const kinds = Effect.map(s.ledger("p"), (l) => l.map((o) => o.kind))
      expect(yield* s.pause("p")).toBe(true)
      expect(yield* kinds).toEqual(["paused"])
      expect(yield* s.resume("p")).toBe(true)
      expect(yield* kinds).toEqual(["paused", "resumed"])
    }),
  )
})

describe("pauseAll and resumeAll are in the ledger as soon as they return (SPEC §15)", () => {
  it.effect("each task's pause and resume reads back at once", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      for (const id of ["x", "y"]) {
        yield* s.schedule({
          id,
          tags: ["bulk"],
          schedule: Schedule.fixedRate(1_000),
          job: Effect.void,
        })
      }
      const kinds = (id: string) => Effect.map(s.ledger(id), (l) => l.map((o) => o.kind))
      expect([...(yield* s.pauseAll({ tag: "bulk" }))].sort()).toEqual(["x", "y"])
      expect(yield* kinds("x")).toEqual(["paused"])
      expect([...(yield* s.resumeAll({ tag: "bulk" }))].sort()).toEqual(["x", "y"])
      expect(yield* kinds("y")).toEqual(["paused", "resumed"])
    }),
  )
})

describe("a command that brings work forward wakes the actor (SPEC §15)", () => {
  it.effect("a resumed task runs on its grid while the actor slept toward a later one", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const ran: Array<number> = []
      yield* s.schedule({ id: "far", schedule: Schedule.once(60_000), job: Effect.void })
      yield* s.schedule({
        id: "soon",
        tags: ["soon"],
        schedule: Schedule.fixedRate(100, { delay: 100 }),
        job: Effect.andThen(Run.CurrentRun, (run) => Effect.sync(() => ran.push(run.slot))),
      })
      yield* s.pause("soon")
      yield* TestClock.adjust(450)
      expect(ran).toEqual([])
      expect([...(yield* s.resumeAll({ tag: "soon" }))]).toEqual(["soon"])
      yield* TestClock.adjust(200)
      expect(ran.length).toBeGreaterThan(0)
      expect(ran.every((slot) => slot >= 450)).toBe(true)
    }),
  )
})

describe("an update that brings a task's slot forward wakes the actor (SPEC §15)", () => {
  it.effect("the new schedule's first slot runs on time", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const ran: Array<number> = []
      yield* s.schedule({
        id: "u",
        schedule: Schedule.fixedRate(60_000, { delay: 60_000 }),
        job: Effect.andThen(Run.CurrentRun, (run) => Effect.sync(() => ran.push(run.slot))),
      })
      yield* TestClock.adjust(0)
      yield* s.update("u", { schedule: Schedule.fixedRate(100, { delay: 100 }) })
      yield* TestClock.adjust(100)
      expect(ran).toEqual([100])
    }),
  )
})

describe("a debounce that brings the pending run forward wakes the actor (SPEC §20.3)", () => {
  it.effect("the replaced holder runs at its new time", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const ran: Array<string> = []
      const dedup = { key: "k", mode: "debounce" } as const
      for (const [name, delay] of [
        ["slow", 60_000],
        ["quick", 100],
      ] as const) {
        yield* s.scheduleDeduplicated({
          id: "d",
          schedule: Schedule.once(delay),
          job: Effect.sync(() => ran.push(name)),
          dedup,
        })
        // The replacement is on the holder's ledger as soon as the call returned.
        if (name === "quick") {
          expect((yield* s.ledger("d")).map((o) => o.kind)).toContain("deduplicated")
        }
        yield* TestClock.adjust(0)
      }
      yield* TestClock.adjust(100)
      expect(ran).toEqual(["quick"])
    }),
  )
})

describe("retry of a slot that ran twice at its first attempt (SPEC §19.7, §19.1)", () => {
  // A trigger at the very ms of a grid slot runs as slot `now`, attempt 1: the slot then has
  // two attempt-1 runs. The ledger is oldest first, so of equal attempts the later one is the
  // slot's latest run, and it alone decides.
  const twice = (failManual: boolean) =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 1 })
      const seen: Array<[number, number, boolean]> = []
      // The only worker is busy until 2_000, so the trigger at 1_000 finds slot 1_000 still due.
      yield* s.schedule({ id: "hog", schedule: Schedule.once(0), job: Effect.sleep(2_000) })
      yield* s.schedule({
        id: "t",
        schedule: Schedule.fixedRate(1_000, { delay: 1_000 }),
        job: Effect.gen(function* () {
          const run = yield* Run.CurrentRun
          const manual = run.manual === true
          seen.push([run.slot, run.attempt, manual])
          if (run.slot === 1_000 && manual === failManual) return yield* Effect.fail("down")
        }),
      })
      yield* TestClock.adjust(1_000)
      yield* s.trigger("t")
      yield* TestClock.adjust(1_000)
      // The manual run first, then the slot it set aside, then the grid's next slot.
      expect(seen.slice(0, 2)).toEqual([
        [1_000, 1, true],
        [1_000, 1, false],
      ])
      return { s, seen }
    })

  it.effect("a later success stands: the slot is not retried", () =>
    Effect.gen(function* () {
      const { s } = yield* twice(true)
      const refused = yield* Effect.flip(s.retry("t", { slot: 1_000 }))
      expect(refused).toMatchObject({ _tag: "ManualRunRefused", slot: 1_000 })
      expect(refused.message).toContain("(attempt 1) succeeded")
    }),
  )

  it.effect("a later failure stands: the slot is retried at attempt 2", () =>
    Effect.gen(function* () {
      const { s, seen } = yield* twice(false)
      yield* s.retry("t", { slot: 1_000 })
      yield* TestClock.adjust(0)
      expect(seen.filter(([, attempt]) => attempt === 2)).toEqual([[1_000, 2, true]])
    }),
  )
})

describe("a listener hears an accepted task with its info", () => {
  it.effect("the info is the task just scheduled", () =>
    Effect.gen(function* () {
      const heard: Array<[string, string, string, number]> = []
      const s = yield* Scheduler.make({
        listener: {
          accepted: (id, info) => heard.push([id, info.id, info.state, info.scheduledFor]),
        },
      })
      yield* TestClock.adjust(50)
      yield* s.schedule({ id: "l", schedule: Schedule.once(100), job: Effect.void })
      expect(heard).toEqual([["l", "l", "scheduled", 150]])
    }),
  )
})

describe("a command's breaker holds are in the ledger as soon as it returns (SPEC §7.8)", () => {
  // `a` fails at 0 and opens db until 10_000. No command below moves the earliest slot before
  // the one the actor sleeps toward, so the actor does not wake between a command and the read:
  // what the ledger shows is what the command itself filed.
  const opened = Effect.gen(function* () {
    const s = yield* Scheduler.make({ breakers: { db: { failures: 1, coolDown: 10_000 } } })
    yield* s.schedule({ id: "far", schedule: Schedule.once(60_000), job: Effect.void })
    yield* s.schedule({
      id: "a",
      schedule: Schedule.once(0),
      job: Effect.fail("down"),
      breaker: "db",
    })
    yield* TestClock.adjust(0)
    expect(yield* s.status("a")).toBe("failed")
    return s
  })
  const held = (s: Scheduler.SchedulerShape, id: string) =>
    Effect.map(s.ledger(id), (l) =>
      l.flatMap((o) => (o.kind === "paused" ? [[o.reason, o.at] as const] : [])),
    )

  it.effect("a task scheduled into an open breaker", () =>
    Effect.gen(function* () {
      const s = yield* opened
      yield* TestClock.adjust(10)
      yield* s.schedule({
        id: "b",
        schedule: Schedule.fixedRate(1_000, { delay: 1_000 }),
        job: Effect.void,
        breaker: "db",
      })
      expect(yield* held(s, "b")).toEqual([["breaker", 10]])
    }),
  )

  it.effect("a task moved into an open breaker by update", () =>
    Effect.gen(function* () {
      const s = yield* opened
      yield* s.schedule({
        id: "c",
        schedule: Schedule.fixedRate(1_000, { delay: 1_000 }),
        job: Effect.void,
      })
      yield* TestClock.adjust(10)
      expect(yield* s.update("c", { breaker: "db" })).toBe(true)
      expect(yield* held(s, "c")).toEqual([["breaker", 10]])
    }),
  )

  it.effect("a failed task retried back into its open breaker", () =>
    Effect.gen(function* () {
      const s = yield* opened
      yield* TestClock.adjust(10)
      yield* s.retry("a")
      expect(yield* held(s, "a")).toEqual([["breaker", 10]])
    }),
  )
})

describe("a deduplicated request is in the holder's ledger as soon as it returns (SPEC §20.3)", () => {
  it.effect("singleton: the request that created nothing reads back at once", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const request = s.scheduleDeduplicated({
        id: "h",
        schedule: Schedule.once(60_000),
        job: Effect.void,
        dedup: { key: "k" },
      })
      expect(yield* request).toEqual({ id: "h", outcome: "created" })
      yield* TestClock.adjust(10)
      // The holder's slot does not move, so nothing wakes the actor before the read.
      expect(yield* request).toEqual({ id: "h", outcome: "deduplicated" })
      const deduplicated = (yield* s.ledger("h")).filter((o) => o.kind === "deduplicated")
      expect(deduplicated).toEqual([expect.objectContaining({ key: "k", at: 10 })])
    }),
  )
})

describe("what a run's end decides is filed even as the scheduler drains (SPEC §12, §7)", () => {
  it.effect("the pause a last failure causes is heard before the close ends", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const heard: Array<string> = []
      const s = yield* Scheduler.make({
        shutdown: "drain",
        listener: {
          completed: (r) => heard.push(`completed ${r.id} ${r.outcome.kind}`),
          occurred: (o) => heard.push(`${o.kind} ${"id" in o ? o.id : ""}`),
        },
      }).pipe(Scope.provide(scope))
      yield* s.schedule({
        id: "flaky",
        schedule: Schedule.fixedRate(1_000),
        pauseAfterConsecutiveFailures: 1,
        job: Effect.andThen(Effect.sleep(100), Effect.fail("down")),
      })
      yield* TestClock.adjust(10)
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void), {
        startImmediately: true,
      })
      yield* TestClock.adjust(200)
      yield* Fiber.join(closing)
      expect(heard).toEqual(["completed flaky failed", "paused flaky"])
    }),
  )
})

describe("cancelling a half-open breaker's probe lets the next one go at once (SPEC §7.8, §8)", () => {
  it.effect("the new probe's release is in its ledger as soon as the cancel returns", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({
        workers: 2,
        breakers: { db: { failures: 1, coolDown: 100 } },
      })
      yield* s.schedule({
        id: "a",
        schedule: Schedule.once(0),
        job: Effect.fail("down"),
        breaker: "db",
      })
      for (const id of ["p", "q"]) {
        yield* s.schedule({
          id,
          schedule: Schedule.fixedRate(1_000, { delay: 50 }),
          job: Effect.sleep(10_000),
          breaker: "db",
        })
      }
      // db opens at 0 and holds p and q; half-open at 100, p (pushed first) is let go as the
      // probe, due at its next grid slot, 1_050.
      yield* TestClock.adjust(150)
      expect(yield* s.status("p")).toBe("scheduled")
      expect(yield* s.status("q")).toBe("paused")
      expect(yield* s.cancel("p")).toBe(true)
      const resumed = (yield* s.ledger("q")).filter((o) => o.kind === "resumed")
      expect(resumed).toEqual([
        expect.objectContaining({ reason: "breaker", nextSlot: 1_050, at: 150 }),
      ])
    }),
  )
})

describe("retry of a slot decided by its highest attempt, not its last entry (SPEC §19.7)", () => {
  it.effect(
    "a trigger's attempt 1 at the slot's ms after its attempt 2 does not stand for it",
    () =>
      Effect.gen(function* () {
        const s = yield* Scheduler.make()
        const seen: Array<[number, number, boolean]> = []
        yield* s.schedule({
          id: "t",
          schedule: Schedule.fixedRate(1_000, { delay: 1_000 }),
          // A retry due at once: slot 1_000's attempt 2 runs at 1_000 too.
          retry: { maxRetries: 1, base: 0 },
          job: Effect.gen(function* () {
            const run = yield* Run.CurrentRun
            const manual = run.manual === true
            seen.push([run.slot, run.attempt, manual])
            if (manual || run.attempt === 1) return yield* Effect.fail("down")
          }),
        })
        yield* TestClock.adjust(1_000)
        yield* s.trigger("t")
        yield* TestClock.adjust(0)
        expect(seen).toEqual([
          [1_000, 1, false],
          [1_000, 2, false],
          [1_000, 1, true],
        ])
        // The ledger's last entry of slot 1_000 failed, but its highest attempt, 2, succeeded.
        const refused = yield* Effect.flip(s.retry("t", { slot: 1_000 }))
        expect(refused).toMatchObject({ _tag: "ManualRunRefused", slot: 1_000 })
        expect(refused.message).toContain("(attempt 2) succeeded")
      }),
  )
})

describe("cancel with interrupt of a task that is not running (SPEC §8)", () => {
  it.effect("records no interruption: there was no run to interrupt", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ id: "idle", schedule: Schedule.once(5_000), job: Effect.void })
      expect(yield* s.cancel("idle", { interrupt: true })).toBe(true)
      expect(cancels(yield* s.ledger("idle"))).toEqual([["scheduled", false]])
    }),
  )
})

describe("a wall-clock step is logged (SPEC §2)", () => {
  it.effect("once, as a warning naming the step in ms", () => {
    const warnings: Array<string> = []
    const logger = Logger.make((o) => {
      if (o.logLevel === "Warn") warnings.push(String(o.message))
    })
    return Effect.gen(function* () {
      const test = yield* Clock.Clock
      let step = 0
      // Monotonic time is TestClock's; the wall clock is TestClock's + `step`.
      const clock: Clock.Clock = Object.create(test, {
        currentTimeMillisUnsafe: { value: () => test.currentTimeMillisUnsafe() + step },
        currentTimeMillis: { value: Effect.sync(() => test.currentTimeMillisUnsafe() + step) },
      })
      const s = yield* Scheduler.make().pipe(Effect.provideService(Clock.Clock, clock))
      yield* s.schedule({ id: "rate", schedule: Schedule.fixedRate(1_000), job: Effect.void })
      yield* TestClock.adjust(500)
      step = 3_600_000
      yield* TestClock.adjust(2_000)
      expect(warnings.filter((w) => w.includes("wall clock"))).toEqual([
        expect.stringContaining("stepped by 3600000 ms"),
      ])
    }).pipe(Effect.provide(Logger.layer([logger])))
  })
})
