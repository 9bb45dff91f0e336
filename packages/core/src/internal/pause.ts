/**
 * @internal
 * Pause and resume of one kernel row (SPEC §5, §15): the lifecycle's PAUSE and RESUME applied to
 * the rows, with the occurrences they report.
 */
import * as Lifecycle from "../Lifecycle.ts"
import * as Rules from "../Rules.ts"
import type { PauseReason } from "../Task.ts"
import type { Breakers } from "./breakers.ts"
import type { Extras } from "./records.ts"
import type { Rows } from "./rows.ts"

const { SCHEDULED, RUNNING, PAUSED, PAUSE } = Lifecycle

/** @internal PAUSE for row `i` (see `Kernel.pause`). */
export const pauseRow = <J>(
  rows: Rows<J>,
  breakers: Breakers<J>,
  i: number,
  reason: PauseReason,
  now: number,
): boolean => {
  const s = rows.t.state(i)
  if (s === PAUSED) {
    const extra = rows.t.extra(i) as Extras
    if (reason === "manual") extra.pausedReason = "manual"
    return false
  }
  if (s !== SCHEDULED && s !== RUNNING) return false
  const extra = rows.ensureExtra(i)
  rows.load(i, extra)
  if (Lifecycle.step(s, PAUSE, rows.args) === undefined) {
    // Running, with a pause already requested: a pause by hand outranks the breaker's.
    if (reason === "manual") extra.pauseRequest = "manual"
    return false
  }
  if (s === RUNNING) {
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
  if (cell !== undefined && cell.probe === i && cell.probeGen === rows.t.gen(i)) {
    // The probe was paused by hand: another held task probes instead.
    cell.probe = -1
    breakers.pickProbe(cell, now, undefined)
  }
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

/** @internal RESUME for a paused row `i` at `now`: computes its resume slot and pushes it. */
export const resumeRow = <J>(rows: Rows<J>, i: number, now: number): void => {
  const extra = rows.t.extra(i) as Extras
  const reason = extra.pausedReason ?? "manual"
  const r = Rules.resume(rows.rowView(i, extra), now)
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
  extra.gridSlot = r.slot
  rows.t.setSlot(i, r.dueAt)
  rows.push(i, r.dueAt)
  rows.emit({ kind: "resumed", id, generation: g, reason, nextSlot: r.dueAt, at: now })
}
