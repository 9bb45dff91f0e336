/**
 * @internal
 * A due run is taken: it starts, or it moves first (catch-up window, coalesce; SPEC §3). Re-exported by `Rules.ts`.
 */
import * as Lifecycle from "../../Lifecycle.ts"
import type { Dropped } from "../../MissedRun.ts"
import * as MissedRun from "../../MissedRun.ts"
import type { TaskState } from "../../Task.ts"
import { MAX_MS } from "../../Time.ts"
import { NO_WINDOW, type Row } from "./row.ts"

/**
 * What happens when a due run is taken (SPEC §3):
 * - `Start`: it starts now;
 * - `Expire`: a one-shot past its deadline (`slot + window`): it does not run, the task ends
 *   `failed`;
 * - `Skip`: grid slots more than the window late are skipped (cause `window`); the row moves to
 *   `slot`, the first grid slot inside the window, and is taken again in its turn;
 * - `Coalesce`: later grid slots passed while this one waited; one run stands for all of them,
 *   at `slot` (the latest), and the earlier ones are `merged` into it. The row moves to `slot` and
 *   is taken again in its turn, so runs due before it still go first (SPEC §4).
 *
 * @category models
 * @since 0.3.0
 */
export type Take =
  | { readonly _tag: "Start" }
  | { readonly _tag: "Expire"; readonly deadline: number }
  | { readonly _tag: "Skip"; readonly skipped: Dropped; readonly slot: number }
  | { readonly _tag: "Coalesce"; readonly merged: Dropped; readonly slot: number }

const START: Take = { _tag: "Start" }

/**
 * The decision for a due run of `row` taken at `now` (SPEC §3): the catch-up window, then the
 * `coalesce` policy for a late grid slot. `limit` is the latest instant the caller takes runs
 * for (a stepping driver's end time; `now` otherwise): a coalesced slot is never later than
 * `min(now, limit)`. `notBefore` is the earliest start of the run, or -1. Pure.
 *
 * **Example** (A coalescing task found 25 ms late)
 *
 * ```ts
 * import { Retry, Rules, Schedule } from "@tickwork/core"
 * const r = Schedule.resolve(Schedule.fixedRate(10), 0) as Schedule.Resolved
 * const row = {
 *   plan: r.plan, slot: 0, dueAt: 0, attempt: 1, runNumber: 0, consecutiveFailures: 0,
 *   retry: Retry.none, missedRuns: "coalesce", pauseAfter: 0, windowMs: Rules.NO_WINDOW,
 * } as const
 * Rules.take(row, 25) // { _tag: "Coalesce", slot: 20, merged: { first: 0, last: 10, count: 2, exact: true } }
 * ```
 *
 * @category combinators
 * @since 0.3.0
 */
export const take = (row: Row, now: number, limit: number = now, notBefore = -1): Take => {
  const plan = row.plan
  const grid = plan !== undefined && (plan.kind === "fixed-rate" || plan.kind === "cron")
  const due = row.dueAt
  if (row.windowMs !== NO_WINDOW) {
    const startAt = Math.max(due, now, notBefore)
    if (plan === undefined) {
      const deadline = row.slot + row.windowMs
      if (startAt > deadline) return { _tag: "Expire", deadline }
    } else if (grid && row.attempt === 1 && startAt - due > row.windowMs) {
      const cutoff = startAt - row.windowMs
      const last = plan.grid.atOrBefore(cutoff - 1) ?? due
      // A grid with no slot left inside the window waits at the end of time.
      const slot = plan.grid.after(cutoff - 1) ?? MAX_MS
      return { _tag: "Skip", skipped: MissedRun.range(plan.grid, due, last), slot }
    }
  }
  if (grid && due < now && row.missedRuns === "coalesce" && row.attempt === 1) {
    const latest = plan.grid.atOrBefore(Math.min(now, limit))
    if (latest !== undefined && latest > due) {
      // The slots from `due` up to the one before `latest` get no run of their own.
      const before = plan.grid.atOrBefore(latest - 1) ?? due
      return { _tag: "Coalesce", merged: MissedRun.range(plan.grid, due, before), slot: latest }
    }
  }
  return START
}

/**
 * One move of a take plan (see {@link takePlan}): a `Skip` or `Coalesce` decision of
 * {@link take}, with `from`, the slot the row was due at before it.
 *
 * @category models
 * @since 0.6.0
 */
export type TakeStep = Extract<Take, { readonly _tag: "Skip" | "Coalesce" }> & {
  readonly from: number
}

/**
 * A due run taken, as one plan (SPEC §3): every {@link take} decision until the run starts or
 * the row waits.
 * - `Start`: it starts now, as it is;
 * - `Expire`: a one-shot past its deadline: the task ends `failed` without running;
 * - `Move`: the row moves to `slot` through `steps`, in order (each a window skip or a coalesce,
 *   one occurrence each), and is taken again in its turn there, so runs due before it still go
 *   first (SPEC §4). `merged` is what the coalesce steps after the last skip fold into the run at
 *   `slot`; `skipped` says a skip came first, which drops what the row had merged before.
 *
 * @category models
 * @since 0.6.0
 */
