/**
 * @internal
 * A trigger by hand (SPEC §19.1, §19.6) of a stored `scheduled` task: in one transaction, the row
 * is read, the core decides (`Rules.manualRefusal`, `Rules.triggered`), and the row's pending run
 * is set aside in `kept` while a manual run is due at once, with a `manual-trigger` event. The
 * run is then claimed like any other: in a fleet, by whichever owner claims it first, so it runs
 * once. Its completion puts the kept run back (`settle.ts`, `Rules.manualEnded`).
 */
import { Rules } from "@tickwork/core"
import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { StoreError } from "../Errors.ts"
import * as Events from "./events.ts"
import { lockedRow } from "./locked.ts"
import type { EventEntry, KeptRun, RowUpdate, TaskRow } from "./model.ts"
import * as Write from "./write.ts"

/** What a trigger found: the row it triggered (as it was), or the state that refused it. */
export type Triggered =
  | { readonly _tag: "Triggered"; readonly row: TaskRow; readonly event: EventEntry }
  | { readonly _tag: "Refused"; readonly state: string; readonly pending: boolean }

/** The pending run of a `scheduled` row, as a trigger keeps it. */
export const pendingOf = (row: TaskRow): KeptRun => ({
  slot: row.slot,
  dueAt: row.runAt,
  attempt: row.attempt,
  deliveries: row.deliveries,
  seq: row.seq,
  resumeFrom: row.resumeFrom,
})

/**
 * Row `row` with a manual run that has not started dropped (SPEC §19.1: a pause by hand or a
 * new schedule before it starts drops it): its kept run put back as it was. A `paused` row's
 * manual run has not started either (a breaker's hold keeps it waiting). Any other row, a
 * running one included, as it is.
 */
export const withoutManual = (row: TaskRow): TaskRow => {
  const k = row.kept
  if ((row.state !== "scheduled" && row.state !== "paused") || k === undefined) return row
  return {
    ...row,
    slot: k.slot,
    runAt: k.dueAt,
    claimableAt: k.dueAt,
    attempt: k.attempt,
    deliveries: k.deliveries,
    seq: k.seq,
    resumeFrom: k.resumeFrom,
    kept: undefined,
  }
}

/** The row of a `scheduled` task triggered at `now` as the core decided: a new push, `seq`. */
export const triggeredRow = (row: TaskRow, now: number, seq: number): RowUpdate => {
  const t = Rules.triggered(pendingOf(row), now)
  return {
    state: "scheduled",
    slot: t.run.slot,
    runAt: t.run.dueAt,
    claimableAt: t.run.dueAt,
    attempt: t.run.attempt,
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
    kept: t.kept,
  }
}

/**
 * Triggers task `id` on `sql` at `now` if it is `scheduled` with no manual run pending: one
 * transaction, the row locked on PostgreSQL while it is decided. `origin` is recorded on the
 * event.
 */
export const trigger = (
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  id: string,
  now: number,
  seq: number,
  origin: string | undefined,
): Effect.Effect<Triggered, StoreError | SqlError> =>
  sql.withTransaction(
    Effect.gen(function* () {
      const found = yield* lockedRow(sql, dialect, id)
      if (Option.isNone(found))
        return { _tag: "Refused", state: "unknown", pending: false } as const
      const row = found.value
      const pending = row.kept !== undefined
      if (Rules.manualRefusal("trigger", id, row.state, pending) !== undefined)
        return { _tag: "Refused", state: row.state, pending } as const
      if (!(yield* Write.row(sql, row, triggeredRow(row, now, seq))))
        return { _tag: "Refused", state: row.state, pending } as const
      const event = Events.make("manual-trigger", row, now, null, {
        detail: `due at ${now}; kept slot ${row.slot}, attempt ${row.attempt}, due at ${row.runAt}`,
        origin,
      })
      yield* Write.events(sql, [event])
      return { _tag: "Triggered", row, event } as const
    }),
  )
