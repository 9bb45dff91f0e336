/**
 * @internal
 * A retry by hand (SPEC §19.2) of a stored `failed` task: in one transaction, the row is read,
 * the core decides (`Rules.manualRefusal`, `Rules.retried`), and the row goes back to
 * `scheduled`, due at once, with a `manual-retry` event. The run is then claimed like any other
 * (SPEC §19.6): in a fleet, by whichever owner claims it first.
 */
import { type Errors as CoreErrors, Rules } from "@tickwork/core"
import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { StoreError } from "../Errors.ts"
import { num } from "./codec.ts"
import * as Events from "./events.ts"
import { lockedRow } from "./locked.ts"
import type { EventEntry, RowUpdate, TaskRow } from "./model.ts"
import { pendingOf } from "./trigger.ts"
import * as Write from "./write.ts"

/**
 * What a retry found: the row it retried (as it was), or the state that refused it (with core's
 * refusal itself when it was a retry of one slot, which depends on more than the state).
 */
export type Retried =
  | { readonly _tag: "Retried"; readonly row: TaskRow; readonly event: EventEntry }
  | {
      readonly _tag: "Refused"
      readonly state: string
      readonly refusal?: CoreErrors.ManualRunRefused | undefined
    }

/**
 * The row of a `failed` task retried at `now` as the core decided (`retry`: the attempt and the
 * window of `Rules.retried`), a new push (`seq`).
 */
export const retriedRow = (
  row: TaskRow,
  retry: { readonly attempt: number; readonly windowMs: number },
  now: number,
  seq: number,
): RowUpdate => ({
  state: "scheduled",
  slot: row.slot,
  runAt: now,
  claimableAt: now,
  attempt: retry.attempt,
  runNumber: row.runNumber,
  consecutiveFailures: 0,
  deliveries: 0,
  leaseOwner: null,
  finishedAt: null,
  lastError: row.lastError,
  seq,
  updatedAt: now,
  pausedReason: null,
  resumeFrom: row.resumeFrom,
  define: {
    payload: row.payload,
    schedule: row.schedule,
    priority: row.priority,
    retry: row.retry,
    missedRuns: row.missedRuns,
    pauseAfter: row.pauseAfter,
    timeoutMs: row.timeoutMs,
    tags: row.tags,
    windowMs: retry.windowMs === Rules.NO_WINDOW ? null : retry.windowMs,
    breaker: row.breaker,
    restart: row.restart,
  },
})

/**
 * Retries task `id` on `sql` at `now` if it is `failed`: one transaction, the row locked on
 * PostgreSQL while it is decided. `origin` is recorded on the event.
 */
export const retry = (
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  id: string,
  now: number,
  seq: number,
  origin: string | undefined,
): Effect.Effect<Retried, StoreError | SqlError> =>
  sql.withTransaction(
    Effect.gen(function* () {
      const found = yield* lockedRow(sql, dialect, id)
      if (Option.isNone(found)) return { _tag: "Refused", state: "unknown" } as const
      const row = found.value
      if (Rules.manualRefusal("retry", id, row.state) !== undefined)
        return { _tag: "Refused", state: row.state } as const
      // The failed slot's last attempt that ran: the ledger's (0 when none ran: it expired).
      const last = yield* sql<{ readonly last: unknown }>`SELECT MAX(attempt) AS last
        FROM tickwork_runs WHERE task_id = ${id} AND generation = ${row.generation}
        AND slot = ${row.slot}`
      const lastRan = last[0]?.last == null ? 0 : num(last[0].last)
      const decided = Rules.retried(
        lastRan,
        row.attempt,
        row.plan !== undefined,
        row.windowMs ?? Rules.NO_WINDOW,
      )
      const update = retriedRow(row, decided, now, seq)
      if (!(yield* Write.row(sql, row, update)))
        return { _tag: "Refused", state: row.state } as const
      const event = Events.make("manual-retry", row, now, null, {
        detail: `attempt ${decided.attempt}, due at ${now}`,
        origin,
      })
      yield* Write.events(sql, [event])
      return { _tag: "Retried", row, event } as const
    }),
  )

/**
 * The row of a `scheduled` task whose failed slot is retried at `now` (SPEC §19.7) as core
 * decided (`run`, from `Rules.slotRetried`): its pending run set aside in `kept`, as a trigger
 * sets it aside, and the slot's next attempt due at once, a new push (`seq`). Its completion
 * puts the kept run back (`settle.ts`, `Rules.manualEnded`).
 */
export const slotRetriedRow = (
  row: TaskRow,
  run: Rules.PendingRun,
  now: number,
  seq: number,
): RowUpdate => ({
  state: "scheduled",
  slot: run.slot,
  runAt: run.dueAt,
  claimableAt: run.dueAt,
  attempt: run.attempt,
  runNumber: row.runNumber,
  consecutiveFailures: row.consecutiveFailures,
  deliveries: 0,
  leaseOwner: null,
  finishedAt: null,
  lastError: row.lastError,
  seq,
  updatedAt: now,
  pausedReason: null,
  resumeFrom: row.resumeFrom,
  kept: pendingOf(row),
})

/**
 * Retries slot `slot` (epoch ms) of task `id` on `sql` at `now` (SPEC §19.7): one transaction,
 * the row locked on PostgreSQL while the core decides on it and on the ledger's latest run of
 * the slot in the task's generation. `origin` is recorded on the `manual-retry` event.
 */
export const retrySlot = (
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  id: string,
  slot: number,
  now: number,
  seq: number,
  origin: string | undefined,
): Effect.Effect<Retried, StoreError | SqlError> =>
  sql.withTransaction(
    Effect.gen(function* () {
      const row = Option.getOrUndefined(yield* lockedRow(sql, dialect, id))
      const state = row?.state ?? "unknown"
      // The slot's attempts only grow: its highest is its latest run.
      const last =
        row === undefined
          ? []
          : yield* sql<{ readonly attempt: unknown; readonly outcome: unknown }>`SELECT attempt,
            outcome FROM tickwork_runs WHERE task_id = ${id} AND generation = ${row.generation}
            AND slot = ${slot} ORDER BY attempt DESC LIMIT 1`
      const found = last[0]
      const runs =
        found === undefined
          ? undefined
          : { lastAttempt: num(found.attempt), failed: String(found.outcome) !== "succeeded" }
      const refusal = Rules.manualRefusal("retry", id, state, row?.kept !== undefined, {
        slot,
        recurring: row?.plan !== undefined,
        pendingSlot: row?.state === "scheduled" ? row.slot : undefined,
        runs,
      })
      if (row === undefined || runs === undefined || refusal !== undefined)
        return { _tag: "Refused", state, refusal } as const
      const run = Rules.slotRetried(slot, runs, now)
      if (!(yield* Write.row(sql, row, slotRetriedRow(row, run, now, seq))))
        return { _tag: "Refused", state, refusal } as const
      const event = Events.make("manual-retry", { ...row, slot }, now, null, {
        detail: `slot ${slot}, attempt ${run.attempt}, due at ${now}; kept slot ${row.slot}, attempt ${row.attempt}, due at ${row.runAt}`,
        origin,
      })
      yield* Write.events(sql, [event])
      return { _tag: "Retried", row, event } as const
    }),
  )