export type TakePlan =
  | { readonly _tag: "Start" }
  | { readonly _tag: "Expire"; readonly deadline: number }
  | {
      readonly _tag: "Move"
      readonly slot: number
      readonly steps: ReadonlyArray<TakeStep>
      readonly merged: Dropped | undefined
      readonly skipped: boolean
    }

/**
 * Two merged ranges of slots as one: `earlier` then `later`, as a run's `merged` reports them.
 *
 * @category combinators
 * @since 0.6.0
 */
export const mergeDropped = (earlier: Dropped | undefined, later: Dropped): Dropped =>
  earlier === undefined
    ? later
    : {
        first: earlier.first,
        last: later.last,
        count: earlier.count + later.count,
        exact: earlier.exact && later.exact,
      }

/**
 * The whole take of a due run of `row` at `now` (SPEC §3): {@link take} applied again at each
 * slot the row moves to, until the run starts there or the slot is past `limit` (a stepping
 * driver's end time; `now` otherwise). The in-memory kernel and the durable store both apply
 * this plan, so they fold the same slots with the same causes. Pure.
 *
 * **Example** (A coalescing task found 25 ms late)
 *
 * ```ts
 * import { Retry, Rules, Schedule } from "@tickwork/core"
 * const r = Schedule.resolve(Schedule.fixedRate(10), 0) as Schedule.Resolved
 * const row = {
 *   plan: r.plan, slot: 0, dueAt: 0, attempt: 1, runNumber: 0, consecutiveFailures: 0,
 *   retry: Retry.none, missedRuns: "coalesce", pauseAfter: 0, windowMs: Rules.NO_WINDOW,
 * } as const
 * const plan = Rules.takePlan(row, 25)
 * plan._tag === "Move" && [plan.slot, plan.steps.length] // [20, 1]
 * ```
 *
 * @category combinators
 * @since 0.6.0
 */
export const takePlan = (row: Row, now: number, limit: number = now, notBefore = -1): TakePlan => {
  const steps: Array<TakeStep> = []
  let view = row
  let merged: Dropped | undefined
  let skipped = false
  for (;;) {
    const t = take(view, now, limit, notBefore)
    if (t._tag === "Start") break
    // Only a one-shot expires, and a one-shot never moves: an expiry is the whole plan.
    if (t._tag === "Expire") return t
    steps.push({ ...t, from: view.dueAt })
    if (t._tag === "Skip") {
      skipped = true
      merged = undefined
    } else merged = mergeDropped(merged, t.merged)
    // Each step moves the slot strictly later, so the plan ends.
    view = { ...view, slot: t.slot, dueAt: t.slot }
    if (t.slot > limit) break
  }
  return steps.length === 0 ? START_PLAN : { _tag: "Move", slot: view.slot, steps, merged, skipped }
}

const START_PLAN: TakePlan = { _tag: "Start" }

/**
 * The START step of a row (SPEC §5): the run's number. Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const start = (row: Pick<Row, "attempt" | "runNumber">): { readonly runNumber: number } => {
  const context: Lifecycle.TaskContext = {
    attempt: row.attempt,
    maxRetries: 0,
    runNumber: row.runNumber,
    consecutiveFailures: 0,
    pauseAfter: 0,
  }
  Lifecycle.step(Lifecycle.SCHEDULED, Lifecycle.START, { context, event: START_EVENT })
  return { runNumber: context.runNumber }
}

const START_EVENT: Lifecycle.TaskEvent = { type: "START" }

/**
 * The EXPIRE step (SPEC §3): the state a one-shot ends in when {@link take} says `Expire` (its
 * run is not started). Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const expire = (): TaskState => {
  // Stryker disable next-line ObjectLiteral: equivalent, the machine's EXPIRE step reads no context
  const context: Lifecycle.TaskContext = {
    attempt: 1,
    maxRetries: 0,
    runNumber: 0,
    consecutiveFailures: 0,
    pauseAfter: 0,
  }
  const edge = Lifecycle.step(Lifecycle.SCHEDULED, Lifecycle.EXPIRE, {
    context,
    event: EXPIRE_EVENT,
  }) as Lifecycle.Edge
  return Lifecycle.states[edge.target] as TaskState
}

const EXPIRE_EVENT: Lifecycle.TaskEvent = { type: "EXPIRE" }

/**
 * Whether a schedule change to a live task in `state` at `attempt` waits for the slot in
 * progress to end (SPEC §15): a running task, or one with a retry of its slot pending, finishes
 * that slot first and starts the new schedule when the slot ends, as if scheduled then (pass it
 * to {@link settle} as {@link Row.restart}); otherwise the new schedule starts now. Pure.
 *
 * @category combinators
 * @since 0.3.0
 */
export const scheduleChangeWaits = (state: TaskState, attempt: number): boolean =>
  state === "running" || attempt > 1
