/**
 * What a run is inside Effect (SPEC §16): the {@link CurrentRun} service a job can read, the
 * failure a run's timeout raises, and how a run's `Exit` becomes its {@link Task.Outcome} with
 * the `Cause` kept.
 *
 * **Example** (A job that reads its run from the context)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Run } from "@tickwork/runtime"
 *
 * const job = Effect.gen(function* () {
 *   const run = yield* Run.CurrentRun
 *   yield* Effect.log(`slot ${run.slot}, attempt ${run.attempt}`)
 * })
 * ```
 *
 * @since 0.1.0
 */
import { Task } from "@tickwork/core"
import { Cause, Context, Exit, Option, Result } from "effect"

/**
 * The run a job is part of: its task id, slot, due time, start, attempt and run number. Every
 * run provides it, so code deep inside a job can read it without passing it down.
 *
 * @category services
 * @since 0.1.0
 */
export class CurrentRun extends Context.Service<CurrentRun, Task.RunInfo>()(
  "@tickwork/runtime/CurrentRun",
) {}

/**
 * The failure a run's timeout raises. Only the scheduler makes it, so no job can report
 * `timed-out` by accident.
 *
 * @category errors
 * @since 0.1.0
 */
export class RunTimedOut {
  /** The run's timeout, in ms. */
  readonly afterMs: number
  constructor(afterMs: number) {
    this.afterMs = afterMs
  }
}

/**
 * The outcome of a run's exit (SPEC §6), keeping the exit's `Cause`: a typed failure is
 * `failed`, a {@link RunTimedOut} failure `timed-out`, a defect `defect`, and an exit with only
 * interruptions `interrupted`. O(size of the cause).
 *
 * @category constructors
 * @since 0.1.0
 */
export const outcome = (exit: Exit.Exit<unknown, unknown>): Task.Outcome => {
  if (Exit.isSuccess(exit)) {
    return exit.value === undefined ? Task.succeeded : { kind: "succeeded", value: exit.value }
  }
  const cause = exit.cause
  const error = Cause.findErrorOption(cause)
  if (Option.isSome(error)) {
    return error.value instanceof RunTimedOut
      ? { kind: "timed-out", afterMs: error.value.afterMs, cause }
      : { kind: "failed", error: error.value, cause }
  }
  const defect = Cause.findDefect(cause)
  if (Result.isSuccess(defect)) return { kind: "defect", defect: defect.success, cause }
  return { kind: "interrupted", cause }
}
