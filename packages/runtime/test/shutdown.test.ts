import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Option, Scope } from "effect"
import { TestClock } from "effect/testing"
import { Schedule, Scheduler } from "../src/index.ts"

/** A scheduler with one run in flight ("busy", 100 ms long) and one pending task ("later"). */
const setup = (options: Scheduler.SchedulerOptions) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const reports: Array<Scheduler.ShutdownReport> = []
    const s = yield* Scheduler.make({ ...options, onShutdown: (r) => reports.push(r) }).pipe(
      Scope.provide(scope),
    )
    let busyEnded = false
    yield* s.schedule({
      id: "busy",
      schedule: Schedule.once(0),
      job: Effect.andThen(
        Effect.sleep(100),
        Effect.sync(() => (busyEnded = true)),
      ),
    })
    yield* s.schedule({ id: "later", schedule: Schedule.once(1_000), job: Effect.void })
    yield* TestClock.adjust(10)
    expect(yield* s.status("busy")).toBe("running")
    const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void), {
      startImmediately: true,
    })
    return { s, reports, closing, busyEnded: () => busyEnded }
  })

describe("shutdown (SPEC §12)", () => {
  it.effect("drain: running runs finish, nothing new starts, pending tasks are reported", () =>
    Effect.gen(function* () {
      const { s, reports, closing, busyEnded } = yield* setup({ shutdown: "drain" })
      const refused = yield* Effect.exit(
        s.schedule({ schedule: Schedule.once(0), job: Effect.void }),
      )
      expect(Option.getOrThrow(Exit.findErrorOption(refused))._tag).toBe("SchedulerClosed")
      yield* TestClock.adjust(2_000)
      yield* Fiber.join(closing)
      expect(busyEnded()).toBe(true)
      expect(yield* s.status("later")).toBe("scheduled")
      expect(reports).toEqual([
        {
          policy: "drain",
          pending: ["later"],
          finished: ["busy"],
          cancelled: [],
          interrupted: [],
          abandoned: [],
        },
      ])
    }),
  )

  it.effect("cancel: pending tasks are cancelled, running runs finish", () =>
    Effect.gen(function* () {
      const { s, reports, closing, busyEnded } = yield* setup({ shutdown: "cancel" })
      yield* TestClock.adjust(2_000)
      yield* Fiber.join(closing)
      expect(busyEnded()).toBe(true)
      expect(yield* s.status("later")).toBe("cancelled")
      expect(reports).toEqual([
        {
          policy: "cancel",
          pending: [],
          finished: ["busy"],
          cancelled: ["later"],
          interrupted: [],
          abandoned: [],
        },
      ])
    }),
  )

  it.effect("interrupt: running runs are interrupted and pending tasks cancelled", () =>
    Effect.gen(function* () {
      const { s, reports, closing, busyEnded } = yield* setup({ shutdown: "interrupt" })
      yield* Fiber.join(closing)
      expect(busyEnded()).toBe(false)
      expect(yield* s.status("later")).toBe("cancelled")
      expect(yield* s.status("busy")).toBe("failed")
      const [ran] = yield* s.ledger("busy")
      expect(ran?.kind === "ran" && ran.outcome.kind).toBe("interrupted")
      expect(reports).toEqual([
        {
          policy: "interrupt",
          pending: [],
          finished: [],
          cancelled: ["later"],
          interrupted: ["busy"],
          abandoned: [],
        },
      ])
    }),
  )

  it.effect("cancel: a recurring run that ends during shutdown is not left pending", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const reports: Array<Scheduler.ShutdownReport> = []
      const s = yield* Scheduler.make({
        shutdown: "cancel",
        onShutdown: (r) => reports.push(r),
      }).pipe(Scope.provide(scope))
      yield* s.schedule({ id: "every", schedule: Schedule.fixedRate(50), job: Effect.sleep(20) })
      yield* TestClock.adjust(10)
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void), {
        startImmediately: true,
      })
      yield* TestClock.adjust(100)
      yield* Fiber.join(closing)
      expect(yield* s.status("every")).toBe("cancelled")
      expect(reports).toEqual([
        {
          policy: "cancel",
          pending: [],
          finished: ["every"],
          cancelled: ["every"],
          interrupted: [],
          abandoned: [],
        },
      ])
    }),
  )

  it.effect("runs still going after shutdownTimeout are interrupted", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const reports: Array<Scheduler.ShutdownReport> = []
      const s = yield* Scheduler.make({
        shutdown: "drain",
        shutdownTimeout: "1 second",
        onShutdown: (r) => reports.push(r),
      }).pipe(Scope.provide(scope))
      yield* s.schedule({ id: "hung", schedule: Schedule.once(0), job: Effect.never })
      yield* TestClock.adjust(1)
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void), {
        startImmediately: true,
      })
      yield* TestClock.adjust(999)
      expect(reports).toEqual([])
      yield* TestClock.adjust(1)
      yield* Fiber.join(closing)
      expect(reports).toEqual([
        {
          policy: "drain",
          pending: [],
          finished: [],
          cancelled: [],
          interrupted: ["hung"],
          abandoned: [],
        },
      ])
      expect((yield* s.stats).closed).toBe(true)
    }),
  )
})
