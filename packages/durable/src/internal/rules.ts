/**
 * @internal
 * What happens to a claimed row, decided by the core's rules: the lifecycle machine
 * (`Lifecycle.step`), the next slot under the missed-run policy (`Schedule.nextAfterRun`),
 * retry backoff (`Retry.backoff`) and grid arithmetic (`MissedRun`). Nothing here re-states one
 * of those rules; this module only reads a row into the core's terms and writes the result back.
 */
import {
  Errors,
  Lifecycle,
  MissedRun,
  type Random,
  Retry,
  Schedule,
  type Task,
  Time,
} from "@tickwork/core"
import { Ledger } from "@tickwork/runtime"
import * as Spec from "../Spec.ts"
import type { EventEntry, RowUpdate, RunEntry, TaskRow } from "../TaskStore.ts"

/**
 * A claim-time decision that moves a row before it runs: to `slot` (due now or later; it goes
 * back to `scheduled` and is claimed again in its turn, as the kernel pushes a coalesced slot
 * back into its heap), or to `done` when the grid ended (`slot` undefined).
 */
export interface Move {
  readonly slot: number | undefined
  /** Slots older than the catch-up window. */
  readonly skipped: MissedRun.Dropped | undefined
  /** Slots merged into the run of `slot` (policy `coalesce`). */
  readonly merged: MissedRun.Dropped | undefined
}

const gridOf = (row: TaskRow): MissedRun.Grid | undefined => {
  const plan = Spec.plan(row.schedule)
  return plan !== undefined && (plan.kind === "fixed-rate" || plan.kind === "cron")
    ? plan.grid
    : undefined
}

/**
 * The claim-time decision for a grid task's first delivery of a late first attempt, or
 * `undefined` to run it as it is (a retry, a re-delivery after a crash, a one-shot or
 * fixed-delay task always runs as it is):
 * 1. slots older than `now - windowMs` are skipped; the task moves to the first grid slot inside
 *    the window;
 * 2. then, as the kernel does when it takes a late slot, `coalesce` moves the run to the latest
 *    grid slot `<= now`, merging the ones before it. `catch-up` runs each slot in turn (the next
 *    one is due at once when this run ends) and `skip` drops the ones that passed when this run
 *    ends — both by `Schedule.nextAfterRun`, at completion.
 */
export const atClaim = (row: TaskRow, now: number, windowMs: number): Move | undefined => {
  if (row.attempt !== 1 || row.deliveries !== 1 || row.slot >= now) return undefined
  const grid = gridOf(row)
  if (grid === undefined) return undefined
  let slot = row.slot
  let skipped: MissedRun.Dropped | undefined
  if (windowMs < now - slot) {
    const cutoff = now - windowMs
    const kept = grid.after(cutoff - 1)
    skipped = MissedRun.range(grid, slot, grid.atOrBefore(cutoff - 1) ?? slot)
    if (kept === undefined || kept > now) return { slot: kept, skipped, merged: undefined }
    slot = kept
  }
  let merged: MissedRun.Dropped | undefined
  if (row.missedRuns === "coalesce") {
    const latest = grid.atOrBefore(now)
    if (latest !== undefined && latest > slot) {
      merged = MissedRun.range(grid, slot, grid.atOrBefore(latest - 1) ?? slot)
      slot = latest
    }
  }
  return skipped === undefined && merged === undefined ? undefined : { slot, skipped, merged }
}

/** A row's lifecycle counters, as the machine's context. */
const contextOf = (row: TaskRow): Lifecycle.TaskContext => ({
  attempt: row.attempt,
  maxRetries: row.retry.maxRetries,
  runNumber: row.runNumber,
  consecutiveFailures: row.consecutiveFailures,
  pauseAfter: row.pauseAfter,
})

/** A failure, rendered for the ledger. */
export const renderOutcome = (outcome: Task.Outcome): string | null => {
  switch (outcome.kind) {
    case "succeeded":
      return null
    case "failed":
      return render(outcome.error)
    case "defect":
      return `defect: ${render(outcome.defect)}`
    case "interrupted":
      return "interrupted"
    case "timed-out":
      return `timed out after ${outcome.afterMs} ms`
  }
}

const render = (u: unknown): string => {
  if (typeof u === "object" && u !== null) {
    const tag = (u as { _tag?: unknown })._tag
    const message = (u as { message?: unknown }).message
    if (typeof message === "string" && message !== "") {
      return typeof tag === "string" ? `${tag}: ${message}` : message
    }
    if (typeof tag === "string") return tag
  }
  return Errors.show(u)
}

/** Everything a finished run writes. */
export interface RunResult {
  readonly update: RowUpdate
  readonly run: RunEntry
  readonly events: ReadonlyArray<EventEntry>
  /** The run as the runtime's ledger records runs. */
  readonly record: Task.RunRecord
}

/**
 * The lifecycle step of a finished run of `row` (as claimed), exactly as the kernel's
 * `complete` takes it: START then SUCCEED/FAIL through the compiled machine, the next slot from
 * `Schedule.nextAfterRun` (computed only if the machine asks), a retry at
 * `finishedAt + Retry.backoff`.
 */
