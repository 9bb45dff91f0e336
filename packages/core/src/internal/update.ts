/**
 * @internal
 * {@link applyUpdate}: `Kernel.update`'s changes, already validated, written to a live row
 * under the plan of `Rules.updateStep` (SPEC §15).
 */
import * as Breaker from "../Breaker.ts"
import { InvalidOption, type ScheduleError, show, unknownKey } from "../Errors.ts"
import * as Lifecycle from "../Lifecycle.ts"
import * as Rules from "../Rules.ts"
import type { TaskState } from "../Task.ts"
import type { Breakers } from "./breakers.ts"
import { type UpdateOptions, updateKeys } from "./kernelTypes.ts"
import { dropManual } from "./manual.ts"
import { resumeRow } from "./pause.ts"
import type { BreakerCell } from "./records.ts"
import type { Rows } from "./rows.ts"

const { RUNNING, PAUSED, DONE, RESUME } = Lifecycle
const NO_WINDOW = Rules.NO_WINDOW

/** @internal `Kernel.update` for the task `id`: every change checked, then applied (SPEC §15). */
export const updateTask = <J>(
  rows: Rows<J>,
  breakers: Breakers<J>,
  id: string,
  changes: UpdateOptions<J>,
  now: number,
): boolean | ScheduleError => {
  if (typeof changes !== "object" || changes === null) {
    return new InvalidOption({
      field: "changes",
      value: changes,
      message: `changes must be an object, got ${show(changes)}`,
    })
  }
  const unknown = unknownKey(changes, updateKeys)
  if (unknown !== undefined) return unknown
  const i = rows.lookup(id)
  if (i < 0) return false
  const s = rows.t.state(i)
  if (s >= DONE) return false
  const current = rows.t.extra(i)
  // ---- validate every change; nothing is written until all are good ----
  const valid = Rules.validateChanges(changes, now, {
    plan: current?.plan,
    windowMs: current?.windowMs ?? NO_WINDOW,
  })
  if (!("resolved" in valid)) return valid
  let breaker: BreakerCell | Breaker.Resolved | null | undefined
  if (changes.breaker === null) breaker = null
  else if (changes.breaker !== undefined) {
    const b = breakers.resolve(changes.breaker)
    if (b instanceof InvalidOption) return b
    breaker = b
  }
  applyUpdate(rows, breakers, i, changes, valid, breaker, now)
  return true
}

/**
 * @internal Writes `changes` (checked into `valid`; `breaker` the resolved new breaker, `null`
 * to leave it, `undefined` to keep it) to live row `i` at `now`. Nothing here can fail.
 */
export const applyUpdate = <J>(
  rows: Rows<J>,
  breakers: Breakers<J>,
  i: number,
  changes: UpdateOptions<J>,
  valid: Rules.ValidChanges,
  breaker: BreakerCell | Breaker.Resolved | null | undefined,
  now: number,
): void => {
  const { retry, tags, windowMs, resolved } = valid
  const rank = valid.rank ?? -1
  const s = rows.t.state(i)
  const extra = rows.ensureExtra(i)
  if ("job" in changes && changes.job !== undefined) rows.t.setJob(i, changes.job)
  if (retry !== undefined) extra.retry = retry
  if (changes.missedRuns !== undefined) extra.missedRuns = changes.missedRuns
  if (changes.pauseAfterConsecutiveFailures !== undefined)
    extra.pauseAfter = changes.pauseAfterConsecutiveFailures
  if (tags !== undefined) extra.tags = tags
  if (windowMs !== undefined) extra.windowMs = windowMs
  // A manual run that has not started gives way to the new schedule (SPEC §19.1).
  // Stryker disable next-line LogicalOperator: equivalent, a valid change has `resolved` exactly with a schedule
  if (resolved !== undefined && changes.schedule !== undefined) dropManual(rows, i)
  const step = Rules.updateStep(
    {
      state: Lifecycle.states[s] as TaskState,
      attempt: rows.t.attempt(i),
      rank: rows.t.rank(i),
      breaker: extra.breaker !== undefined,
    },
    {
      // Stryker disable next-line LogicalOperator: equivalent, a valid change has `resolved` exactly with a schedule
      schedule: resolved !== undefined && changes.schedule !== undefined,
      rank: rank >= 0 ? rank : undefined,
      breaker:
        breaker === undefined || breaker === extra.breaker
          ? "keep"
          : breaker === null
            ? // Stryker disable next-line StringLiteral: equivalent, updateStep reads only "keep" and "change"
              "remove"
            : "change",
    },
  )
  if (rank >= 0) rows.t.setRank(i, rank)
  if (step.schedule === "waits") {
    // The slot in progress (a run, or a pending retry of it) ends first.
    extra.restart = changes.schedule
  } else if (
    // Stryker disable next-line LogicalOperator: equivalent, the rules answer "now" only for a change with `resolved`
    step.schedule === "now" &&
    resolved !== undefined
  ) {
    extra.restart = undefined
    extra.plan = resolved.plan
    extra.gridSlot = resolved.first
    extra.merged = undefined
    // Stryker disable next-line UnaryOperator: equivalent, a resume point at or before 0 is never used
    extra.resumeFrom = -1
    rows.t.setSlot(i, resolved.first)
  }
  if (step.requeue) {
    // Push first: the new entry makes the old one dead before a compaction can look at it.
    rows.push(i, rows.t.slot(i))
    rows.kill()
  }
  if (step.leave || step.join) {
    if (step.leave) breakers.leave(i, extra.breaker as BreakerCell, now)
    extra.breaker = undefined
    if (step.join) {
      breakers.join(i, extra, breaker as BreakerCell | Breaker.Resolved, rows.idOf(i), now)
    }
    // Held by the breaker it left, and the new one (if any) does not hold it: unheld (or,
    // while it runs, the breaker's pause request is withdrawn).
    const cell = extra.breaker as BreakerCell | undefined
    // Stryker disable next-line LogicalOperator: equivalent, a task that joins without leaving had no breaker to hold it
    if (step.leave && Breaker.unheldOnLeave(cell?.status.state)) {
      const state = rows.t.state(i)
      if (state === PAUSED && extra.pausedReason === "breaker") resumeRow(rows, i, now)
      else if (state === RUNNING && extra.pauseRequest === "breaker") {
        // Stryker disable next-line CallExpression: equivalent, the edge of this step is not read
        rows.load(i, extra)
        // Stryker disable next-line CallExpression: equivalent, the edge of this step is not read
        Lifecycle.step(RUNNING, RESUME, rows.args)
        extra.pauseRequest = undefined
      }
    }
  }
}
