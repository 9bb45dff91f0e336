/**
 * @internal
 * Writing decided rows inside a transaction the caller opens: one row's update (guarded by the
 * fence and state it was read under), its definition when an update rewrote it, its tags, and
 * ledger events. The statements only move data; every decision was made before.
 */
import { Array as Arr, Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { eventRecords } from "./codec.ts"
import type { EventEntry, RowUpdate, TaskRow } from "./model.ts"

/** Rows per multi-row INSERT: well under both engines' parameter limits. */
const CHUNK = 400

/**
 * Writes `u` to task `row.id` if it is still in `row.state` under `row.fence`; returns whether
 * it did. The row's recorded wait (SPEC §20.4) is cleared in the same statement: it was the
 * claim's view of the run as it was, which a pause, resume, update (or any other decided
 * change) ends; a claim that still passes the row over records it again, from its own time.
 * Left standing, a wait would show on a resumed row and hide its due time from the claimers.
 */
export const row = (
  sql: SqlClient,
  r: Pick<TaskRow, "id" | "fence" | "state" | "generation">,
  u: RowUpdate,
) =>
  Effect.gen(function* () {
    const d = u.define
    const written = yield* sql<{ id: string }>`UPDATE tickwork_tasks SET state = ${u.state},
      slot = ${u.slot}, run_at = ${u.runAt}, due_at = ${u.claimableAt}, attempt = ${u.attempt},
      run_number = ${u.runNumber}, consecutive_failures = ${u.consecutiveFailures},
      deliveries = ${u.deliveries}, lease_owner = ${u.leaseOwner},
      finished_at = ${u.finishedAt}, last_error = ${u.lastError}, seq = ${u.seq},
      updated_at = ${u.updatedAt}, paused_reason = ${u.pausedReason ?? null},
      resume_from = ${u.resumeFrom ?? -1}, wait_cause = NULL, wait_scope = NULL,
      wait_since = NULL, wait_until = NULL
      WHERE id = ${r.id} AND fence = ${r.fence} AND state = ${r.state}
      RETURNING id`
    if (written.length === 0) return false
    if (u.kept !== undefined) {
      yield* sql`UPDATE tickwork_tasks
        SET kept = ${u.kept === null ? null : JSON.stringify(u.kept)} WHERE id = ${r.id}`
    }
    if (u.schedule !== undefined) {
      yield* sql`UPDATE tickwork_tasks SET schedule = ${JSON.stringify(u.schedule)}, restart = NULL
        WHERE id = ${r.id}`
    }
    if (d !== undefined) {
      yield* sql`UPDATE tickwork_tasks SET payload = ${d.payload},
        schedule = ${JSON.stringify(d.schedule)}, priority = ${d.priority},
        retry = ${JSON.stringify(d.retry)}, missed_runs = ${d.missedRuns},
        pause_after = ${d.pauseAfter}, timeout_ms = ${d.timeoutMs},
        tags = ${JSON.stringify(d.tags)}, window_ms = ${d.windowMs}, breaker = ${d.breaker},
        restart = ${d.restart === undefined ? null : JSON.stringify(d.restart)},
        revision = revision + 1
        WHERE id = ${r.id}`
      yield* tags(sql, [{ id: r.id, generation: r.generation, tags: d.tags }])
    }
    return true
  })

/** Replaces the tag rows of these tasks (an insert that reused an id, an update). */
export const tags = (
  sql: SqlClient,
  tasks: ReadonlyArray<{
    readonly id: string
    readonly generation: number
    readonly tags: ReadonlyArray<string>
  }>,
) =>
  Effect.gen(function* () {
    if (tasks.length === 0) return
    for (const chunk of Arr.chunksOf(tasks, CHUNK)) {
      yield* sql`DELETE FROM tickwork_tags WHERE task_id IN ${sql.in(chunk.map((t) => t.id))}`
    }
    const rows = tasks.flatMap((t) =>
      t.tags.map((tag) => ({ tag, task_id: t.id, generation: t.generation })),
    )
    for (const chunk of Arr.chunksOf(rows, CHUNK)) {
      yield* sql`INSERT INTO tickwork_tags ${sql.insert(chunk)}`
    }
  })

/** Inserts ledger events. */
export const events = (sql: SqlClient, list: ReadonlyArray<EventEntry>) =>
  Effect.forEach(
    Arr.chunksOf(list, CHUNK),
    (chunk) => sql`INSERT INTO tickwork_events ${sql.insert(eventRecords(chunk))}`,
    { discard: true },
  )
