/**
 * @internal
 * Liveness from the database session (PostgreSQL only, SPEC §17). Each process holds a
 * session-level advisory lock on its owner key, `(LOCK_CLASS, hashtext(owner))`, for its whole
 * life on one dedicated connection; PostgreSQL releases it the moment that session ends. The
 * claims of an owner whose lock is free are made due at once, at their own time (`run_at`, so
 * they keep their place in SPEC §4's order ahead of later work), and recorded `recovered`; any
 * process claims them under a new fence without waiting for their lease.
 *
 * A process takes its lock before it claims anything, so a claim visible to the takeover
 * statement belongs to an owner that held its lock when it claimed; if the lock is free now,
 * that session has ended. Two owner names whose hashes collide only make each other look
 * alive: their claims then wait for their lease, as without this check.
 */
import { Array as Arr, Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { TakenOver } from "../TaskStore.ts"
import { eventRecord, num, type Raw, strOrNull } from "./codec.ts"
import * as Events from "./events.ts"

/** The advisory lock's first key: "tick" in ASCII, tickwork's namespace among advisory locks. */
export const LOCK_CLASS = 0x7469636b

/** The granted advisory locks of this database in tickwork's namespace. */
const locks = (sql: SqlClient) => sql`
  SELECT objid FROM pg_locks
  WHERE locktype = 'advisory' AND granted AND objsubid = 2
    AND classid = CAST(${LOCK_CLASS} AS BIGINT)::oid
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`

/** A condition (` AND …`) that holds while `owner`'s liveness lock is held by some session. */
export const ownLockHeld = (sql: SqlClient, owner: string) =>
  sql` AND EXISTS (SELECT 1 FROM (${locks(sql)}) l WHERE l.objid = hashtext(${owner})::oid)`

/**
 * Whether any claim (another owner's than `me`, or `me`'s own when `mine`) belongs to an owner
 * whose lock is free: one read-only statement, outside a transaction, that the takeover's
 * transaction follows only when it finds one (almost never).
 */
export const anyDead = (sql: SqlClient, me: string, now: number, mine: boolean) =>
  Effect.map(
    sql<Raw>`
      WITH live AS MATERIALIZED (${locks(sql)})
      SELECT 1 AS dead FROM tickwork_tasks t
      WHERE t.state = 'running' AND t.lease_owner IS NOT NULL AND t.due_at > ${now}
        AND (t.lease_owner <> ${me} OR ${mine})
        AND hashtext(t.lease_owner)::oid NOT IN (SELECT objid FROM live)
      LIMIT 1`,
    (rows) => rows.length > 0,
  )

/** Rows per multi-row INSERT of events. */
const CHUNK = 400

/**
 * Makes due now the running rows whose owner's liveness lock is free (another owner's than
 * `me`; also `me`'s own when `mine`, for a process that starts under a name a dead process
 * used), recording a `recovered` event for each. Runs inside a transaction the caller opens.
 */
export const takeOver = (sql: SqlClient, me: string, now: number, mine: boolean) =>
  Effect.gen(function* () {
    const rows = yield* sql<Raw>`
      WITH live AS MATERIALIZED (${locks(sql)}),
      dead AS (
        SELECT id FROM tickwork_tasks t
        WHERE t.state = 'running' AND t.lease_owner IS NOT NULL AND t.due_at > ${now}
          AND (t.lease_owner <> ${me} OR ${mine})
          AND hashtext(t.lease_owner)::oid NOT IN (SELECT objid FROM live)
        FOR UPDATE SKIP LOCKED
      )
      UPDATE tickwork_tasks t SET due_at = LEAST(t.run_at, ${now}), updated_at = ${now}
      FROM dead WHERE t.id = dead.id AND t.state = 'running'
      RETURNING t.id, t.generation, t.slot, t.attempt, t.fence, t.lease_owner, t.deliveries`
    const taken: Array<TakenOver> = rows.map((r) => ({
      id: String(r.id),
      generation: num(r.generation),
      slot: num(r.slot),
      attempt: num(r.attempt),
      fence: num(r.fence),
      owner: strOrNull(r.lease_owner) ?? "",
      delivery: num(r.deliveries),
    }))
    for (const chunk of Arr.chunksOf(taken, CHUNK)) {
      yield* sql`INSERT INTO tickwork_events ${sql.insert(
        Arr.map(chunk, (t) =>
          eventRecord(
            Events.make("recovered", t, now, t.owner, {
              cause: "session-ended",
              detail: `the database session of ${t.owner} ended; attempt ${t.attempt}, delivery ${t.delivery}; taken over by ${me}`,
            }),
          ),
        ),
      )}`
    }
    return taken
  })
