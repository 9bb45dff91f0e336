/**
 * @internal
 * {@link movedAtTake}: the take-time decision (SPEC §3) applied to a kernel row whose live heap
 * entry surfaced: expire it, skip it by its window, or coalesce it to a later slot.
 */
import * as Lifecycle from "../Lifecycle.ts"
import * as Rules from "../Rules.ts"
import type { Breakers } from "./breakers.ts"
import { finishRow } from "./finish.ts"
import type { Extras } from "./records.ts"
import type { Rows } from "./rows.ts"

const { SCHEDULED, EXPIRE } = Lifecycle

/**
 * @internal The take-time decision for a live entry of row `i` (generation `g`) due at `slot`,
 * taken at `now` by a driver stepping to `limit`: true when the run is not started — a one-shot
 * past its deadline expired (the task is `failed`), or the row moved to a later slot (skipped
 * by its window, or coalesced) and was pushed back there, so runs due before it still go first
 * (SPEC §4).
 */
export const movedAtTake = <J>(
  rows: Rows<J>,
  breakers: Breakers<J>,
  i: number,
  g: number,
  extra: Extras,
  slot: number,
  now: number,
  limit: number,
): boolean => {
  const take = Rules.take(rows.rowView(i, extra), now, limit, extra.notBefore)
  switch (take._tag) {
    case "Start":
      return false
    case "Expire": {
      rows.load(i, extra)
      Lifecycle.step(SCHEDULED, EXPIRE, rows.args)
      const expired = Lifecycle.states.indexOf(Rules.expire())
      rows.t.setState(i, expired)
      rows.bump(SCHEDULED, -1)
      rows.bump(expired, 1)
      rows.emit({
        kind: "expired",
        id: rows.idOf(i),
        generation: g,
        slot: extra.gridSlot,
        scheduledFor: slot,
        attempt: rows.t.attempt(i),
        deadline: take.deadline,
        // When the run would have started: a stepping driver is behind the slot it takes.
        at: Math.max(slot, now, extra.notBefore),
      })
      finishRow(rows, breakers, i, Math.max(slot, now, extra.notBefore))
      return true
    }
    case "Skip": {
      rows.emit({
        kind: "skipped",
        id: rows.idOf(i),
        generation: g,
        cause: "window",
        ...take.skipped,
        nextSlot: take.slot,
        at: Math.max(slot, now, extra.notBefore),
      })
      extra.merged = undefined
      break
    }
    case "Coalesce": {
      const merged = take.merged
      extra.merged =
        extra.merged === undefined
          ? merged
          : {
              first: extra.merged.first,
              last: merged.last,
              count: extra.merged.count + merged.count,
              exact: extra.merged.exact && merged.exact,
            }
      break
    }
  }
  extra.gridSlot = take.slot
  rows.t.setSlot(i, take.slot)
  rows.push(i, take.slot)
  return true
}
