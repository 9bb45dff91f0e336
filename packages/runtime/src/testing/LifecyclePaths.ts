/**
 * Model-based tests of a task's lifecycle: paths generated from THE task machine
 * (`Lifecycle.machine`) with `xstate/graph`, covering every transition the machine can take for
 * a task's retry policy, failure policy and catch-up window — not only every state — pauses and
 * resumes included, and a driver that plays a path against a real {@link Scheduler.Scheduler}
 * on the test clock, asserting the lifecycle after every step. The manual runs' events
 * (`TRIGGER`, `MANUAL_END`, `RETRY`, SPEC §19) are not generated: the paths give the scheduler's
 * own events only.
 *
 * A path is a list of machine events. The driver realises each one with the scheduler's own
 * means: `START` lets the task's slot arrive (the clock moves to it), `SUCCEED` / `FAIL` make the
 * running job succeed or fail, `CANCEL` calls `scheduler.cancel`, `PAUSE` / `RESUME` call
 * `scheduler.pause` / `scheduler.resume` (on a running task: the pause takes effect when the run
 * ends), `EXPIRE` moves the clock past a one-shot's deadline before a worker takes it. After each
 * step it compares the task's `status`, its `info` (attempt, run number, consecutive failures,
 * pause reason) and the new ledger records with what the machine says, replaying the events with
 * XState's pure `transition()`.
 *
 * **Example** (Every transition of a retrying, recurring task)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Schedule } from "@tickwork/runtime"
 * import { LifecyclePaths } from "@tickwork/runtime/testing"
 *
 * const task = { schedule: Schedule.fixedRate("1 hour"), retry: { maxRetries: 1 }, pauseAfterConsecutiveFailures: 2 }
 * const plan = LifecyclePaths.generate(LifecyclePaths.inputOf(task))
 * plan.paths.length // 38 paths, taking all 63 edges between 27 (state, counters) classes
 * const report = await Effect.runPromise(LifecyclePaths.check({ task }))
 * report.transitions // ["cancelled --CANCEL--> (ignored)", …, "scheduled --START--> running"]: all 15
 * ```
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { generate, type Input, inputOf, type TaskShape } from "./internal/paths.ts"
import { type PathMismatch, type PlayOptions, play, type TaskUnderTest } from "./internal/play.ts"
import * as TestScheduler from "./TestScheduler.ts"

// Generating paths and playing them are one module each; their public names are exported here,
// as they always were.
export {
  generate,
  type Input,
  inputOf,
  type Path,
  type Plan,
  type Step,
  type TaskShape,
} from "./internal/paths.ts"
export {
  PathMismatch,
  type PlannedOutcome,
  type PlayOptions,
  type PlayResult,
  play,
  type TaskUnderTest,
} from "./internal/play.ts"

// ------------------------------------------------------------------ checking every path

/**
 * Options of {@link check}: what to generate paths for (an {@link Input}, or the task's own
 * options through {@link inputOf}), the task to play them with, and the test layer's options.
 *
 * @category models
 * @since 0.1.0
 */
export interface CheckOptions<R = never> extends PlayOptions<R> {
  readonly input?: Input
  /**
   * Options of the fresh test layer each path is played on. Default `slowRunWarning: false`:
   * the gate runs are held while the clock moves.
   */
  readonly layer?: TestScheduler.Options
}

/**
 * What {@link check} covered.
 *
 * @category models
 * @since 0.1.0
 */
export interface Report {
  readonly input: Input
  readonly paths: number
  readonly steps: number
  /** The machine transitions the paths took (every one reachable for the input). */
  readonly transitions: ReadonlyArray<string>
  /** The edges between (state, counters) classes the paths took (every reachable one). */
  readonly edges: number
}

/**
 * Generates every path for a task and plays each one on a fresh `TestScheduler` layer, stopping
 * at the first {@link PathMismatch}. The task's job requirements `R` come from the caller.
 *
 * **Example** (A payment task with a fake gateway)
 *
 * ```ts
 * import { Context, Effect, Layer } from "effect"
 * import { Schedule } from "@tickwork/runtime"
 * import { LifecyclePaths } from "@tickwork/runtime/testing"
 *
 * // The app's service, and a fake whose answers the test controls.
 * class Gateway extends Context.Service<Gateway, { readonly charge: Effect.Effect<void, string> }>()("Gateway") {}
 * let down = false
 * const fake = Gateway.of({ charge: Effect.suspend(() => (down ? Effect.fail("503") : Effect.void)) })
 *
 * const report = await Effect.runPromise(
 *   LifecyclePaths.check({
 *     task: {
 *       schedule: Schedule.once("1 minute"),
 *       retry: { maxRetries: 3, base: "30 seconds" },
 *       job: (outcome) => {
 *         down = outcome === "fail" // the path decides; the job's own code does the rest
 *         return Gateway.use((g) => g.charge)
 *       },
 *     },
 *   }).pipe(Effect.provide(Layer.succeed(Gateway, fake))),
 * )
 * report.paths // every path walked against a real scheduler
 * ```
 *
 * @category runners
 * @since 0.1.0
 */
export const check = <R = never>(
  options: CheckOptions<R>,
): Effect.Effect<Report, PathMismatch, R> =>
  Effect.gen(function* () {
    const input =
      options.input ??
      (options.task?.schedule === undefined
        ? undefined
        : inputOf(options.task as TaskUnderTest<R> & TaskShape))
    if (input === undefined) {
      return yield* Effect.die(new Error("check needs an input, or a task with a schedule"))
    }
    const plan = generate(input)
    let steps = 0
    for (const path of plan.paths) {
      const result = yield* play(path, options).pipe(
        Effect.scoped,
        // Gates hold the workers while the clock moves to a slot (hours, for a cron task): not
        // slow runs worth a warning, unless the caller's layer asks for them.
        Effect.provide(TestScheduler.layer({ slowRunWarning: false, ...options.layer })),
        Effect.catchTag("InvalidOption", (e) => Effect.die(e)),
      )
      steps += result.steps
    }
    return {
      input,
      paths: plan.paths.length,
      steps,
      transitions: plan.transitions,
      edges: plan.edges.length,
    }
  })
