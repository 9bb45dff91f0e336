/**
 * @internal
 * Rows and the core's rules: a stored row read as the rules' `Rules.Row`, and the row updates
 * that store their decisions. Nothing here decides: every decision is a `Rules` call made by
 * the caller ("load row → decide → store row").
 */
import { Rules, type Task } from "@tickwork/core"
import type { Definition, RowUpdate, TaskRow } from "./model.ts"

/**
 * `row` as the rules read it, with the run's number `runNumber` (the START step's, once its run
 * started). `windowMs` is the layer's catch-up window (+Infinity for none): it applies to
 * recurring tasks without a window of their own (see {@link windowOf}).
 */
export const view = (row: TaskRow, windowMs: number, runNumber = row.runNumber): Rules.Row => ({
  plan: row.plan,
  slot: row.slot,
  dueAt: row.runAt,
  attempt: row.attempt,
  runNumber,
  consecutiveFailures: row.consecutiveFailures,
  retry: row.retry,
  missedRuns: row.missedRuns,
  pauseAfter: row.pauseAfter,
  windowMs: windowOf(row, windowMs),
  pauseRequest: row.state === "running" ? (row.pausedReason ?? undefined) : undefined,
  restart: row.restart,
  resumeFrom: row.resumeFrom,
})

/**
 * The catch-up window the rules apply to `row`: its own (a deadline for a one-shot, SPEC §3), or
 * else the layer's `windowMs` for a recurring task (+Infinity: none); ms or `Rules.NO_WINDOW`.
 */
export const windowOf = (row: Pick<TaskRow, "windowMs" | "plan">, windowMs: number): number =>
  row.windowMs !== null
    ? row.windowMs
    : row.plan === undefined || !Number.isFinite(windowMs)
      ? Rules.NO_WINDOW
      : windowMs

/**
 * A running row's lease deadline (epoch ms): its SQL `due_at` while it runs, after which any
 * process may claim it again. `undefined` in any other state (the column is then its `runAt`).
 */
export const leaseUntil = (row: Pick<TaskRow, "state" | "claimableAt">): number | undefined =>
  row.state === "running" ? row.claimableAt : undefined

/** The row's fields kept as they are, written back at `now`. */
const keep = (row: TaskRow, now: number): RowUpdate => ({
  state: row.state,
  slot: row.slot,
  runAt: row.runAt,
  claimableAt: row.runAt,
  attempt: row.attempt,
  runNumber: row.runNumber,
  consecutiveFailures: row.consecutiveFailures,
  deliveries: row.deliveries,
  leaseOwner: null,
  finishedAt: null,
  lastError: row.lastError,
  seq: row.seq,
  updatedAt: now,
  pausedReason: row.pausedReason,
  resumeFrom: row.resumeFrom,
})

/**
 * The row after its run (run number `runNumber`) was settled at `finishedAt`: `seq` is its push
 * order if it is due again, `error` the failure rendered.
 */
export const settled = (
  row: TaskRow,
  s: Rules.Settled,
  runNumber: number,
  finishedAt: number,
  error: string | null,
  seq: number,
): RowUpdate => ({
  state: s.state,
  slot: s.slot,
  runAt: s.nextSlot ?? row.runAt,
  claimableAt: s.nextSlot ?? row.runAt,
  attempt: s.attempt,
  runNumber,
  consecutiveFailures: s.consecutiveFailures,
  deliveries: 0,
  leaseOwner: null,
  finishedAt: s.nextSlot === undefined ? finishedAt : null,
  lastError: error ?? row.lastError,
  seq: s.nextSlot === undefined ? row.seq : seq,
  updatedAt: finishedAt,
  pausedReason: s.pausedReason ?? null,
  // The schedule's next slot was computed: a resumed retry's skip point is used up.
  resumeFrom: s.consumed ? -1 : row.resumeFrom,
})

/**
 * A claimed row handed back (no outcome: a closing scheduler, a lost session): as core's
 * HAND_BACK step says (SPEC §5.5), `scheduled` again, due at its `run_at`, or `paused` with the
 * pause requested while it was claimed (a running row's `pausedReason` is its request), its
 * pending run kept.
 */
export const handBack = (row: TaskRow, now: number, started: boolean): RowUpdate => {
  const back = Rules.handBack(row.pausedReason ?? undefined)
  return {
    ...keep(row, now),
    state: back.state,
    pausedReason: back.pausedReason ?? null,
    // A run that never started was not delivered.
    deliveries: started ? row.deliveries : Math.max(0, row.deliveries - 1),
  }
}

/**
 * A claimed row that cannot be read back into the rules' terms: it ends as core's UNREADABLE
 * step says (`failed`), saying why.
 */
