/**
 * @internal
 * The read a "load row → decide → store row" step starts with, inside the transaction the caller
 * opened: task `id`'s row, locked until that transaction ends. On PostgreSQL the lock is the
 * row's (`FOR UPDATE`: a concurrent step on the same row waits, then reads what this one wrote);
 * SQLite has one writer at a time, so its transaction is the lock and the read is plain.
 */
import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { decodeRow, type Raw } from "./codec.ts"
import type { TaskRow } from "./model.ts"

/**
 * Task `id`'s row, locked for the caller's transaction; `None` when there is none, or, with
 * `live`, when it is not scheduled, running or paused.
 */
export const lockedRow = (
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  id: string,
  options?: { readonly live?: boolean },
): Effect.Effect<Option.Option<TaskRow>, SqlError> =>
  Effect.map(
    sql<Raw>`SELECT * FROM tickwork_tasks WHERE id = ${id} ${sql.literal(
      options?.live === true ? "AND state IN ('scheduled', 'running', 'paused')" : "",
    )} ${sql.literal(dialect === "pg" ? "FOR UPDATE" : "")}`,
    (rows) => Option.map(Option.fromNullishOr(rows[0]), decodeRow),
  )
