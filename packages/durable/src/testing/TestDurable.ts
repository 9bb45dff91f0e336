/**
 * A {@link DurableScheduler.DurableScheduler} for tests: on a private in-memory SQLite store and
 * Effect's `TestClock`, with quiet logs, and helpers to move virtual time and to wait until the
 * scheduler has nothing left to do now. Moving the clock costs real time in proportion to the
 * runs that happen on the way, not to the span: a daily task over a virtual year is 365 runs.
 *
 * **Example** (A daily task over a week)
 *
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Schedule } from "@tickwork/core"
 * import { DurableScheduler, Handler } from "@tickwork/durable"
 * import { TestDurable } from "@tickwork/durable/testing"
 *
 * let sent = 0
 * const digest = Handler.make("digest", Schema.Struct({}), () => Effect.sync(() => void sent++))
 *
 * await TestDurable.run(
 *   Effect.gen(function* () {
 *     const durable = yield* DurableScheduler.DurableScheduler
 *     yield* durable.schedule({ handler: digest, payload: {}, schedule: Schedule.fixedRate("1 day") })
 *     yield* TestDurable.advance("7 days") // runs at day 0, 1, …, 7
 *   }),
 *   { handlers: [digest] },
 * )
 * sent // 8
 * ```
 *
 * @since 0.1.0
 */
import type { Errors as CoreErrors } from "@tickwork/core"
import type { Scheduler } from "@tickwork/runtime"
import { TestScheduler } from "@tickwork/runtime/testing"
import { Clock, Data, Duration, Effect, Layer, type LogLevel, References, type Scope } from "effect"
import { TestClock } from "effect/testing"
import * as DurableScheduler from "../DurableScheduler.ts"
import type { StoreCorrupt, StoreError, StoreLocked, StoreUnavailable } from "../Errors.ts"
import type * as Handler from "../Handler.ts"
import * as Sqlite from "../Sqlite.ts"

/**
 * Options of the test layer: every {@link DurableScheduler.DurableSchedulerOptions | durable
 * option}, with test defaults, plus the clock's start and the log level.
 *
 * Defaults that differ from `DurableScheduler.layer`'s, each because a test is one process with
 * a store that lives as long as the test:
 * - `owner: "test"` and `seed: 0`: the same run trace every time.
 * - `shutdown: "interrupt"`: closing a test never waits on virtual time for a run still going.
 * - `retention: false`: nothing is pruned (the store is thrown away with the test), so no
 *   pruning fiber wakes every minute of virtual time. Give `retention` to test pruning.
 * - `health.background: false`: no fiber re-reads health every 5 virtual seconds; `health`
 *   still assesses (and records the gauge) when a test calls it.
 *
 * @category models
 * @since 0.1.0
 */
export type Options<H extends Handler.Any> = DurableScheduler.DurableSchedulerOptions<H> & {
  /** Where virtual time starts: epoch ms or a `Date`. Default 0 (1970-01-01T00:00:00Z). */
  readonly startAt?: number | Date | undefined
  /** Log entries below this level are dropped. Default `"Warn"`. `"None"` drops everything. */
  readonly logLevel?: LogLevel.LogLevel | undefined
  /** Real time after which TestClock warns that a test sleeps without advancing it. Default 1 s. */
  readonly warningDelay?: Duration.Input | undefined
}

/**
 * The durable options {@link layer} sets unless given (see {@link Options} for why each): for a
 * test that builds its own layer on `DurableScheduler.layer`, e.g. on a clock of its own.
 *
 * @category models
 * @since 0.1.0
 */
export const defaults = {
  owner: "test",
  seed: 0,
  shutdown: "interrupt",
  retention: false,
  health: { background: false },
} as const satisfies Omit<DurableScheduler.DurableSchedulerOptions<Handler.Any>, "handlers">

