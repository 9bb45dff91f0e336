/**
 * @internal
 * The claim: up to `limit` due rows (scheduled, or running with an expired lease) of the given
 * handlers become `running`, leased to one owner under a new fence, in SPEC §4's order. Only
 * PostgreSQL needs `FOR UPDATE SKIP LOCKED` (several processes claim at once).
 */
import { Heap, Rules } from "@tickwork/core"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { decodeRow, num, type Raw } from "./codec.ts"
import * as Fleet from "./fleet.ts"
import * as Limited from "./limited.ts"
import type { ClaimOptions, TaskRow } from "./model.ts"

/**
 * Claims due rows on `sql` (its dialect `dialect`). With `live` (a store whose processes hold
 * liveness locks), a claim succeeds only while the claimer's own lock is held: a process whose
 * session has just ended cannot claim what the others would take over at once.
 */
export const claim = (sql: SqlClient, dialect: "sqlite" | "pg", o: ClaimOptions, live = false) => {
  /**
   * The ids of the first `limit` claimable rows in SPEC §4's order (the core's
   * `Heap.compare`: due time, priority rank, push order), for both dialects.
   */
  /** A run that starts waits no more (SPEC §20.4). */
  const clearWait = sql`, wait_cause = NULL, wait_scope = NULL, wait_since = NULL,
    wait_until = NULL`

  const due = (o: ClaimOptions) => sql`
    SELECT id FROM tickwork_tasks
    WHERE state IN ('scheduled', 'running') AND due_at <= ${o.now}
      AND handler IN ${sql.in(o.handlers)}${live ? Fleet.ownLockHeld(sql, o.owner) : sql``}
    ORDER BY due_at, priority, seq LIMIT ${o.limit}`

  /**
   * SQLite: the due ids first, then the UPDATE of those of them still claimable (the same
   * conditions, checked again on each row as it is updated: a row claimed, changed or replaced
   * in between is not taken, and the fence moves with the state, so no row is claimed twice).
   * An UPDATE driven by the ordered, limited subquery itself costs 3-5 times the two: SQLite
   * builds a temporary b-tree for it on every execution, even when nothing is due, which is
   * most claims (the one after each commit). The ids are read without ORDER BY first (a walk
   * of the due index): when there are no more than `limit`, they are all the due rows and
   * their order is the one `claim` sorts them into; only past `limit` is SPEC §4's order read.
   */
  const claimSqlite = (o: ClaimOptions) =>
    Effect.gen(function* () {
      let ids = yield* sql<Raw>`
        SELECT id FROM tickwork_tasks
        WHERE state IN ('scheduled', 'running') AND due_at <= ${o.now}
          AND handler IN ${sql.in(o.handlers)}
        LIMIT ${o.limit + 1}`
      if (ids.length === 0) return [] as ReadonlyArray<Raw>
      if (ids.length > o.limit) ids = yield* due(o)
      return yield* sql<Raw>`
        UPDATE tickwork_tasks SET state = 'running', lease_owner = ${o.owner},
          due_at = ${o.now + o.leaseMs}, fence = fence + 1,
          deliveries = deliveries + 1, updated_at = ${o.now}${clearWait}
        WHERE id IN ${sql.in(ids.map((r) => String(r.id)))}
          AND state IN ('scheduled', 'running') AND due_at <= ${o.now}
          AND handler IN ${sql.in(o.handlers)}
        RETURNING *`
    })

  const claimSql = (o: ClaimOptions) =>
    dialect === "pg"
      ? sql<Raw>`
        WITH due AS (${due(o)} FOR UPDATE SKIP LOCKED)
        UPDATE tickwork_tasks t SET state = 'running', lease_owner = ${o.owner},
          due_at = ${o.now + o.leaseMs}, fence = t.fence + 1,
          deliveries = t.deliveries + 1, updated_at = ${o.now}${clearWait}
        FROM due WHERE t.id = due.id
        RETURNING t.*`
      : claimSqlite(o)

  /**
   * Under flow control (SPEC §20): one transaction decides which due rows start (core's
   * `Rules.admit`, see `limited.ts`) and claims those, so the counts it read hold until commit.
   */
  const limitedSql = (o: ClaimOptions) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const ids = yield* Limited.admitDue(sql, dialect, o, live)
        if (ids.length === 0) return [] as ReadonlyArray<Raw>
        return yield* sql<Raw>`
          UPDATE tickwork_tasks SET state = 'running', lease_owner = ${o.owner},
            due_at = ${o.now + o.leaseMs}, fence = fence + 1,
            deliveries = deliveries + 1, updated_at = ${o.now}${clearWait}
          WHERE id IN ${sql.in(ids)}
          RETURNING *`
      }),
    )

  /** Rows that cannot be read (edited by hand, say) end as core's UNREADABLE says, saying why. */
  const failUnreadable = (
    bad: ReadonlyArray<{ id: string; fence: number; error: string }>,
    now: number,
  ) =>
    Effect.forEach(
      bad,
      (b) => sql`UPDATE tickwork_tasks SET state = ${Rules.unreadable()}, lease_owner = NULL,
        finished_at = ${now}, updated_at = ${now}, last_error = ${b.error}
        WHERE id = ${b.id} AND fence = ${b.fence}`,
      { discard: true },
    )

  return o.handlers.length === 0 || o.limit <= 0
    ? Effect.succeed([])
    : Effect.gen(function* () {
        const raw = yield* Limited.limiting(o.limits) ? limitedSql(o) : claimSql(o)
        const rows: Array<TaskRow> = []
        const bad: Array<{ id: string; fence: number; error: string }> = []
        for (const r of raw) {
          try {
            rows.push(decodeRow(r))
          } catch (error) {
            bad.push({
              id: String(r.id),
              fence: num(r.fence),
              error: `the stored row cannot be read: ${error instanceof Error ? error.message : String(error)}`,
            })
          }
        }
        if (bad.length > 0) yield* failUnreadable(bad, o.now)
        // RETURNING keeps no order: the rows start in SPEC §4's.
        return rows.sort((a, b) =>
          Heap.compare(
            { slot: a.runAt, rank: a.priority, seq: a.seq },
            { slot: b.runAt, rank: b.priority, seq: b.seq },
          ),
        )
      })
}
