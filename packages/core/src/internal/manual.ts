/**
 * @internal
 * Manual runs of one kernel row (SPEC §19): the lifecycle's TRIGGER, MANUAL_END and RETRY
 * applied to the rows. The decisions (which states allow what) are `Rules.manualRefusal`; this
 * module moves the row's fields.
 *
 * A trigger sets the row's pending run aside ({@link Kept}) and pushes a run due at once; while
 * it waits and runs, the row's slot is the trigger's instant and its attempt 1. When that run ends,
 * whatever its outcome, the kept run is put back as it was: the grid, the retry count, the
 * failure policy and the breaker never see a manual run.
 */
import type { ManualRunRefused } from "../Errors.ts"
import * as Lifecycle from "../Lifecycle.ts"
import * as Rules from "../Rules.ts"
import type { Outcome, PauseReason, RunRecord, TaskState } from "../Task.ts"
import type { Breakers } from "./breakers.ts"
import { hold } from "./pause.ts"
import type { Extras } from "./records.ts"
import type { Rows } from "./rows.ts"
import type { Run } from "./run.ts"

const { SCHEDULED, RUNNING, PAUSED, FAILED, TRIGGER, MANUAL_END, RETRY } = Lifecycle

/**
 * @internal
 * TRIGGER for a `scheduled` row `i` with no manual run pending, at `now`: a trigger's run
 * (`Rules.triggered`), or with `slot` a retry of that failed slot (`Rules.slotRetried`, SPEC
 * §19.7). Both set the pending run aside the same way; they differ in the run only.
 */
export const triggerRow = <J>(
  rows: Rows<J>,
  i: number,
  now: number,
  slot?: { readonly slot: number; readonly runs: Rules.SlotRuns },
): void => {
  const t = rows.t
  const extra = rows.ensureExtra(i)
  // Stryker disable next-line CallExpression: equivalent, the edge of this step is not read
  rows.load(i, extra)
  // Stryker disable next-line CallExpression: equivalent, the edge of this step is not read
  Lifecycle.step(SCHEDULED, TRIGGER, rows.args)
  const kept = {
    dueAt: t.slot(i),
    gridSlot: extra.gridSlot,
    attempt: t.attempt(i),
    merged: extra.merged,
    notBefore: extra.notBefore,
  }
  extra.kept = kept
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, both read alike
  extra.manual = slot === undefined ? "trigger" : "slot"
  extra.merged = undefined
  extra.notBefore = -1
  // The manual run as core decides it for every store.
  const run =
    slot === undefined
      ? // Stryker disable next-line ObjectLiteral: equivalent, a trigger's run does not read the kept one
        Rules.triggered({ slot: kept.dueAt, dueAt: kept.dueAt, attempt: kept.attempt }, now).run
      : Rules.slotRetried(slot.slot, slot.runs, now)
  // A retried slot's attempt is > 1, so the take reads its slot here (its heap slot is its due time).
  extra.gridSlot = run.slot
  t.setAttempt(i, run.attempt)
  t.setSlot(i, run.dueAt)
  // Push first: the new entry makes the old one dead before a compaction can look at it.
  rows.push(i, run.dueAt)
  rows.kill()
}

/**
 * @internal
 * A `scheduled` row whose manual run has not started yet, or a `paused` one whose manual run
 * waits with it (a breaker's hold keeps it, SPEC §19.1), gets its kept run back (a pause by
 * hand, or a new schedule, drops the manual run). The heap entry is left for the caller to kill
 * or replace. Returns whether there was one.
 */
export const dropManual = <J>(rows: Rows<J>, i: number): boolean => {
  const extra = rows.t.extra(i)
  const s = rows.t.state(i)
  // Stryker disable next-line BooleanLiteral: equivalent, no caller reads the result
  if (extra?.kept === undefined || (s !== SCHEDULED && s !== PAUSED)) return false
  restore(rows, i, extra)
  // Stryker disable next-line BooleanLiteral: equivalent, no caller reads the result
  return true
}

const restore = <J>(rows: Rows<J>, i: number, extra: Extras): number => {
  const kept = extra.kept
  extra.manual = undefined
  extra.kept = undefined
  if (kept === undefined) return rows.t.slot(i)
  rows.t.setAttempt(i, kept.attempt)
  rows.t.setSlot(i, kept.dueAt)
  extra.gridSlot = kept.gridSlot
  extra.merged = kept.merged
  extra.notBefore = kept.notBefore
  return kept.dueAt
}

/**
 * @internal
 * MANUAL_END for row `i`, still `running` its manual run: the kept run is pushed back, or held
 * when a pause was requested meanwhile. Returns the run's record when `record` is set.
 */