/**
 * The test layer: a {@link DurableScheduler.DurableScheduler} and the runtime `Scheduler` beside
 * it, on a fresh in-memory SQLite store and a fresh `TestClock` (which the program sees too, so
 * `TestClock.adjust`, `TestClock.setTime` and {@link advance} move the scheduler's time). Closing
 * its scope shuts the scheduler down and drops the store.
 *
 * **Example** (Providing it to a program)
 *
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Schedule } from "@tickwork/core"
 * import { DurableScheduler, Handler } from "@tickwork/durable"
 * import { TestDurable } from "@tickwork/durable/testing"
 *
 * const ping = Handler.make("ping", Schema.Struct({}), () => Effect.void)
 * const program = Effect.gen(function* () {
 *   const durable = yield* DurableScheduler.DurableScheduler
 *   const id = yield* durable.schedule({ handler: ping, payload: {}, schedule: Schedule.once(500) })
 *   yield* TestDurable.advance(500)
 *   return yield* durable.status(id) // "done"
 * })
 * Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(TestDurable.layer({ handlers: [ping] }))))
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = <H extends Handler.Any>(
  options: Options<H>,
): Layer.Layer<
  DurableScheduler.DurableScheduler | Scheduler.Scheduler,
  CoreErrors.InvalidOption | StoreError | StoreLocked | StoreUnavailable | StoreCorrupt,
  Handler.Services<H>
> => {
  const { startAt, logLevel, warningDelay, ...durableOptions } = options
  const start =
    startAt === undefined ? 0 : typeof startAt === "number" ? startAt : startAt.getTime()
  // A number, not TestClock's default "1 second": the delay is decoded again at every wake-up.
  const clock = TestClock.layer({ warningDelay: warningDelay ?? 1_000 })
  // Before the scheduler starts: at start nothing sleeps yet, so no wake-up is run on the way.
  const setStart = Layer.effectDiscard(start === 0 ? Effect.void : TestClock.setTime(start))
  const logs = Layer.succeed(References.MinimumLogLevel, logLevel ?? "Warn")
  return DurableScheduler.layer<H>({
    ...defaults,
    ...durableOptions,
    health: { ...defaults.health, ...durableOptions.health },
  }).pipe(
    Layer.provide(Sqlite.layer({ filename: ":memory:" })),
    Layer.provideMerge(setStart),
    Layer.provideMerge(clock),
    Layer.provideMerge(logs),
  )
}

/**
 * Runs a program that needs the {@link DurableScheduler.DurableScheduler} (and a `Scope`) on the
 * test layer and returns its result as a promise: a plain test-runner body. The program's
 * failure rejects the promise with the failure itself. For handlers that need services, provide
 * them and {@link layer} yourself.
 *
 * **Example** (A vitest test)
 *
 * ```ts
 * import { it, expect } from "vitest"
 * import { Effect, Schema } from "effect"
 * import { Schedule } from "@tickwork/core"
 * import { DurableScheduler, Handler } from "@tickwork/durable"
 * import { TestDurable } from "@tickwork/durable/testing"
 *
 * const ping = Handler.make("ping", Schema.Struct({}), () => Effect.void)
 *
 * it("runs a one-off task at its slot", () =>
 *   TestDurable.run(
 *     Effect.gen(function* () {
 *       const durable = yield* DurableScheduler.DurableScheduler
 *       const id = yield* durable.schedule({ handler: ping, payload: {}, schedule: Schedule.once(10) })
 *       yield* TestDurable.advance(10)
 *       expect(yield* durable.status(id)).toBe("done")
 *     }),
 *     { handlers: [ping] },
 *   ))
 * ```
 *
 * @category runners
 * @since 0.1.0
 */
export const run = <A, E, H extends Handler.Any>(
  program: Effect.Effect<
    A,
    E,
    DurableScheduler.DurableScheduler | Scheduler.Scheduler | Scope.Scope
  >,
  options: Options<H>,
): Promise<A> =>
  Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(layer(options))) as Effect.Effect<A>)

/**
 * The durable scheduler did not settle: after `turns` turns its dispatcher was still busy, or a
 * run was still between its claim and its start or between its end and its commit (a handler
 * inside its run, sleeping or waiting, does not keep it from settling).
 *
 * @category errors
 * @since 0.1.0
 */
