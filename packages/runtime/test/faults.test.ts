/**
 * Nothing stops silently (the runtime's part): a throwing listener, a job that ignores
 * interruption at shutdown, a stuck run, and a shutdown report that counts each task once.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Logger, Option, Scope } from "effect"
import { TestClock } from "effect/testing"
import { Ledger, Schedule, Scheduler, type Task } from "../src/index.ts"

describe("faults in user callbacks", () => {
  it.effect("a listener that throws is logged once and counted; the scheduler carries on", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({
        logFailures: false,
        listener: {
          completed: () => {
            throw new Error("listener bug")
          },
        },
      })
      for (let k = 0; k < 3; k++) {
        yield* s.schedule({ id: `t${k}`, schedule: Schedule.once(k), job: Effect.void })
      }
      yield* TestClock.adjust(5)
      for (let k = 0; k < 3; k++) expect(yield* s.status(`t${k}`)).toBe("done")
      expect((yield* s.stats).listenerErrors).toBe(3)
    }),
  )

  it.effect(
    "each listener callback that throws is logged once, by its name, and every throw counted",
    () => {
      const errors: Array<string> = []
      const logger = Logger.make((o) => {
        if (o.logLevel === "Error") errors.push(String(o.message))
      })
      const boom = () => {
        throw new Error("listener bug")
      }
      return Effect.gen(function* () {
        const s = yield* Scheduler.make({
          logFailures: false,
          listener: {
            accepted: boom,
            started: boom,
            completed: boom,
            cancelled: boom,
            occurred: boom,
          },
        })
        for (const id of ["a", "b"]) {
          yield* s.schedule({ id, schedule: Schedule.fixedRate(10), job: Effect.void })
        }
        yield* TestClock.adjust(25)
        yield* s.pause("a")
        yield* s.cancel("b")
        yield* TestClock.adjust(1)
        const names = ["accepted", "started", "completed", "cancelled", "occurred"]
        for (const name of names) {
          expect(errors.filter((m) => m.includes(`listener.${name} threw`))).toHaveLength(1)
        }
        expect(errors).toHaveLength(names.length)
        // 2 accepted, 6 started and 6 completed (slots 0, 10, 20 of each), 1 cancelled, 1 paused.
        expect((yield* s.stats).listenerErrors).toBe(16)
      }).pipe(Effect.provide(Logger.layer([logger])))
    },
  )

  it.effect("shutdown is bounded even when a job ignores interruption", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const reports: Array<Scheduler.ShutdownReport> = []
      const s = yield* Scheduler.make({
        shutdown: "interrupt",
        shutdownTimeout: "1 second",
        shutdownGrace: "1 second",
        onShutdown: (r) => reports.push(r),
      }).pipe(Scope.provide(scope))
      yield* s.schedule({
        id: "stubborn",
        schedule: Schedule.once(0),
        job: Effect.uninterruptible(Effect.never),
      })
      yield* TestClock.adjust(1)
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void), {
        startImmediately: true,
      })
      yield* TestClock.adjust(2000)
      yield* Fiber.join(closing)
      expect(reports).toHaveLength(1)
      expect(reports[0]?.abandoned).toEqual(["stubborn"])
    }),
  )
})

describe("one shutdown budget (issue 28)", () => {
  it.effect(
    "drain, with a job that ignores interruption: closed exactly at shutdownTimeout + shutdownGrace, the run named in a warning",
    () => {
      const warnings: Array<string> = []
      const logger = Logger.make((o) => {
        if (o.logLevel === "Warn") warnings.push(String(o.message))
      })
      return Effect.gen(function* () {
        const scope = yield* Scope.make()
        const reports: Array<Scheduler.ShutdownReport> = []
        const s = yield* Scheduler.make({
          shutdownTimeout: "2 seconds",
          shutdownGrace: "1 second",
          onShutdown: (r) => reports.push(r),
        }).pipe(Scope.provide(scope))
        yield* s.schedule({
          id: "stubborn",
          schedule: Schedule.once(0),
          job: Effect.uninterruptible(Effect.never),
        })
        yield* TestClock.adjust(1)
        const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void), {
          startImmediately: true,
        })
        yield* TestClock.adjust(2_999)
        expect(closing.pollUnsafe()).toBeUndefined()
        yield* TestClock.adjust(1)
        yield* Fiber.join(closing)
        expect(reports[0]?.abandoned).toEqual(["stubborn"])
        expect(warnings.filter((w) => w.includes("ignored interruption"))).toEqual([
          expect.stringContaining("stubborn"),
        ])
      }).pipe(Effect.provide(Logger.layer([logger])))
    },
  )
})

describe("stuck runs are visible", () => {
  it.effect(
    "info tells when a running run started; a run past slowRunWarning is logged once",
    () => {
      const warnings: Array<string> = []
      const logger = Logger.make((o) => {
        if (o.logLevel === "Warn") warnings.push(String(o.message))
      })
      return Effect.gen(function* () {
        const s = yield* Scheduler.make({ slowRunWarning: "1 minute", shutdown: "interrupt" })
        yield* s.schedule({ id: "stuck", schedule: Schedule.once(500), job: Effect.never })
        yield* s.schedule({ id: "quick", schedule: Schedule.once(500), job: Effect.sleep(1000) })
        yield* TestClock.adjust(500)
        const info = Option.getOrThrow(yield* s.info("stuck"))
        expect(info.state).toBe("running")
        expect(info.runningSince).toBe(500)
        yield* TestClock.adjust(59_999)
        expect(warnings).toEqual([])
        yield* TestClock.adjust(1)
        expect(warnings).toHaveLength(1)
        expect(warnings[0]).toContain("task stuck")
        yield* TestClock.adjust(600_000)
        expect(warnings).toHaveLength(1) // once per run
        expect(Option.getOrThrow(yield* s.info("quick")).runningSince).toBeUndefined()
      }).pipe(Effect.provide(Logger.layer([logger])))
    },
  )

  it.effect("a slow run's warning is not repeated when the actor wakes again", () => {
    const warnings: Array<string> = []
    const logger = Logger.make((o) => {
      if (o.logLevel === "Warn") warnings.push(String(o.message))
    })
    return Effect.gen(function* () {
      const s = yield* Scheduler.make({
        workers: 2,
        slowRunWarning: "1 second",
        shutdown: "interrupt",
      })
      yield* s.schedule({ id: "stuck", schedule: Schedule.once(0), job: Effect.never })
      // Wakes the actor every 100 ms on the other worker, long after the warning.
      yield* s.schedule({ id: "tick", schedule: Schedule.fixedRate(100), job: Effect.void })
      yield* TestClock.adjust(1_000)
      expect(warnings.filter((w) => w.includes("task stuck"))).toHaveLength(1)
      const wakes = (yield* s.stats).actorWakes
      yield* TestClock.adjust(5_000)
      expect((yield* s.stats).actorWakes - wakes).toBeGreaterThanOrEqual(50)
      expect(warnings.filter((w) => w.includes("task stuck"))).toHaveLength(1)
    }).pipe(Effect.provide(Logger.layer([logger])))
  })

  it.effect("slowRunWarning: false never warns", () => {
    const warnings: Array<string> = []
    const logger = Logger.make((o) => {
      if (o.logLevel === "Warn") warnings.push(String(o.message))
    })
    return Effect.gen(function* () {
      const s = yield* Scheduler.make({ slowRunWarning: false, shutdown: "interrupt" })
      yield* s.schedule({ schedule: Schedule.once(0), job: Effect.never })
      yield* TestClock.adjust(3_600_000)
      expect(warnings).toEqual([])
    }).pipe(Effect.provide(Logger.layer([logger])))
  })
})

describe("the shutdown report", () => {
  it.effect(
    "drain: a recurring task whose run finishes during shutdown is finished, not also pending",
    () =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const reports: Array<Scheduler.ShutdownReport> = []
        const s = yield* Scheduler.make({ onShutdown: (r) => reports.push(r) }).pipe(
          Scope.provide(scope),
        )
        yield* s.schedule({ id: "every", schedule: Schedule.fixedRate(100), job: Effect.sleep(50) })
        yield* s.schedule({ id: "later", schedule: Schedule.once(10_000), job: Effect.void })
        yield* TestClock.adjust(10) // "every" is running
        const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void), {
          startImmediately: true,
        })
        yield* TestClock.adjust(100)
        yield* Fiber.join(closing)
        expect(yield* s.status("every")).toBe("scheduled")
        expect(reports[0]?.finished).toEqual(["every"])
        expect(reports[0]?.pending).toEqual(["later"])
      }),
  )
})

describe("the ledger's memory is bounded across tasks", () => {
  it("Store keeps at most capacity records in all, dropping the oldest of all first", () => {
    const store = new Ledger.Store(4, 100, 5)
    const record = (id: string, at: number): Ledger.Cancelled => ({
      kind: "cancelled",
      id: id as Task.TaskId,
      generation: 1,
      from: "scheduled",
      scheduledFor: at,
      interrupted: false,
      at,
    })
    for (let t = 0; t < 4; t++) {
      store.add(0, record("a", t), false)
      store.add(1, record("b", t), false)
    }
    const a = store.get(0, 1).map((o) => (o as Ledger.Cancelled).at)
    const b = store.get(1, 1).map((o) => (o as Ledger.Cancelled).at)
    expect(a.length + b.length).toBe(5)
    // The newest five of the eight: b@1, a@2, b@2, a@3, b@3.
    expect(a).toEqual([2, 3])
    expect(b).toEqual([1, 2, 3])
  })

  it.effect(
    "a scheduler with 1,000 busy tasks keeps ledgerCapacity records, the latest of each",
    () =>
      Effect.gen(function* () {
        const s = yield* Scheduler.make({ ledgerCapacity: 500, logFailures: false })
        for (let k = 0; k < 1000; k++) {
          yield* s.schedule({ id: `t${k}`, schedule: Schedule.fixedRate(10), job: Effect.void })
        }
        yield* TestClock.adjust(100)
        let held = 0
        for (let k = 0; k < 1000; k++) held += (yield* s.ledger(`t${k}`)).length
        expect(held).toBe(500)
        const newest = (yield* s.ledger("t999")).at(-1)
        expect(newest?.kind === "ran" && newest.startedAt).toBe(100)
      }),
  )

  it.effect(
    "missed-slot records of a live task do not count it among retention.maxFinished's finished tasks",
    () =>
      Effect.gen(function* () {
        const s = yield* Scheduler.make({
          workers: 1,
          retention: { maxFinished: 1 },
          shutdown: "interrupt",
        })
        // Slots of both live tasks are merged (before a late start) or dropped (after an overrun)
        // again and again; two one-shots finish meanwhile, past the one finished task kept.
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
        yield* s.schedule({ id: "done", schedule: Schedule.once(200), job: Effect.void })
        yield* TestClock.adjust(300)
        const kinds = (id: string) => Effect.map(s.ledger(id), (list) => list.map((o) => o.kind))
        expect(yield* kinds("merging")).toContain("coalesced")
        expect(yield* kinds("merging")).toContain("ran")
        expect(yield* kinds("skipping")).toContain("skipped")
        expect(yield* kinds("skipping")).toContain("ran")
        // The finished tasks: only the latest keeps its history.
        expect(yield* kinds("busy")).toEqual([])
        expect(yield* kinds("done")).toEqual(["ran"])
      }),
  )
})
