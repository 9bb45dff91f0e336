/**
 * Whole-table snapshots for the all-or-nothing tests (`batch`, `ensure-batch`): every row of
 * each query's result, read over a second connection while the scheduler runs, so that a failed
 * batch can be shown to have left every table byte for byte as it was.
 */
import { PgClient } from "@effect/sql-pg"
import Database from "better-sqlite3"
import { Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"

/** The rows of each query on the SQLite file `filename`, opened read-only. */
export const sqliteSnapshot = async (
  filename: string,
  queries: ReadonlyArray<string>,
): Promise<ReadonlyArray<ReadonlyArray<unknown>>> => {
  const db = new Database(filename, { readonly: true })
  try {
    return queries.map((q) => db.prepare(q).all())
  } finally {
    db.close()
  }
}

/** The rows of each query on the PostgreSQL database at `url`, over one connection. */
export const pgSnapshot = (
  url: string,
  queries: ReadonlyArray<string>,
): Promise<ReadonlyArray<ReadonlyArray<unknown>>> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(PgClient.make({ url: Redacted.make(url), maxConnections: 1 }), (sql) =>
        Effect.forEach(queries, (q) => sql.unsafe(q)),
      ),
    ).pipe(Effect.provide(Reactivity.layer)),
  )
