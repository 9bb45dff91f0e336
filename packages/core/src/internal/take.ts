/**
 * @internal
 * {@link movedAtTake}: core's take plan (SPEC §3, `Rules.takePlan`) applied to a kernel row whose
 * live heap entry surfaced: expire it, or move it through its window skips and coalesced slots.
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
 * past its deadline expired (the task is `failed`), or the row moved to a later slot (every
 * window skip and coalesce of the plan at once, a `skipped` occurrence per skip) and was pushed
 * back there, so runs due before it still go first (SPEC §4).
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
  const plan = Rules.takePlan(rows.rowView(i, extra), now, limit, extra.notBefore)
  switch (plan._tag) {
    // Stryker disable next-line StringLiteral: equivalent, the switch then returns undefined, which its one caller reads as false, as for a start
    case "Start":
      return false
    case "Expire": {
      // Stryker disable next-line CallExpression: equivalent, EXPIRE has no guard and no action: the step only confirms the edge whose target Rules.expire() names
      rows.load(i, extra)
      // Stryker disable next-line CallExpression: equivalent, as above
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
        deadline: plan.deadline,
        // When the run would have started: a stepping driver is behind the slot it takes.
        at: Math.max(slot, now, extra.notBefore),
      })
      finishRow(rows, breakers, i, Math.max(slot, now, extra.notBefore))
      return true
    }
    case "Move": {
      for (const step of plan.steps) {
        if (step._tag !== "Skip") continue
        rows.emit({
          kind: "skipped",
          id: rows.idOf(i),
          generation: g,
          cause: "window",
          ...step.skipped,
          nextSlot: step.slot,
          at: Math.max(step.from, now, extra.notBefore),
        })
      }
      // A skip drops what was merged before it; coalesced slots add to what is merged.
      extra.merged =
        plan.merged === undefined
          ? plan.skipped
            ? undefined
            : extra.merged
          : Rules.mergeDropped(plan.skipped ? undefined : extra.merged, plan.merged)
      extra.gridSlot = plan.slot
      rows.t.setSlot(i, plan.slot)
      rows.push(i, plan.slot)
      return true
    }
  }
}
