/**
 * @internal
 * The row every rule reads: one task's rule-relevant state, as any store keeps it. Re-exported by `Rules.ts`.
 */
import type { MissedRunPolicy } from "../../MissedRun.ts"
import type * as Retry from "../../Retry.ts"
import type * as Schedule from "../../Schedule.ts"
import type { PauseReason } from "../../Task.ts"

/**
 * A row's window when it has none (see {@link Row.windowMs}).
 *
 * @category models
 * @since 0.3.0
 */
export const NO_WINDOW = -1
/**
 * One task's rule-relevant state, as any store keeps it.
 *
 * @category models
 * @since 0.3.0
 */
export interface Row {
  /** The recurring plan; `undefined` for a one-shot. */
  readonly plan: Schedule.Plan | undefined
  /** The grid slot being worked on (a retry keeps it), epoch ms. */
  readonly slot: number
  /** When the pending attempt is due: the slot, or a retry's `failedAt + backoff`, epoch ms. */
  readonly dueAt: number
  /** 1-based attempt of the slot. */
  readonly attempt: number
  /** Runs started so far (the running one included once it has started). */
  readonly runNumber: number
  /** Slots in a row that failed after all retries. */
  readonly consecutiveFailures: number
  readonly retry: Retry.Resolved
  readonly missedRuns: MissedRunPolicy
  /** `pauseAfterConsecutiveFailures`; 0 = never. */
  readonly pauseAfter: number
  /** The catch-up window, ms, or {@link NO_WINDOW}. */
  readonly windowMs: number
  /** A pause asked for while the row runs, applied when its run ends. */
  readonly pauseRequest?: PauseReason | undefined
  /** A schedule change waiting for the slot in progress (a run, a pending retry) to end. */
  readonly restart?: Schedule.Schedule | undefined
  /**
   * Set when a held retry of a grid task resumed: the grid slots before it were recorded as
   * skipped, so the slot after the retry is the first grid slot at or after it. Epoch ms, or -1.
   */
  readonly resumeFrom?: number | undefined
}
