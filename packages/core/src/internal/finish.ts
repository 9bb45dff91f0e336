/**
 * @internal
 * {@link finishRow}: a row reaching a final state, recorded for retention; {@link cancelRow},
 * the one way to it that is not a run's outcome.
 */
import * as Lifecycle from "../Lifecycle.ts"
import type { Breakers } from "./breakers.ts"
import { HAS_EXTRA } from "./finalRing.ts"
import type { Extras } from "./records.ts"
import type { Rows } from "./rows.ts"

/**
 * @internal Records that row `i` reached a final state at `now`, for retention, drops its job
 * (but a failed task's) and its pause and manual-run marks, and takes it out of its breaker.
 */
export const finishRow = <J>(
  rows: Rows<J>,
  breakers: Breakers<J>,
  i: number,
  now: number,
): void => {
  const t = rows.t
  const hasExtra = t.hasExtra(i)
  t.setTicket(i, rows.ring.push(i, t.state(i) | (hasExtra ? HAS_EXTRA : 0), now))
  // A failed task keeps its job while retained: `retry` runs it again (SPEC §19.2).
  if (t.state(i) !== Lifecycle.FAILED) t.setJob(i, undefined)
  if (hasExtra) {
    const extra = t.extra(i) as Extras
    extra.pausedReason = undefined
    extra.pauseRequest = undefined
    extra.manual = undefined
    extra.kept = undefined
    if (extra.breaker !== undefined) breakers.leave(i, extra.breaker, now)
  }
}

/**
 * @internal CANCEL for row `i` at `now` (see `Kernel.cancel`): true when the row was `scheduled`,
 * `running` or `paused`. A scheduled row's heap entry dies in place.
 */
export const cancelRow = <J>(
  rows: Rows<J>,
  breakers: Breakers<J>,
  i: number,
  now: number,
): boolean => {
  const s = rows.t.state(i)
  const edge = Lifecycle.step(s, Lifecycle.CANCEL, rows.args)
  if (edge === undefined) return false
  rows.t.setState(i, edge.target)
  rows.bump(s, -1)
  rows.bump(edge.target, 1)
  if (s === Lifecycle.SCHEDULED) {
    rows.kill()
  }
  finishRow(rows, breakers, i, now)
  rows.expire(now)
  return true
}