export const endManual = <J>(
  rows: Rows<J>,
  run: Run<J>,
  outcome: Outcome,
  finishedAt: number,
  record: boolean,
): RunRecord | undefined => {
  const i = run.index
  const extra = rows.t.extra(i) as Extras
  rows.load(i, extra)
  const edge = Lifecycle.step(RUNNING, MANUAL_END, rows.args) as Lifecycle.Edge
  if (outcome.kind !== "succeeded") extra.lastFailure = outcome
  const reason = extra.pauseRequest
  extra.pauseRequest = undefined
  const dueAt = restore(rows, i, extra)
  rows.t.setState(i, edge.target)
  rows.bump(RUNNING, -1)
  rows.bump(edge.target, 1)
  if (edge.target === PAUSED) hold(rows, i, extra, reason as PauseReason, finishedAt)
  else rows.push(i, dueAt)
  rows.expire(finishedAt)
  if (!record) return undefined
  return Rules.record(run, outcome, finishedAt, {
    state: Lifecycle.states[edge.target] as TaskState,
    continuation: "next",
    nextSlot: dueAt,
    dropped: undefined,
    pausedReason: edge.target === PAUSED ? reason : undefined,
  })
}

/**
 * @internal
 * RETRY for a `failed` row `i` at `now` (SPEC §19.2): `scheduled` again, its failed slot's next
 * attempt due at once, with no automatic retry after it. The caller has taken it out of the
 * retention ring.
 */
export const retryRow = <J>(rows: Rows<J>, i: number, now: number): void => {
  const t = rows.t
  const extra = rows.ensureExtra(i)
  // Stryker disable next-line CallExpression: equivalent, the edge of this step is not read
  rows.load(i, extra)
  // Stryker disable next-line CallExpression: equivalent, the edge of this step is not read
  Lifecycle.step(FAILED, RETRY, rows.args)
  const r = Rules.retried(
    extra.failedAttempt,
    t.attempt(i),
    extra.plan !== undefined,
    extra.windowMs,
  )
  const attempt = r.attempt
  extra.windowMs = r.windowMs
  extra.failedAttempt = 0
  extra.manual = "retry"
  extra.consecutiveFailures = 0
  t.setAttempt(i, attempt)
  t.setState(i, SCHEDULED)
  rows.bump(FAILED, -1)
  rows.bump(SCHEDULED, 1)
  t.setSlot(i, now)
  rows.push(i, now)
}

/**
 * @internal `Kernel.retry` for a `failed` row `i` at `now` (SPEC §19.2): out of the retention
 * ring (it is live again and must not be evicted as final), {@link retryRow}, and back in its
 * breaker: a shared one as it is (§7.8), its own afresh.
 */
export const retryTask = <J>(
  rows: Rows<J>,
  breakers: Breakers<J>,
  i: number,
  now: number,
): void => {
  rows.ring.markStale(rows.t.ticket(i))
  retryRow(rows, i, now)
  const extra = rows.t.extra(i) as Extras
  const cell = extra.breaker
  if (cell !== undefined) {
    extra.breaker = undefined
    breakers.join(i, extra, cell.shared ? cell : cell.policy, rows.idOf(i), now)
  }
}

/**
 * @internal `Kernel.retry` given a slot (SPEC §19.7), for row `i` (-1: unknown) in `state`: core's
 * refusal, or the slot's next attempt pushed as a manual run (a trigger's, with its own run).
 */
export const retrySlot = <J>(
  rows: Rows<J>,
  i: number,
  id: string,
  state: string,
  slot: { readonly slot: number; readonly runs: Rules.SlotRuns | undefined },
  now: number,
): true | ManualRunRefused => {
  const extra = i < 0 ? undefined : rows.t.extra(i)
  const attempt = i < 0 ? 1 : rows.t.attempt(i)
  const facts: Rules.SlotRetry = {
    slot: slot.slot,
    recurring: extra?.plan !== undefined,
    // A pending retry's slot is its grid slot; a first attempt's is its heap slot.
    pendingSlot:
      state !== "scheduled"
        ? undefined
        : // Stryker disable next-line LogicalOperator: equivalent, a first attempt's grid slot is its heap slot
          attempt > 1 && extra !== undefined
          ? extra.gridSlot
          : rows.t.slot(i),
    runs: slot.runs,
  }
  const refused = Rules.manualRefusal("retry", id, state, extra?.manual !== undefined, facts)
  if (refused !== undefined) return refused
  triggerRow(rows, i, now, { slot: slot.slot, runs: slot.runs as Rules.SlotRuns })
  return true
}