export const afterRun = (
  row: TaskRow,
  run: {
    readonly owner: string
    readonly outcome: Task.Outcome
    readonly startedAt: number
    readonly finishedAt: number
    /** The push order to give the row if it is scheduled again. */
    readonly seq: number
  },
  random: Random.Random,
): RunResult => {
  const { outcome, finishedAt } = run
  const context = contextOf(row)
  Lifecycle.step(Lifecycle.SCHEDULED, Lifecycle.START, { context, event: { type: "START" } })
  const runNumber = context.runNumber
  const attempt = context.attempt
  const failed = outcome.kind !== "succeeded"
  let next: MissedRun.Next | undefined
  let computed = false
  const event = {
    type: failed ? ("FAIL" as const) : ("SUCCEED" as const),
    get nextSlot(): number | undefined {
      if (!computed) {
        computed = true
        const plan = Spec.plan(row.schedule)
        const n =
          plan === undefined
            ? undefined
            : Schedule.nextAfterRun(plan, row.missedRuns, row.slot, finishedAt)
        next = n !== undefined && "slot" in n ? n : undefined
      }
      return next?.slot
    },
  }
  const edge = Lifecycle.step(Lifecycle.RUNNING, failed ? Lifecycle.FAIL : Lifecycle.SUCCEED, {
    context,
    event,
  }) as Lifecycle.Edge
  const state = Lifecycle.states[edge.target] as Task.TaskState
  let slot = row.slot
  let runAt: number | null = null
  let continuation: Task.Continuation = "final"
  let dropped: MissedRun.Dropped | undefined
  if (edge.effect === "scheduleNext") {
    const n = next as MissedRun.Next
    slot = n.slot
    runAt = n.slot
    dropped = n.dropped
    continuation = "next"
  } else if (edge.effect === "scheduleRetry") {
    runAt = Math.min(
      finishedAt + Retry.backoff(row.retry, context.attempt - 1, random),
      Time.MAX_MS,
    )
    continuation = "retry"
  }
  const error = renderOutcome(outcome)
  const record: Task.RunRecord = {
    kind: continuation === "retry" ? "retried" : "ran",
    id: row.id as Task.TaskId,
    generation: row.generation,
    slot: row.slot,
    scheduledFor: row.runAt,
    startedAt: run.startedAt,
    attempt,
    runNumber,
    finishedAt,
    outcome,
    state,
    continuation,
    nextSlot: runAt ?? undefined,
    dropped,
    merged: undefined,
  }
  const events: Array<EventEntry> = []
  if (dropped !== undefined) {
    const m = Ledger.missed(record, dropped)
    events.push(missedEvent(m, row, run.owner))
  }
  return {
    update: {
      state,
      slot,
      runAt: runAt ?? row.runAt,
      dueAt: runAt ?? row.runAt,
      attempt: context.attempt,
      runNumber,
      consecutiveFailures: context.consecutiveFailures,
      deliveries: 0,
      leaseOwner: null,
      finishedAt: runAt === null ? finishedAt : null,
      lastError: error ?? row.lastError,
      seq: runAt === null ? row.seq : run.seq,
      updatedAt: finishedAt,
    },
    run: {
      taskId: row.id,
      generation: row.generation,
      slot: row.slot,
      attempt,
      runAt: row.runAt,
      startedAt: run.startedAt,
      finishedAt,
      outcome: outcome.kind,
      error,
      fence: row.fence,
      owner: run.owner,
      delivery: row.deliveries,
      state,
      nextRunAt: runAt,
    },
    events,
    record,
  }
}

/** A runtime ledger `coalesced`/`skipped` record as a store event. */
export const missedEvent = (m: Ledger.Missed, row: TaskRow, owner: string): EventEntry => ({
  taskId: row.id,
  generation: row.generation,
  kind: m.kind,
  firstSlot: m.first,
  lastSlot: m.last,
  count: m.count,
  cause: m.cause,
  at: m.at,
  fence: row.fence,
  owner,
  detail: m.exact ? null : "count is a lower bound",
})

/** The event for slots skipped because they were older than the catch-up window. */
export const windowEvent = (
  skipped: MissedRun.Dropped,
  row: TaskRow,
  owner: string,
  now: number,
  windowMs: number,
): EventEntry => ({
  taskId: row.id,
  generation: row.generation,
  kind: "skipped",
  firstSlot: skipped.first,
  lastSlot: skipped.last,
  count: skipped.count,
  cause: "window",
  at: now,
  fence: row.fence,
  owner,
  detail: `older than the catch-up window of ${windowMs} ms${skipped.exact ? "" : "; count is a lower bound"}`,
})

/** The row update that hands a claimed row back, due again at its `run_at`. */
export const release = (row: TaskRow, now: number, started: boolean): RowUpdate => ({
  state: "scheduled",
  slot: row.slot,
  runAt: row.runAt,
  dueAt: row.runAt,
  attempt: row.attempt,
  runNumber: row.runNumber,
  consecutiveFailures: row.consecutiveFailures,
  // A run that never started was not delivered.
  deliveries: started ? row.deliveries : Math.max(0, row.deliveries - 1),
  leaseOwner: null,
  finishedAt: null,
  lastError: row.lastError,
  seq: row.seq,
  updatedAt: now,
})

/** The row update for a claim-time {@link Move}: scheduled at `slot` (a new push), or done. */
export const parkAt = (
  row: TaskRow,
  slot: number | undefined,
  now: number,
  seq: number,
): RowUpdate => ({
  state: slot === undefined ? "done" : "scheduled",
  slot: slot ?? row.slot,
  runAt: slot ?? row.runAt,
  dueAt: slot ?? row.runAt,
  attempt: row.attempt,
  runNumber: row.runNumber,
  consecutiveFailures: row.consecutiveFailures,
  deliveries: 0,
  leaseOwner: null,
  finishedAt: slot === undefined ? now : null,
  lastError: row.lastError,
  seq,
  updatedAt: now,
})

/** The event recorded when a completion is rejected by its fence. */
export const fencedOutEvent = (
  row: TaskRow,
  owner: string,
  now: number,
  detail: string,
): EventEntry => ({
  taskId: row.id,
  generation: row.generation,
  kind: "fenced-out",
  firstSlot: row.slot,
  lastSlot: row.slot,
  count: 1,
  cause: null,
  at: now,
  fence: row.fence,
  owner,
  detail,
})