export const unreadable = (row: TaskRow, now: number, error: unknown): RowUpdate => ({
  ...handBack(row, now, true),
  state: Rules.unreadable(),
  finishedAt: now,
  pausedReason: null,
  lastError: `the stored task cannot be completed: ${error instanceof Error ? error.message : String(error)}`,
})

/** A claimed row moved at claim time to `slot` (a new push, `seq`): claimed again in its turn. */
export const moved = (row: TaskRow, slot: number, now: number, seq: number): RowUpdate => ({
  ...keep(row, now),
  state: "scheduled",
  slot,
  runAt: slot,
  claimableAt: slot,
  deliveries: 0,
  seq,
})

/** A scheduled row paused (`Rules.pause` said `paused`): it keeps its slot. */
export const paused = (row: TaskRow, reason: Task.PauseReason, now: number): RowUpdate => ({
  ...keep(row, now),
  state: "paused",
  pausedReason: reason,
})

/** A running row whose pause is requested (or withdrawn, `null`): its run goes on. */
export const requested = (
  row: TaskRow,
  reason: Task.PauseReason | null,
  now: number,
): RowUpdate => ({
  ...keep(row, now),
  leaseOwner: row.leaseOwner,
  // Its run goes on: the lease it holds stays its claim time.
  claimableAt: leaseUntil(row) ?? row.claimableAt,
  pausedReason: reason,
})

/**
 * Paused row `row` resumed at `now` (a new push, `seq`) as core decides: `Rules.resume`, or with
 * a manual run waiting (a breaker held it, SPEC §19.1) `Rules.resumeManual`, which moves the
 * run set aside in `kept` and leaves the manual run due as it is. `windowMs` is the layer's
 * window (see {@link view}). Gives the update, the slots skipped, the slot the resume names
 * (the manual run's, or the resumed one's) and where the schedule goes on (`nextSlot`).
 */
export const resume = (
  row: TaskRow,
  windowMs: number,
  now: number,
  seq: number,
): {
  readonly update: RowUpdate
  readonly skipped: Rules.Resume["skipped"]
  readonly slot: number
  readonly nextSlot: number
} => {
  const k = row.kept
  if (k === undefined) {
    const r = Rules.resume(view(row, windowMs), now)
    return {
      update: resumed(row, r, now, seq),
      skipped: r.skipped,
      slot: r.slot,
      nextSlot: r.dueAt,
    }
  }
  const m = Rules.resumeManual(view(row, windowMs), k, now)
  const r = m.resume
  const kept = { ...m.kept, resumeFrom: r.resumeFrom >= 0 ? r.resumeFrom : k.resumeFrom }
  return {
    update: {
      ...keep(row, now),
      state: "scheduled",
      consecutiveFailures: r.consecutiveFailures,
      seq,
      pausedReason: null,
      kept,
    },
    skipped: r.skipped,
    slot: row.slot,
    nextSlot: r.dueAt,
  }
}

/** A paused row resumed as `r` decided (a new push, `seq`). */
export const resumed = (row: TaskRow, r: Rules.Resume, now: number, seq: number): RowUpdate => ({
  ...keep(row, now),
  state: "scheduled",
  slot: r.slot,
  runAt: r.dueAt,
  claimableAt: r.dueAt,
  consecutiveFailures: r.consecutiveFailures,
  seq,
  pausedReason: null,
  resumeFrom: r.resumeFrom >= 0 ? r.resumeFrom : row.resumeFrom,
})

/**
 * A claimed one-shot taken past its deadline (`Rules.take` said `Expire`): it ends as the
 * EXPIRE step says (`Rules.expire`: failed), its run not started.
 */
export const expired = (row: TaskRow, now: number, deadline: number): RowUpdate => ({
  ...keep(row, now),
  state: Rules.expire(),
  deliveries: Math.max(0, row.deliveries - 1),
  finishedAt: now,
  pausedReason: null,
  lastError: `expired: not started by its deadline ${deadline} (slot ${row.slot} + window ${row.windowMs} ms)`,
})

/**
 * A live row updated in place (SPEC §15) with definition `define`: a new schedule that takes
 * effect now moves it to `slot` (a new push, `seq`, as does a new priority); a running row keeps
 * its lease.
 */
export const updated = (
  row: TaskRow,
  now: number,
  moved: { readonly slot?: number | undefined; readonly seq?: number | undefined },
  define: Definition,
): RowUpdate => {
  const slot = moved.slot
  return {
    ...keep(row, now),
    leaseOwner: row.leaseOwner,
    claimableAt: leaseUntil(row) ?? slot ?? row.runAt,
    slot: slot ?? row.slot,
    runAt: slot ?? row.runAt,
    finishedAt: row.finishedAt,
    resumeFrom: slot === undefined ? row.resumeFrom : -1,
    seq: moved.seq ?? row.seq,
    define,
  }
}
