/**
 * A {@link Scheduler.Scheduler} for tests: on Effect's `TestClock`, with quiet logs and one
 * worker, so the same program gives the same run trace every time, and helpers to move virtual
 * time and to wait until the scheduler has nothing left to do now.
 *
 * **Example** (A retrying task, checked in virtual time)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Schedule, Scheduler } from "@tickwork/runtime"
 * import { TestScheduler } from "@tickwork/runtime/testing"
 *
 * const attempts = await TestScheduler.run(
 *   Effect.gen(function* () {
 *     const scheduler = yield* Scheduler.Scheduler
 *     const id = yield* scheduler.schedule({
 *       schedule: Schedule.once("1 minute"),
 *       retry: { maxRetries: 2, base: "10 seconds" },
 *       job: Effect.fail("unavailable"),
 *     })
 *     yield* TestScheduler.advance("2 minutes") // the run at 60 s and its retries at 70 s and 90 s
 *     return (yield* scheduler.ledger(id)).length
 *   }),
 * )
 * attempts // 3
 * ```
 *
 * @since 0.1.0
 */
import type { Errors } from "@tickwork/core"
import { Clock, Data, Duration, Effect, Layer, type LogLevel, References, type Scope } from "effect"
import { TestClock } from "effect/testing"
import * as Scheduler from "../Scheduler.ts"

/**
 * Options of the test layer: every {@link Scheduler.SchedulerOptions | Scheduler option}, with
 * test defaults, plus the clock's start and the log level.
 *
 * Defaults that differ from the Scheduler's: `workers: 1` (runs one at a time, in SPEC §4 order:
 * deterministic), `shutdown: "interrupt"` (closing a test never waits on virtual time for a run
 * that is still going), `spans: false`, `seed: 0` (the same jitter every run) and
 * `logFailures: false` (a test asserts failures through the ledger instead).
 *
 * @category models
 * @since 0.1.0
 */
export interface Options extends Scheduler.SchedulerOptions {
  /** Where virtual time starts: epoch ms or a `Date`. Default 0 (1970-01-01T00:00:00Z). */
  readonly startAt?: number | Date
  /**
   * Log entries below this level are dropped. Default `"Warn"`: the scheduler's own info lines
   * and the jobs' info and debug logs are quiet, while warnings (such as TestClock's "a test is
   * using time, but is not advancing the test clock") still show. `"None"` drops everything.
   */
  readonly logLevel?: LogLevel.LogLevel
  /** Real time after which TestClock warns that a test sleeps without advancing it. Default 1 s. */
  readonly warningDelay?: Duration.Input
}

/**
 * The test layer: a {@link Scheduler.Scheduler} built on a fresh `TestClock` (which the program
 * sees too, so `TestClock.adjust` and {@link advance} move the scheduler's time), with the log
 * level of {@link Options.logLevel}. Closing its scope shuts the scheduler down.
 *
 * **Example** (Providing it to a program)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Schedule, Scheduler } from "@tickwork/runtime"
 * import { TestScheduler } from "@tickwork/runtime/testing"
 *
 * const program = Effect.gen(function* () {
 *   const scheduler = yield* Scheduler.Scheduler
 *   const id = yield* scheduler.schedule({ schedule: Schedule.once(500), job: Effect.void })
 *   yield* TestScheduler.advance(500)
 *   return yield* scheduler.status(id) // "done"
 * })
 * Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(TestScheduler.layer({ startAt: new Date("2026-03-01") }))))
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  options: Options = {},
): Layer.Layer<Scheduler.Scheduler, Errors.InvalidOption> => {
  const { startAt, logLevel, warningDelay, ...schedulerOptions } = options
  const start =
    startAt === undefined ? 0 : typeof startAt === "number" ? startAt : startAt.getTime()
  const clock = TestClock.layer(warningDelay === undefined ? {} : { warningDelay })
  const setStart = Layer.effectDiscard(start === 0 ? Effect.void : TestClock.setTime(start))
  const logs = Layer.succeed(References.MinimumLogLevel, logLevel ?? "Warn")
  return Scheduler.layer({
    workers: 1,
    shutdown: "interrupt",
    spans: false,
    seed: 0,
    logFailures: false,
    ...schedulerOptions,
  }).pipe(Layer.provideMerge(setStart), Layer.provideMerge(clock), Layer.provideMerge(logs))
}

/**
 * Runs a program that needs a {@link Scheduler.Scheduler} (and a `Scope`) on the test layer and
 * returns its result as a promise: a plain test-runner body, no `@effect/vitest` needed. The
 * program's failure rejects the promise with the failure itself.
 *
 * **Example** (A vitest test)
 *
 * ```ts
 * import { it, expect } from "vitest"
 * import { Effect } from "effect"
 * import { Schedule, Scheduler } from "@tickwork/runtime"
 * import { TestScheduler } from "@tickwork/runtime/testing"
 *
 * it("runs a one-off task at its slot", () =>
 *   TestScheduler.run(
 *     Effect.gen(function* () {
 *       const scheduler = yield* Scheduler.Scheduler
 *       const id = yield* scheduler.schedule({ schedule: Schedule.once(10), job: Effect.void })
 *       yield* TestScheduler.advance(10)
 *       expect(yield* scheduler.status(id)).toBe("done")
 *     }),
 *   ))
 * ```
 *
 * @category runners
 * @since 0.1.0
 */
export const run = <A, E>(
  program: Effect.Effect<A, E, Scheduler.Scheduler | Scope.Scope>,
  options?: Options,
): Promise<A> =>
  Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(layer(options))) as Effect.Effect<A>)

