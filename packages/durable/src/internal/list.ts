/**
 * @internal
 * The store's reads: a task's row or state, lists of tasks by state, tag, kind or handler (pages
 * by id), a task's run ledger and events, and counts by state. Each is one statement; none
 * writes.
 */
import { Errors, type Task } from "@tickwork/core"
import { Array as Arr, Effect, Option } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { StoreError } from "../Errors.ts"
import { decodeEvent, decodeRow, decodeRun, num, type Raw } from "./codec.ts"
import * as Failure from "./failure.ts"
import type { Counts, EventEntry, Query, RunEntry, TaskRow } from "./model.ts"

/** A task's row; one that cannot be read is a `StoreError` of reason `corrupt`. */
export const get = (
  sql: SqlClient,
  id: string,
): Effect.Effect<Option.Option<TaskRow>, StoreError> =>
  sql<Raw>`SELECT * FROM tickwork_tasks WHERE id = ${id}`.pipe(
    Effect.mapError(Failure.failing("read a task")),
    Effect.flatMap((rows) =>
      Effect.try({
        try: () => Option.map(Arr.head(rows), decodeRow),
        catch: (error) =>
          new StoreError({
            operation: "read a task",
            reason: "corrupt",
            detail: error instanceof Error ? error.message : String(error),
            message: `the stored row of task ${Errors.show(id)} cannot be read: ${error instanceof Error ? error.message : String(error)}`,
            cause: error,
          }),
      }),
    ),
  )

/** A task's state alone. */
export const state = (
  sql: SqlClient,
  id: string,
): Effect.Effect<Option.Option<Task.TaskState>, StoreError> =>
  sql<Raw>`SELECT state FROM tickwork_tasks WHERE id = ${id}`.pipe(
    Effect.map((rows) => Option.map(Arr.head(rows), (r) => String(r.state) as Task.TaskState)),
    Effect.mapError(Failure.failing("read a task's state")),
  )
/** Tasks matching `q`, by id, one indexed statement (by tag through `tickwork_tags`). */
export const list = (
  sql: SqlClient,
  q: Query,
): Effect.Effect<ReadonlyArray<TaskRow>, StoreError> => {
  const where = [sql`1 = 1`]
  if (q.state !== undefined) where.push(sql`state = ${q.state}`)
  if (q.handler !== undefined) where.push(sql`handler = ${q.handler}`)
  // The stored schedule is the core's encoded form, written with its kind first.
  if (q.kind !== undefined) where.push(sql`schedule LIKE ${`{"kind":"${q.kind}"%`}`)
  if (q.tag !== undefined)
    where.push(
      sql`(id, generation) IN (SELECT task_id, generation FROM tickwork_tags WHERE tag = ${q.tag})`,
    )
  if (q.after !== undefined) where.push(sql`id > ${q.after}`)
  return sql<Raw>`SELECT * FROM tickwork_tasks WHERE ${sql.and(where)}
    ORDER BY id LIMIT ${q.limit}`.pipe(
    Effect.mapError(Failure.failing("list tasks")),
    Effect.flatMap((rows) =>
      Effect.try({
        try: () => rows.map(decodeRow),
        catch: (error) =>
          new StoreError({
            operation: "list tasks",
            reason: "corrupt",
            detail: error instanceof Error ? error.message : String(error),
            message: `a stored task cannot be read: ${error instanceof Error ? error.message : String(error)}`,
            cause: error,
          }),
      }),
    ),
  )
}
/** The run ledger of a task, oldest first. */
export const runs = (
  sql: SqlClient,
  id: string,
): Effect.Effect<ReadonlyArray<RunEntry>, StoreError> =>
  sql<Raw>`SELECT * FROM tickwork_runs WHERE task_id = ${id}
    ORDER BY generation, finished_at, slot, attempt`.pipe(
    Effect.map((rows) => rows.map(decodeRun)),
    Effect.mapError(Failure.failing("read the run ledger")),
  )

/** The events of a task, oldest first. */
export const events = (
  sql: SqlClient,
  id: string,
): Effect.Effect<ReadonlyArray<EventEntry>, StoreError> =>
  sql<Raw>`SELECT * FROM tickwork_events WHERE task_id = ${id} ORDER BY id`.pipe(
    Effect.map((rows) => rows.map(decodeEvent)),
    Effect.mapError(Failure.failing("read the events")),
  )

/** Tasks by state. */
export const counts = (sql: SqlClient): Effect.Effect<Counts, StoreError> =>
  sql<Raw>`
  SELECT state, COUNT(*) AS n FROM tickwork_tasks GROUP BY state`.pipe(
    Effect.map((rows) => {
      const out = { scheduled: 0, running: 0, paused: 0, done: 0, failed: 0, cancelled: 0 }
      for (const r of rows) out[String(r.state) as Task.TaskState] = num(r.n)
      return out
    }),
    Effect.mapError(Failure.failing("count tasks")),
  )

/**
 * Deduplication keys held by a live task (SPEC §20.3): keys whose holder, the newest row under
 * the key (by `created_at`, then `seq`), is `scheduled`, `running` or `paused` — as the kernel's
 * `stats().dedup.keys`. One statement: each live keyed row is checked against the key's index
 * (`tickwork_tasks_dedup`) for a newer row, so it costs O(live keyed rows), none for a store
 * without keys.
 */
export const dedupKeys = (sql: SqlClient): Effect.Effect<number, StoreError> =>
  sql<Raw>`
  SELECT COUNT(*) AS n FROM tickwork_tasks t
    WHERE t.dedup_key IS NOT NULL AND t.state IN ('scheduled', 'running', 'paused')
      AND NOT EXISTS (SELECT 1 FROM tickwork_tasks n WHERE n.dedup_key = t.dedup_key
        AND (n.created_at > t.created_at OR (n.created_at = t.created_at AND n.seq > t.seq)))`.pipe(
    Effect.map((rows) => (rows.length === 0 ? 0 : num(rows[0]?.n))),
    Effect.mapError(Failure.failing("count deduplication keys")),
  )

/**
 * Due runs waiting on a limit, by cause (SPEC §20.4): the claim records a wait on a `scheduled`
 * row it passes over and clears it on the row it starts.
 */
export type WaitCounts = Readonly<Record<"concurrency" | "rate-limited", number>>

/** {@link counts} and the waits by cause in one `GROUP BY` (one scan, for the gauges and stats). */
export const tally = (
  sql: SqlClient,
): Effect.Effect<{ readonly counts: Counts; readonly waiting: WaitCounts }, StoreError> =>
  sql<Raw>`
  SELECT state, wait_cause, COUNT(*) AS n FROM tickwork_tasks GROUP BY state, wait_cause`.pipe(
    Effect.map((rows) => {
      const counts = { scheduled: 0, running: 0, paused: 0, done: 0, failed: 0, cancelled: 0 }
      const waiting = { concurrency: 0, "rate-limited": 0 }
      for (const r of rows) {
        const n = num(r.n)
        counts[String(r.state) as Task.TaskState] += n
        if (
          r.state === "scheduled" &&
          (r.wait_cause === "concurrency" || r.wait_cause === "rate-limited")
        ) {
          waiting[r.wait_cause] += n
        }
      }
      return { counts, waiting }
    }),
    Effect.mapError(Failure.failing("count tasks")),
  )
