/**
 * @internal
 * {@link finishRow}: a row reaching a final state, recorded for retention.
 */
import type { Breakers } from "./breakers.ts"
import { HAS_EXTRA } from "./finalRing.ts"
import type { Extras } from "./records.ts"
import type { Rows } from "./rows.ts"

/**
 * @internal Records that row `i` reached a final state at `now`, for retention, drops its job
 * and its pause marks, and takes it out of its breaker.
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
  t.setJob(i, undefined)
  if (hasExtra) {
    const extra = t.extra(i) as Extras
    extra.pausedReason = undefined
    extra.pauseRequest = undefined
    if (extra.breaker !== undefined) breakers.leave(i, extra.breaker, now)
  }
}