export class NotSettled extends Data.TaggedError("NotSettled")<{
  readonly message: string
  readonly turns: number
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
 * Fiber turns a held run must stay inside its handler, with the dispatcher parked, before
 * {@link settle} takes it as waiting on the clock (or on something else outside the scheduler).
 */
const QUIET_TURNS = 64

/**
 * Lets the durable scheduler (and the in-memory one beside it) work without moving the clock,
 * until its dispatcher is parked and no run is held, or every run held is inside its handler and
 * stays there for 64 turns: a handler that sleeps in virtual time (`Effect.sleep`) is woken by
 * the next {@link advance}, at its own time. `TestClock.adjust` awaits only the work its
 * own wake-ups start, not work a test starts (a `schedule` call wakes the dispatcher directly):
 * settle after scheduling, before reading the store. Dies with {@link NotSettled} when that does
 * not happen within `maxTurns` fiber turns.
 *
 * @category combinators
 * @since 0.1.0
 */
export const settle = (
  options: SettleOptions = {},
): Effect.Effect<void, never, DurableScheduler.DurableScheduler | Scheduler.Scheduler> =>
  Effect.gen(function* () {
    const durable = yield* DurableScheduler.DurableScheduler
    const maxTurns = options.maxTurns ?? 10_000
    let quiet = 0
    for (let turn = 0; ; turn++) {
      yield* Effect.yieldNow
      if (yield* durable.idle) break
      // Runs inside handlers that stay there for QUIET_TURNS turns wait on the clock (a sleep):
      // only the test moves it, so nothing more happens until it does.
      quiet = (yield* durable.waitsOnHandlers) ? quiet + 1 : 0
      if (quiet >= QUIET_TURNS) break
      if (turn >= maxTurns) {
        const now = yield* Clock.currentTimeMillis
        return yield* Effect.die(
          new NotSettled({
            message:
              `the durable scheduler did not settle within ${maxTurns} turns at t=${now}: ` +
              "its dispatcher stayed busy, or a run stayed between its claim and its start or between " +
              "its end and its commit.",
            turns: maxTurns,
            now,
          }),
        )
      }
    }
    yield* TestScheduler.settle(options)
  })

/**
 * {@link settle}s, moves virtual time forward by `duration` (waking every sleep due on the way,
 * each at its own time, so runs start exactly at their slots), then settles again.
 *
 * @category combinators
 * @since 0.1.0
 */
export const advance = (
  duration: Duration.Input,
  options?: SettleOptions,
): Effect.Effect<void, never, DurableScheduler.DurableScheduler | Scheduler.Scheduler> =>
  Effect.andThen(settle(options), Effect.andThen(TestClock.adjust(duration), settle(options)))

/**
 * Moves virtual time forward to `time` (epoch ms or a `Date`; a time in the past is now), then
 * settles: {@link advance} by the difference.
 *
 * @category combinators
 * @since 0.1.0
 */
export const advanceTo = (
  time: number | Date,
  options?: SettleOptions,
): Effect.Effect<void, never, DurableScheduler.DurableScheduler | Scheduler.Scheduler> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const target = typeof time === "number" ? time : time.getTime()
    return advance(Duration.millis(Math.max(0, target - now)), options)
  })

/**
 * Sets virtual time to `time` (epoch ms or a `Date`), forward or back, then settles. Forward, it
 * wakes every sleep due on the way as {@link advance} does; back, nothing wakes, and slots stay
 * where they are (a slot already run is not run again).
 *
 * @category combinators
 * @since 0.1.0
 */
export const setTime = (
  time: number | Date,
  options?: SettleOptions,
): Effect.Effect<void, never, DurableScheduler.DurableScheduler | Scheduler.Scheduler> =>
  Effect.andThen(
    settle(options),
    Effect.andThen(
      TestClock.setTime(typeof time === "number" ? time : time.getTime()),
      settle(options),
    ),
  )

/**
 * The current virtual time, epoch ms (the same as `Clock.currentTimeMillis` on the test layer).
 *
 * @category getters
 * @since 0.1.0
 */
export const now: Effect.Effect<number> = Clock.currentTimeMillis
