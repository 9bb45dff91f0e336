/**
 * @internal
 * Liveness from the database session (PostgreSQL only, SPEC §17). Each process holds a
 * session-level advisory lock on its owner key, `(LOCK_CLASS, hashtext(owner))`, for its whole
 * life on one dedicated connection; PostgreSQL releases it the moment that session ends. The
 * claims of an owner whose lock is free are made due at once, at their own time (`run_at`, so
 * they keep their place in SPEC §4's order ahead of later work), and recorded `recovered`; any
 * process claims them under a new fence without waiting for their lease.
 *
 * Whether an owner's lock is held is asked with a probe, never by reading `pg_locks` (which
 * takes every partition of the server's lock table, stalling every other backend's locking):
 * `pg_try_advisory_xact_lock_shared` on its key fails while a live session holds it, and
 * otherwise takes a shared lock until the asking transaction ends — which also keeps a process
 * restarting under that name from taking its lock while its old claims are being taken over.
 *
 * A process takes its lock before it claims anything, and claims only while its lock is held, so
 * a claim belongs to an owner that held its lock when it claimed; if the lock is free now, that
 * session has ended. Two owner names whose hashes collide only make each other look alive: their
 * claims then wait for their lease, as without this check.
 */
import { Array as Arr, Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { eventRecord, num, type Raw, strOrNull } from "./codec.ts"
import * as Events from "./events.ts"
import type { TakenOver } from "./model.ts"

/** The advisory lock's first key: "tick" in ASCII, tickwork's namespace among advisory locks. */
export const LOCK_CLASS = 0x7469636b

/** True when nobody holds the lock of the owner in column `o.owner` (see above). */
const free = (sql: SqlClient) =>
  sql`pg_try_advisory_xact_lock_shared(${LOCK_CLASS}, hashtext(o.owner))`

/**
 * A condition (` AND …`) that holds while `owner`'s liveness lock is held by some session:
 * evaluated once per statement.
 */
export const ownLockHeld = (sql: SqlClient, owner: string) =>
  sql` AND (SELECT NOT pg_try_advisory_xact_lock_shared(${LOCK_CLASS}, hashtext(${owner})))`

/**
 * The owners other than `me` holding claims whose lock is free: one statement, a probe per owner
 * with running rows (a few), outside a transaction; the takeover's transaction follows only when
 * it finds one (almost never).
 */
export const deadOwners = (sql: SqlClient, me: string, now: number) =>
  Effect.map(
    sql<Raw>`
      SELECT o.owner FROM (
        SELECT DISTINCT lease_owner AS owner FROM tickwork_tasks
        WHERE state = 'running' AND lease_owner IS NOT NULL AND due_at > ${now}
          AND lease_owner <> ${me}
      ) o
      WHERE ${free(sql)}`,
    (rows) => rows.map((r) => String(r.owner)),
  )

/** Rows per multi-row INSERT of events. */
const CHUNK = 400

/**
 * Makes due now the running rows of `owners` whose lock is (still) free, recording a `recovered`
 * event for each; `me` names the process taking them over. With `own`, `owners` is `[me]`, at
 * `me`'s start (its lock is held by itself, and it holds no claim yet: any claim under its name
 * is a dead process's of the same name). Runs inside a transaction the caller opens: the
 * probes' shared locks last until it ends.
 */
export const takeOver = (
  sql: SqlClient,
  me: string,
  now: number,
  owners: ReadonlyArray<string>,
  own = false,
) =>
  Effect.gen(function* () {
    if (owners.length === 0) return []
    const rows = yield* sql<Raw>`
      WITH dead AS (
        SELECT o.owner FROM (SELECT DISTINCT lease_owner AS owner FROM tickwork_tasks
          WHERE state = 'running' AND lease_owner IN ${sql.in(owners)}) o
        WHERE ${own ? sql`TRUE` : free(sql)}
      )
      UPDATE tickwork_tasks t SET due_at = LEAST(t.run_at, ${now}), updated_at = ${now}
      FROM dead
      WHERE t.lease_owner = dead.owner AND t.state = 'running' AND t.due_at > ${now}
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
