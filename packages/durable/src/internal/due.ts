/**
 * @internal
 * When rows are due: the earliest due time the dispatcher sleeps toward, and the renewal of the
 * leases of running rows. A row's `due_at` column is when it can be claimed: its `run_at` while
 * scheduled, its lease deadline (`leaseUntil` in code) while running, so a dead owner's runs
 * are simply due again.
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { StoreError } from "../Errors.ts"
import { num, type Raw } from "./codec.ts"
import * as Failure from "./failure.ts"
import type { NextTimes } from "./model.ts"

/**
 * Extends the leases `owner` still holds under these fences to `now + leaseMs` (the running
 * row's lease deadline, stored in `due_at`); returns the ids renewed. A task cancelled while it
 * runs keeps its lease: its run finishes (cancellation is cooperative).
 */
export const renew = (
  sql: SqlClient,
  owner: string,
  held: ReadonlyArray<{ readonly id: string; readonly fence: number }>,
  now: number,
  leaseMs: number,
): Effect.Effect<ReadonlySet<string>, StoreError> => {
  const leaseUntil = now + leaseMs
  return held.length === 0
    ? Effect.succeed(new Set())
    : sql<Raw>`
        UPDATE tickwork_tasks SET due_at = ${leaseUntil}
        WHERE state IN ('running', 'cancelled') AND lease_owner = ${owner}
          AND id IN ${sql.in(held.map((h) => h.id))}
        RETURNING id, fence`.pipe(
        Effect.map((rows) => {
          const fences = new Map(rows.map((r) => [String(r.id), num(r.fence)]))
          return new Set(held.filter((h) => fences.get(h.id) === h.fence).map((h) => h.id))
        }),
        Effect.mapError(Failure.failing("renew leases")),
      )
}

/** The earliest `due_at` of the claimable rows of these handlers (`undefined`: none). */
export const nextDue = (
  sql: SqlClient,
  handlers: ReadonlyArray<string>,
): Effect.Effect<number | undefined, StoreError> =>
  handlers.length === 0
    ? Effect.succeed(undefined)
    : sql<Raw>`
        SELECT due_at FROM tickwork_tasks
        WHERE state IN ('scheduled', 'running') AND handler IN ${sql.in(handlers)}
        ORDER BY due_at LIMIT 1`.pipe(
        Effect.map((rows) => (rows[0] === undefined ? undefined : num(rows[0].due_at))),
        Effect.mapError(Failure.failing("find the next due task")),
      )

/**
 * {@link nextDue} and the next half-open time in one statement (one round trip). A row waiting
 * on a limit (SPEC §20) is due again when its rate window opens (`wait_until`); one waiting on
 * concurrency is not due by time at all (a run of its scope ending wakes the claimers).
 */
export const nextTimes = (
  sql: SqlClient,
  handlers: ReadonlyArray<string>,
): Effect.Effect<NextTimes, StoreError> =>
  sql<Raw>`
    SELECT ${
      handlers.length === 0
        ? sql`NULL`
        : sql`(SELECT MIN(at) FROM (
          SELECT * FROM (SELECT due_at AS at FROM tickwork_tasks
            WHERE state IN ('scheduled', 'running') AND handler IN ${sql.in(handlers)}
              AND wait_cause IS NULL
            ORDER BY due_at LIMIT 1) AS free
          UNION ALL
          SELECT MIN(wait_until) AS at FROM tickwork_tasks
            WHERE state = 'scheduled' AND wait_cause = 'rate-limited'
              AND handler IN ${sql.in(handlers)}) AS times)`
    } AS due,
      (SELECT MIN(half_open_at) FROM tickwork_breakers WHERE state = 'open') AS half_open`.pipe(
    Effect.map((rows) => {
      const r = rows[0]
      const at = (v: unknown) => (v === null || v === undefined ? undefined : num(v))
      return { due: at(r?.due), halfOpen: at(r?.half_open) }
    }),
    Effect.mapError(Failure.failing("find the next due time")),
  )
