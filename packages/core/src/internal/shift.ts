/**
 * @internal
 * {@link shiftRows}: the kernel's time axis re-anchored after the wall clock stepped (SPEC §2).
 */
import * as Lifecycle from "../Lifecycle.ts"
import * as MissedRun from "../MissedRun.ts"
import type { Breakers } from "./breakers.ts"
import type { DedupKeys } from "./dedup.ts"
import type { Flow } from "./limits.ts"
import type { Rows } from "./rows.ts"
import { WALL_SLOT, WALL_TASK } from "./table.ts"

const { SCHEDULED, RUNNING, PAUSED } = Lifecycle

/** @internal The kernel's tables besides its rows that keep times. */
export interface Timed<J> {
  readonly flow: Flow<J> | undefined
  readonly breakers: Breakers<J>
  readonly keys: DedupKeys<J>
}

/**
 * @internal Moves every delay-anchored time the kernel keeps by `delta` ms (see `Kernel.shift`):
 * the live rows' slots, grids, kept runs and start bounds, and the windows of flow control,
 * breakers and deduplication, which count elapsed time; wall-anchored ones (an `at` instant, a
 * cron match) stay. A zero or unsafe `delta` changes nothing. O(rows + queued + keys).
 */
export const shiftKernel = <J>(rows: Rows<J>, timed: Timed<J>, delta: number): void => {
  if (delta === 0 || !Number.isSafeInteger(delta)) return
  shiftRows(rows, delta)
  const t = rows.t
  const moves = (i: number, order: number) =>
    rows.isLive(i, order) && (t.anchor(i) & WALL_SLOT) === 0
  rows.heap.shift(delta, moves)
  timed.flow?.shift(delta, moves)
  timed.breakers.shift(delta)
  timed.keys.shift(delta)
}

const shiftRows = <J>(rows: Rows<J>, delta: number): void => {
  const t = rows.t
  for (let i = 0; i < rows.top; i++) {
    const state = t.state(i)
    if (state !== SCHEDULED && state !== RUNNING && state !== PAUSED) continue
    const anchor = t.anchor(i)
    if (state !== RUNNING && (anchor & WALL_SLOT) === 0) t.setSlot(i, t.slot(i) + delta)
    const extra = t.extra(i)
    if (extra === undefined) continue
    // A start bound and a limit's wait are instants reached by elapsed time, whatever the task.
    // Stryker disable next-line UnaryOperator: equivalent, -1 (none) moved by delta stays below every time it is compared with, which all moved alike
    if (extra.notBefore !== -1) extra.notBefore += delta
    const w = extra.waiting
    if (w !== undefined) {
      extra.waiting = {
        ...w,
        since: w.since + delta,
        until: w.until === undefined ? undefined : w.until + delta,
      }
    }
    // The pending run a manual run stands in for (SPEC §19.1) comes back after it: it moves too,
    // but for a calendar slot (its row's WALL_SLOT, which the manual run leaves as it was).
    const kept = extra.kept
    const wall = (anchor & WALL_TASK) !== 0
    if (kept !== undefined) {
      extra.kept = {
        ...kept,
        dueAt: (anchor & WALL_SLOT) === 0 ? kept.dueAt + delta : kept.dueAt,
        gridSlot: wall ? kept.gridSlot : kept.gridSlot + delta,
        // Stryker disable next-line UnaryOperator: equivalent, as for the row's own start bound above
        notBefore: kept.notBefore === -1 ? -1 : kept.notBefore + delta,
      }
    }
    if (wall) continue
    extra.gridSlot += delta
    const plan = extra.plan
    // The grid moves with its slots: the next slot is computed from the shifted grid slot (the
    // kept run's while a manual run, whose slot is off the grid, stands in for it).
    if (plan?.kind === "fixed-rate") {
      const gridSlot = extra.kept?.gridSlot ?? extra.gridSlot
      extra.plan = { ...plan, grid: MissedRun.periodic(gridSlot, plan.period) }
    }
  }
}
