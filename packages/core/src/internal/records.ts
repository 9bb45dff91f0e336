/**
 * @internal
 * The kernel's per-task side object ({@link Extras}), per-breaker state ({@link BreakerCell}) and
 * the reused view of a row that the rules read ({@link RowView}). Plain records: only the kernel's
 * modules write them, within one synchronous step.
 */
import type * as Breaker from "../Breaker.ts"
import type { Dropped, MissedRunPolicy } from "../MissedRun.ts"
import * as Retry from "../Retry.ts"
import * as Rules from "../Rules.ts"
import type * as Schedule from "../Schedule.ts"
import type { Outcome, PauseReason } from "../Task.ts"
import type { WaitCause } from "./rules/limits.ts"

/** @internal Tags of a task that has none: one frozen array shared by all. */
export const NO_TAGS: ReadonlyArray<string> = Object.freeze([])

/** @internal Per-task data most tasks do not need; absent for a plain one-shot with a generated id. */
export class Extras {
  /** The caller's id, or `undefined` for a generated one. */
  id: string | undefined = undefined
  plan: Schedule.Plan | undefined = undefined
  /** The grid slot retries belong to and the next slot is computed from, epoch ms. */
  gridSlot = 0
  retry: Retry.Resolved = Retry.none
  missedRuns: MissedRunPolicy = "catch-up"
  pauseAfter = 0
  consecutiveFailures = 0
  lastFailure: Outcome | undefined = undefined
  scheduleError: unknown = undefined
  /** Grid slots merged into the pending run at take time (coalesce), until it starts. */
  merged: Dropped | undefined = undefined
  tags: ReadonlyArray<string> = NO_TAGS
  /** The catch-up window in ms, or {@link NO_WINDOW}. */
  windowMs = Rules.NO_WINDOW
  /** The task's breaker; it stays set after the task is final (for `info`), membership does not. */
  breaker: BreakerCell | undefined = undefined
  /** Why it is `paused`; undefined in any other state. */
  pausedReason: PauseReason | undefined = undefined
  /** A pause asked for while `running`, applied when the run ends. */
  pauseRequest: PauseReason | undefined = undefined
  /** When it entered `paused`, epoch ms. */
  pausedAt = 0
  /** A schedule change waiting for the slot in progress (a run, a pending retry) to end. */
  restart: Schedule.Schedule | undefined = undefined
  /**
   * Set when a held retry of a grid task resumed: grid slots before it were recorded as skipped,
   * so the slot after the retry is the first grid slot at or after it. Epoch ms, or -1.
   */
  // Stryker disable next-line UnaryOperator: equivalent, settle reads it as `>= 0` only, and grid slots at or before 0 are never past a task's slot
  resumeFrom = -1
  /**
   * The earliest start of its next run, epoch ms, or -1: set when a breaker's half-open time,
   * reached by a stepping driver ahead of its clock, let it through (it must not start earlier).
   */
  notBefore = -1
  /**
   * A manual run asked for and not yet ended (SPEC §19): `"trigger"` from `trigger` until its run
   * ends, `"slot"` likewise from a retry of one slot (SPEC §19.7), `"retry"` from `retry` until
   * its run starts (a retried slot is not skipped or expired by its window). Undefined otherwise.
   */
  manual: "trigger" | "slot" | "retry" | undefined = undefined
  /**
   * The pending run a trigger or a retry of one slot set aside, put back when the manual run
   * ends (SPEC §19.1); set exactly while `manual` is `"trigger"` or `"slot"`.
   */
  kept: Kept | undefined = undefined
  /** The last attempt of the slot a failed task failed on, for a retry's number (SPEC §19.2). */
  failedAttempt = 0
  /** Its flow-control scopes (`group:<name>`, `key:<key>`; SPEC §20), fixed when accepted. */
  scopes: ReadonlyArray<string> | undefined = undefined
  /** Its deduplication key (SPEC §20.3), fixed when accepted. */
  dedup: Rules.ResolvedDedup | undefined = undefined
  /** Its last wait on a limit; current only while its ticket is `waiting.order` (internal/limits). */
  waiting: Waiting | undefined = undefined
  /**
   * The scope cell that let its waiting run go back to the heap and counts it as about to start
   * (internal/limits), until it is taken: valid only while its heap entry `letGoOrder` is live.
   */
  letGoBy: object | undefined = undefined
  // Stryker disable next-line UnaryOperator: equivalent, written with `letGoBy` and read only while `letGoBy` is set
  letGoOrder = -1
  /** Its place in that cell's list of runs let go. */
  // Stryker disable next-line UnaryOperator: equivalent, written with `letGoBy` and read only while `letGoBy` is set
  letGoIndex = -1
}

/** @internal Why a row waits on a limit (SPEC §20), set when it is queued (internal/limits). */
export interface Waiting {
  readonly cause: WaitCause
  readonly scope: string
  /** The ticket (order key) the row had when queued. */
  readonly order: number
  /** When a rate-limited wait ends, epoch ms. */
  readonly until: number | undefined
  /** When it started waiting, epoch ms. */
  readonly since: number
}

/** @internal The pending run a trigger set aside: its due time, slot and attempt. */
export interface Kept {
  readonly dueAt: number
  readonly gridSlot: number
  readonly attempt: number
  readonly merged: Dropped | undefined
  readonly notBefore: number
}

/** @internal One circuit breaker's state; only the kernel changes it. */
export class BreakerCell {
  readonly name: string
  readonly shared: boolean
  policy: Breaker.Resolved
  status: Breaker.Status = { state: "closed", failures: 0, opens: 0 }
  openedAt: number | undefined = undefined
  /** When an open breaker goes half-open, epoch ms; +Infinity otherwise. */
  halfOpenAt = Number.POSITIVE_INFINITY
  /** The half-open breaker's probe: a row and its generation, or -1. */
  probe = -1
  probeGen = 0
  /** Rows of its live tasks, in the order they joined. */
  readonly members = new Set<number>()

  constructor(name: string, shared: boolean, policy: Breaker.Resolved) {
    this.name = name
    this.shared = shared
    this.policy = policy
  }
}

/** @internal A row as the rules read it; the kernel refills one instance for each decision. */
export class RowView implements Rules.Row {
  plan: Schedule.Plan | undefined = undefined
  slot = 0
  dueAt = 0
  attempt = 1
  runNumber = 0
  consecutiveFailures = 0
  retry: Retry.Resolved = Retry.none
  // Stryker disable next-line StringLiteral: equivalent, rowView writes every field before the rules read it
  missedRuns: MissedRunPolicy = "catch-up"
  pauseAfter = 0
  windowMs = Rules.NO_WINDOW
  pauseRequest: PauseReason | undefined = undefined
  restart: Schedule.Schedule | undefined = undefined
  // Stryker disable next-line UnaryOperator: equivalent, rowView writes every field before the rules read it
  resumeFrom = -1
}