/**
 * The scheduler did not settle: after `turns` turns it still had work due, or kept changing
 * (a job that loops forever without waiting). A job that waits, on the clock or on anything
 * else, does not keep it from settling.
 *
 * @category errors
 * @since 0.1.0
 */
export class NotSettled extends Data.TaggedError("NotSettled")<{
  readonly message: string
  readonly turns: number
  readonly inFlight: number
  readonly nextSlot: number | undefined
  readonly now: number
}> {}

/**
 * Options of {@link settle}.
 *
 * @category models
 * @since 0.1.0
 */
export interface SettleOptions {
  /** Fiber turns to wait at most. Default 10,000 (a few milliseconds of real time). */
  readonly maxTurns?: number
}

/**
 * Fiber turns the scheduler must stay unchanged, with runs in flight, before {@link settle} takes
 * those runs' jobs as waiting (on the clock: a sleep the next advance wakes; or on anything else).
 */
const QUIET_TURNS = 64

/**
 * Lets the scheduler's actor and jobs run without moving the clock, until nothing due now is
 * left and nothing is in flight, or the runs in flight stay inside their jobs for 64 turns with
 * nothing changing (a job that sleeps in virtual time: the next advance wakes it at its own
 * time; a run due meanwhile waits for a worker). Dies with {@link NotSettled} when neither
 * happens within `maxTurns` fiber turns. Use it after scheduling or cancelling, when a test
 * reads the scheduler right away.
 *
 * **Example** (A task due now has run by the time `settle` returns)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Schedule, Scheduler } from "@tickwork/runtime"
 * import { TestScheduler } from "@tickwork/runtime/testing"
 *
 * const program = Effect.gen(function* () {
 *   const scheduler = yield* Scheduler.Scheduler
 *   const id = yield* scheduler.schedule({ schedule: Schedule.once(0), job: Effect.void })
 *   yield* TestScheduler.settle()
 *   return yield* scheduler.status(id) // "done"
 * })
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const settle = (
  options: SettleOptions = {},
): Effect.Effect<void, never, Scheduler.Scheduler> =>
  Effect.gen(function* () {
    const scheduler = yield* Scheduler.Scheduler
    const maxTurns = options.maxTurns ?? 10_000
    let quiet = 0
    let mark = ""
    for (let turn = 0; ; turn++) {
      yield* Effect.yieldNow
      const stats = yield* scheduler.stats
      const next = yield* scheduler.nextSlot
      const now = yield* Clock.currentTimeMillis
      const due = next._tag === "Some" && next.value <= now
      if (stats.inFlight === 0 && !due) {
        // One more turn, so subscribers of the occurrence stream receive the last records.
        yield* Effect.yieldNow
        return
      }
      // An outcome reported wakes the actor (`actorWakes`) and moves a count: while neither
      // moves, the runs in flight are inside their jobs, and a run due waits for a worker.
      const seen = `${stats.inFlight} ${stats.actorWakes} ${stats.done} ${stats.failed} ${stats.scheduled}`
      quiet = seen === mark ? quiet + 1 : 0
      mark = seen
      if (quiet >= QUIET_TURNS) return
      if (turn >= maxTurns) {
        const nextSlot = next._tag === "Some" ? next.value : undefined
        return yield* Effect.die(
          new NotSettled({
            message:
              `the scheduler did not settle within ${maxTurns} turns at t=${now}: ` +
              `${stats.inFlight} run(s) in flight, next slot ${nextSlot ?? "none"}. ` +
              "Its actor kept working on every turn.",
            turns: maxTurns,
            inFlight: stats.inFlight,
            nextSlot,
            now,
          }),
        )
      }
    }
  })

/**
 * Moves virtual time forward by `duration` (waking every sleep due on the way, each at its own
 * time, so runs start exactly at their slots), then {@link settle}s.
 *
 * **Example** (Three slots of a fixed-rate task)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Schedule, Scheduler } from "@tickwork/runtime"
 * import { TestScheduler } from "@tickwork/runtime/testing"
 *
 * const program = Effect.gen(function* () {
 *   const scheduler = yield* Scheduler.Scheduler
 *   const id = yield* scheduler.schedule({ schedule: Schedule.fixedRate("1 minute"), job: Effect.void })
 *   yield* TestScheduler.advance("2 minutes") // runs at 0, 60 000 and 120 000
 *   return (yield* scheduler.info(id)) // Some({ runNumber: 3, scheduledFor: 180000, … })
 * })
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const advance = (
  duration: Duration.Input,
  options?: SettleOptions,
): Effect.Effect<void, never, Scheduler.Scheduler> =>
  Effect.andThen(TestClock.adjust(duration), settle(options))

/**
 * Moves virtual time forward to `time` (epoch ms or a `Date`; a time in the past is now), then
 * {@link settle}s.
 *
 * **Example** (Up to a cron slot)
 *
 * ```ts
 * import { TestScheduler } from "@tickwork/runtime/testing"
 *
 * const toMorning = TestScheduler.advanceTo(new Date("2026-03-09T02:30:00Z"))
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const advanceTo = (
  time: number | Date,
  options?: SettleOptions,
): Effect.Effect<void, never, Scheduler.Scheduler> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const target = typeof time === "number" ? time : time.getTime()
    return advance(Duration.millis(Math.max(0, target - now)), options)
  })

/**
 * The current virtual time, epoch ms (the same as `Clock.currentTimeMillis` on the test layer).
 *
 * **Example** (Reading virtual time)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { TestScheduler } from "@tickwork/runtime/testing"
 *
 * const program = Effect.andThen(TestScheduler.advance(1500), TestScheduler.now) // 1500
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const now: Effect.Effect<number> = Clock.currentTimeMillis
