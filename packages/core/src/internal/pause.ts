/**
 * @internal
 * Pause and resume of one kernel row (SPEC §5, §15): the lifecycle's PAUSE and RESUME applied to
 * the rows, with the occurrences they report.
 */
import * as Lifecycle from "../Lifecycle.ts"
import * as Rules from "../Rules.ts"
import type { PauseReason, TaskState } from "../Task.ts"
import type { Breakers } from "./breakers.ts"
import type { Extras } from "./records.ts"
import type { Rows } from "./rows.ts"

const { SCHEDULED, RUNNING, PAUSED, RESUME } = Lifecycle

/**
 * @internal `Kernel.resume` for row `i`: a paused row resumes; a running one's requested pause
 * is withdrawn. False for any other row.
 */
export const resumeTask = <J>(rows: Rows<J>, i: number, now: number): boolean => {
  const s = rows.t.state(i)
  if (s === RUNNING) {
    const extra = rows.t.extra(i)
    if (extra === undefined) return false
    rows.load(i, extra)
    if (Lifecycle.step(RUNNING, RESUME, rows.args) === undefined) return false
    extra.pauseRequest = undefined
    return true
  }
  if (s !== PAUSED) return false
  resumeRow(rows, i, now)
  return true
}

/** @internal PAUSE for row `i` (see `Kernel.pause`). */
export const pauseRow = <J>(
  rows: Rows<J>,
  breakers: Breakers<J>,
  i: number,
  reason: PauseReason,
  now: number,
): boolean => {
  const s = rows.t.state(i)
  if (s !== SCHEDULED && s !== RUNNING && s !== PAUSED) return false
  const extra = rows.ensureExtra(i)
  const state = Lifecycle.states[s] as TaskState
  const step = Rules.pauseStep(
    { state, pausedReason: extra.pausedReason, pauseRequest: extra.pauseRequest },
    reason,
  )
  if (step === "Ignored") return false
  if (step === "Outranked") {
    if (s === PAUSED) extra.pausedReason = "manual"
    else extra.pauseRequest = "manual"
    return false
  }
  if (step === "Requested") {
    extra.pauseRequest = reason
    return true
  }
  rows.t.setState(i, PAUSED)
  rows.bump(SCHEDULED, -1)
  rows.bump(PAUSED, 1)
  rows.kill()
  extra.merged = undefined
  hold(rows, i, extra, reason, now)
  const cell = extra.breaker
  // A probe paused by hand: another held task probes instead (the breaker's plan says).
  if (cell !== undefined && cell.probe === i) breakers.pausedByHand(i, cell, now)
  return true
}

/** @internal Row `i` has entered `paused` for `reason`. */
export const hold = <J>(
  rows: Rows<J>,
  i: number,
  extra: Extras,
  reason: PauseReason,
  now: number,
): void => {
  extra.pausedReason = reason
  extra.pausedAt = now
  rows.emit({ kind: "paused", id: rows.idOf(i), generation: rows.t.gen(i), reason, at: now })
}

/**
 * @internal RESUME for a paused row `i` at `now`: computes its resume slot and pushes it. With a
 * manual run waiting (a breaker held it, SPEC §19.1), the resume moves the kept run and the
 * manual run is pushed as it was (`Rules.resumeManual`).
 */
export const resumeRow = <J>(rows: Rows<J>, i: number, now: number): void => {
  const extra = rows.t.extra(i) as Extras
  // Stryker disable next-line StringLiteral: equivalent, a paused row always has its reason
  const reason = extra.pausedReason ?? "manual"
  const kept = extra.kept
  const view = rows.rowView(i, extra)
  const manual =
    kept === undefined
      ? undefined
      : Rules.resumeManual(
          view,
          { slot: kept.gridSlot, dueAt: kept.dueAt, attempt: kept.attempt },
          now,
        )
  const r = manual === undefined ? Rules.resume(view, now) : manual.resume
  extra.consecutiveFailures = r.consecutiveFailures
  extra.pausedReason = undefined
  rows.t.setState(i, SCHEDULED)
  rows.bump(PAUSED, -1)
  rows.bump(SCHEDULED, 1)
  const id = rows.idOf(i)
  const g = rows.t.gen(i)
  if (r.skipped !== undefined) {
    rows.emit({
      kind: "skipped",
      id,
      generation: g,
      cause: reason === "breaker" ? "breaker" : "paused",
      ...r.skipped,
      nextSlot: r.dueAt,
      at: now,
    })
    if (r.resumeFrom >= 0) extra.resumeFrom = r.resumeFrom
  }
  let dueAt = r.dueAt
  // Stryker disable next-line LogicalOperator: equivalent, both are undefined or neither is
  if (manual === undefined || kept === undefined) {
    extra.gridSlot = r.slot
    rows.t.setSlot(i, r.dueAt)
  } else {
    extra.kept = { ...kept, gridSlot: manual.kept.slot, dueAt: manual.kept.dueAt }
    dueAt = manual.dueAt
  }
  rows.push(i, dueAt)
  rows.emit({ kind: "resumed", id, generation: g, reason, nextSlot: dueAt, at: now })
}
