/**
 * @internal
 * The scheduler's layer options: the types `make` takes and the timing actor shares (public
 * through `Scheduler`, which re-exports them).
 */
import type { Task } from "@tickwork/core"

/**
 * How closing the scheduler treats pending and running work.
 *
 * @category models
 * @since 0.1.0
 */
export type ShutdownPolicy = "drain" | "cancel" | "interrupt"

/**
 * What closing the scheduler did.
 *
 * @category models
 * @since 0.1.0
 */
export interface ShutdownReport {
  readonly policy: ShutdownPolicy
  /**
   * Tasks still `scheduled` when it closed that did not run during the shutdown (`drain` leaves
   * them so). Each task is in one list of the report.
   */
  readonly pending: ReadonlyArray<Task.TaskId>
  /** Runs that finished during the shutdown, with any outcome but `interrupted`. */
  readonly finished: ReadonlyArray<Task.TaskId>
  /** Tasks the shutdown cancelled (pending ones, under `cancel` and `interrupt`). */
  readonly cancelled: ReadonlyArray<Task.TaskId>
  /** Runs interrupted by the shutdown (policy `interrupt`, or past `shutdownTimeout`). */
  readonly interrupted: ReadonlyArray<Task.TaskId>
  /**
   * Runs still going after `shutdownTimeout` and the grace that follows its interruption (a job
   * that masks interruption): the scheduler closed without them.
   */
  readonly abandoned: ReadonlyArray<Task.TaskId>
}
