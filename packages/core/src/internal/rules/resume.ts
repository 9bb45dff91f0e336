/**
 * @internal
 * Pause and resume of one row (SPEC §15): the slot a paused task continues with and the slots it skipped. Re-exported by `Rules.ts`.
 */
import * as Lifecycle from "../../Lifecycle.ts"
import type { Dropped } from "../../MissedRun.ts"
import * as MissedRun from "../../MissedRun.ts"
import type { PauseReason, TaskState } from "../../Task.ts"
import type { Row } from "./row.ts"

/**
 * Where a paused row continues if resumed at `now` (SPEC §15), and the grid slots that passed
 * while it was paused: a held retry keeps its due time; a one-shot its slot; a grid the first
 * slot `>= now`; fixed delay (and custom) `max(held slot, now)`. Pure.
 *
 * @category models
 * @since 0.3.0
 */
export interface Resume {
  /** When its next attempt is due. */
  readonly dueAt: number
  /** The grid slot it works on: unchanged for a held retry, else `dueAt`. */
  readonly slot: number
  readonly skipped: Dropped | undefined
  /** It continues with a held retry. */
  readonly retry: boolean
  /** The failure policy's count starts afresh. */
  readonly consecutiveFailures: number
  /**
   * `now` when a held retry resumes after grid slots were skipped (store it as
   * {@link Row.resumeFrom}: the slot after the retry is then the first grid slot at or after
   * it); -1 otherwise (keep the row's).
   */
  readonly resumeFrom: number
}

/**
 * The RESUME decision for a paused row at `now` (SPEC §15). See {@link Resume}. Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const resume = (row: Row, now: number): Resume => {
  const held = row.dueAt
  const plan = row.plan
  const grid = plan !== undefined && (plan.kind === "fixed-rate" || plan.kind === "cron")
  // Stryker disable next-line ObjectLiteral: equivalent, RESUME only sets consecutiveFailures (to 0), which is all that is read back
  const ctx: Lifecycle.TaskContext = {
    attempt: row.attempt,
    maxRetries: row.retry.maxRetries,
    runNumber: row.runNumber,
    consecutiveFailures: row.consecutiveFailures,
    pauseAfter: row.pauseAfter,
  }
  Lifecycle.step(Lifecycle.PAUSED, Lifecycle.RESUME, { context: ctx, event: RESUME_EVENT })
  const consecutiveFailures = ctx.consecutiveFailures
  if (row.attempt > 1) {
    // A held retry keeps its due time; the grid slots after its slot that passed are skipped.
    let skipped: Dropped | undefined
    if (grid) {
      const first = plan.grid.after(row.slot)
      const last = plan.grid.atOrBefore(now - 1)
      if (first !== undefined && last !== undefined && first <= last)
        skipped = MissedRun.range(plan.grid, first, last)
    }
    return {
      dueAt: held,
      slot: row.slot,
      skipped,
      retry: true,
      consecutiveFailures,
      resumeFrom: skipped === undefined ? -1 : now,
    }
  }
  if (plan === undefined || (grid && held >= now))
    return {
      dueAt: held,
      slot: held,
      skipped: undefined,
      retry: false,
      consecutiveFailures,
      resumeFrom: -1,
    }
  if (grid) {
    const last = plan.grid.atOrBefore(now - 1) ?? held
    // A grid with no slot left keeps its held slot: due at once, it then ends as usual.
    const slot = plan.grid.after(now - 1) ?? held
    return {
      dueAt: slot,
      slot,
      skipped: MissedRun.range(plan.grid, held, last),
      retry: false,
      consecutiveFailures,
      resumeFrom: -1,
    }
  }
  const slot = Math.max(held, now)
  return {
    dueAt: slot,
    slot,
    skipped: undefined,
    retry: false,
    consecutiveFailures,
    resumeFrom: -1,
  }
}

const RESUME_EVENT: Lifecycle.TaskEvent = { type: "RESUME" }

/**
 * The PAUSE decision for a row in `state` (SPEC §5, §15): `paused` at once when `scheduled`;
 * `requested` when `running` (the run finishes and reports, then the task is paused — pass the
 * request to {@link settle} as {@link Row.pauseRequest}); `ignored` otherwise (already paused, a
 * pause already requested, or final). Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const pause = (
  state: TaskState,
  pauseRequested = false,
): "paused" | "requested" | "ignored" => {
  const s = Lifecycle.states.indexOf(state)
  const edge = Lifecycle.step(s, Lifecycle.PAUSE, {
    context: {
      attempt: 1,
      maxRetries: 0,
      runNumber: 0,
      consecutiveFailures: 0,
      pauseAfter: 0,
      pauseRequested,
    },
    event: PAUSE_EVENT,
  })
  if (edge === undefined) return "ignored"
  return edge.target === Lifecycle.PAUSED ? "paused" : "requested"
}

const PAUSE_EVENT: Lifecycle.TaskEvent = { type: "PAUSE" }

/**
 * What a pause for `reason` does to a task (SPEC §5, §7, §15), as {@link pauseStep} decides it.
 *
 * - `Paused`: a scheduled task becomes `paused` for `reason` at once (its slot is kept);
 * - `Requested`: a running task will be paused for `reason` when its run ends;
 * - `Outranked`: a pause by hand of a task its breaker or failure policy holds (or will hold
 *   when its run ends): its reason becomes `manual`, so the breaker's closing no longer unholds
 *   it; nothing else moves;
 * - `Ignored`: already paused or going to be for `reason` or by hand, or final.
 *
 * @category models
 * @since 0.3.0
 */
export type PauseStep = "Paused" | "Requested" | "Outranked" | "Ignored"

/**
 * The pause of a task in `state` (with its current `pausedReason`, or the `pauseRequest` of a
 * running one) for `reason`: a pause by hand outranks a breaker's or the failure policy's. Pure.
 *
 * **Example** (A task its breaker holds, paused by hand)
 *
 * ```ts
 * import { Rules } from "@tickwork/core"
 * Rules.pauseStep({ state: "paused", pausedReason: "breaker", pauseRequest: undefined }, "manual") // "Outranked"
 * Rules.pauseStep({ state: "scheduled", pausedReason: undefined, pauseRequest: undefined }, "breaker") // "Paused"
 * ```
 *
 * @category combinators
 * @since 0.3.0
 */
export const pauseStep = (
  task: {
    readonly state: TaskState
    readonly pausedReason: PauseReason | null | undefined
    readonly pauseRequest: PauseReason | null | undefined
  },
  reason: PauseReason,
): PauseStep => {
  const requested = task.state === "running" ? task.pauseRequest : undefined
  const decision = pause(task.state, requested !== undefined && requested !== null)
  if (decision === "paused") return "Paused"
  if (decision === "requested") return "Requested"
  const current = task.state === "paused" ? task.pausedReason : requested
  return reason === "manual" && (current === "breaker" || current === "failures")
    ? "Outranked"
    : "Ignored"
}
