/**
 * @internal
 * {@link shiftRows}: the kernel's time axis re-anchored after the wall clock stepped (SPEC §2).
 */
import * as Lifecycle from "../Lifecycle.ts"
import * as MissedRun from "../MissedRun.ts"
import type { Rows } from "./rows.ts"
import { WALL_SLOT, WALL_TASK } from "./table.ts"

const { SCHEDULED, RUNNING, PAUSED } = Lifecycle

/**
 * @internal Moves every delay-anchored time of the live rows by `delta` ms (see `Kernel.shift`);
 * wall-anchored ones (an `at` instant, a cron match) stay. A zero or unsafe `delta` changes nothing.
 */
export const shiftRows = <J>(rows: Rows<J>, delta: number): void => {
  if (delta === 0 || !Number.isSafeInteger(delta)) return
  const t = rows.t
  for (let i = 0; i < rows.top; i++) {
    const state = t.state(i)
    if (state !== SCHEDULED && state !== RUNNING && state !== PAUSED) continue
    const anchor = t.anchor(i)
    if (state !== RUNNING && (anchor & WALL_SLOT) === 0) t.setSlot(i, t.slot(i) + delta)
    if (anchor & WALL_TASK) continue
    const extra = t.extra(i)
    if (extra === undefined) continue
    extra.gridSlot += delta
    // The pending run a manual run stands in for (SPEC §19.1) comes back after it: it moves too.
    const kept = extra.kept
    if (kept !== undefined) {
      extra.kept = { ...kept, dueAt: kept.dueAt + delta, gridSlot: kept.gridSlot + delta }
    }
    const plan = extra.plan
    // The grid moves with its slots: the next slot is computed from the shifted grid slot (the
    // kept run's while a manual run, whose slot is off the grid, stands in for it).
    if (plan?.kind === "fixed-rate") {
      const gridSlot = extra.kept?.gridSlot ?? extra.gridSlot
      extra.plan = { ...plan, grid: MissedRun.periodic(gridSlot, plan.period) }
    }
  }
  rows.heap.shift(delta, (i, order) => rows.isLive(i, order) && (t.anchor(i) & WALL_SLOT) === 0)
}
