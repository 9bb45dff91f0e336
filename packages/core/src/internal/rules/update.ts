/**
 * @internal
 * An update of a live task (SPEC §15) as one step: when a new schedule starts, whether the task
 * goes back into the queue, and whether it moves between breakers. Re-exported by `Rules.ts`.
 */
import type { TaskState } from "../../Task.ts"
import { scheduleChangeWaits } from "./take.ts"

/**
 * What an update does beyond writing the new options, as {@link updateStep} decides it.
 *
 * @category models
 * @since 0.4.0
 */
export interface UpdateStep {
  /**
   * The new schedule: `"none"` (no change), `"now"` (it starts now, at its first slot as if
   * scheduled now), `"waits"` (kept as the row's `restart` until the slot in progress — a run, a
   * pending retry — ends; then `settle` starts it).
   */
  readonly schedule: "none" | "now" | "waits"
  /** A scheduled task moved to a new slot or priority goes back into the queue (SPEC §4). */
  readonly requeue: boolean
  /** It leaves its current breaker. */
  readonly leave: boolean
  /** It joins the breaker the change names (then `Breaker.step`'s `Joined` applies). */
  readonly join: boolean
}

/**
 * The update of a task in `state` at `attempt` with priority rank `rank` (and a breaker or not):
 * `change.schedule` says a new schedule is given, `change.rank` a new priority's rank,
 * `change.breaker` whether the breaker is kept, removed (`null`) or changed (a name or a policy
 * of its own: always a new breaker for the task). After the move, a task its old breaker held is
 * unheld unless the new one holds it (`Breaker.unheldOnLeave`). Pure.
 *
 * **Example** (A running task's new schedule waits; its new priority does not re-queue it)
 *
 * ```ts
 * import { Rules } from "@tickwork/core"
 * Rules.updateStep(
 *   { state: "running", attempt: 1, rank: 1, breaker: false },
 *   { schedule: true, rank: 0, breaker: "keep" },
 * ) // { schedule: "waits", requeue: false, leave: false, join: false }
 * ```
 *
 * @category combinators
 * @since 0.4.0
 */
export const updateStep = (
  task: {
    readonly state: TaskState
    readonly attempt: number
    readonly rank: number
    readonly breaker: boolean
  },
  change: {
    readonly schedule: boolean
    readonly rank: number | undefined
    readonly breaker: "keep" | "remove" | "change"
  },
): UpdateStep => {
  const schedule = !change.schedule
    ? "none"
    : scheduleChangeWaits(task.state, task.attempt)
      ? "waits"
      : "now"
  const moved = schedule === "now" || (change.rank !== undefined && change.rank !== task.rank)
  return {
    schedule,
    requeue: task.state === "scheduled" && moved,
    leave: task.breaker && change.breaker !== "keep",
    join: change.breaker === "change",
  }
}
