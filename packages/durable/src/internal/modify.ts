/**
 * @internal
 * The store's modify: the controls' "load row → decide → store row" (pause, resume, update) as
 * one transaction. The decision is the caller's (the core's rules); this module only reads the
 * row, locks it (its breaker first, the lock order of every breaker step), writes the decision
 * and moves the task between breakers as the decision says.
 */
import { Breaker } from "@tickwork/core"
import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { StoreError } from "../Errors.ts"
import * as Breakers from "./breakers.ts"
import { decodeRow, type Raw } from "./codec.ts"
import * as Failure from "./failure.ts"
import { lockedRow } from "./locked.ts"
import type { EventEntry, Modification, Rejected, TaskRow } from "./model.ts"
import * as Write from "./write.ts"

/** A decision's typed error, carried out of the transaction (which it rolls back). */
class Refused {
  readonly error: unknown
  constructor(error: unknown) {
    this.error = error
  }
}
/**
 * Reads live task `id`'s row and writes what `decide` makes of it, in one transaction (see
 * `TaskStoreShape.modify`): `decide`'s `undefined` changes nothing, its rejection changes
 * nothing and fails with it. A modification that moves the task between breakers has it leave
 * the old one and join the new one in that transaction. Returns whether it wrote; `committed`
 * hears every event written, once the transaction committed.
 */
export const modify = <E>(
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  id: string,
  decide: (row: TaskRow) => Modification | undefined | Rejected<E>,
  committed: ((event: EventEntry) => void) | undefined,
): Effect.Effect<boolean, StoreError | E> => {
  // Every event written in the transaction, handed to `committed` once it commits.
  const written: Array<EventEntry> = []
  const writeEvents = (list: ReadonlyArray<EventEntry>) => {
    written.push(...list)
    return Write.events(sql, list)
  }
  return sql
    .withTransaction(
      Effect.gen(function* () {
        if (dialect === "pg") {
          // Its breaker first, then the row (the lock order of every breaker step), and
          // the row locked while the decision is made on it.
          yield* sql`SELECT key FROM tickwork_breakers WHERE key =
            (SELECT breaker FROM tickwork_tasks WHERE id = ${id}) FOR UPDATE`
        }
        const found = yield* lockedRow(sql, dialect, id, { live: true })
        if (Option.isNone(found)) return false
        const row = found.value
        const change = decide(row)
        if (change === undefined) return false
        if ("rejected" in change) return yield* Effect.fail(new Refused(change.rejected))
        const u = change.update
        if (!(yield* Write.row(sql, row, u))) return false
        yield* writeEvents(change.events)
        const moves = change.breaker
        if (moves?.unprobe !== undefined) {
          const tx: Breakers.Tx = { sql, dialect, seq: () => u.seq, owner: null }
          const key = moves.unprobe
          yield* writeEvents(yield* Breakers.unprobe(tx, key, row, u.updatedAt))
        }
        if (moves !== undefined && (moves.leave !== null || moves.join !== null)) {
          const now = u.updatedAt
          const tx: Breakers.Tx = { sql, dialect, seq: () => u.seq, owner: null }
          if (moves.leave !== null) {
            yield* writeEvents(yield* Breakers.leave(tx, moves.leave, row, now))
          }
          if (moves.own !== undefined) {
            yield* Breakers.define(tx, [{ ...moves.own, shared: false }], now)
          }
          const joined = moves.join === null ? undefined : yield* Breakers.load(tx, moves.join)
          if (moves.join !== null) {
            const state = u.state as "scheduled" | "running" | "paused"
            const task = {
              id,
              generation: row.generation,
              slot: u.slot,
              fence: row.fence,
              state,
            }
            yield* writeEvents(yield* Breakers.join(tx, moves.join, task, now))
          }
          // Held by the breaker it left, and the one it joined does not hold it: unheld.
          if (Breaker.unheldOnLeave(joined?.state)) {
            const current = yield* sql<Raw>`SELECT * FROM tickwork_tasks WHERE id = ${id}`
            const now2 = decodeRow(current[0] as Raw)
            if (now2.pausedReason === "breaker" && moves.leave !== null) {
              yield* writeEvents(yield* Breakers.resumeTask(tx, now2, now))
            }
          }
        }
        return true
      }),
    )
    .pipe(
      Effect.catch((e): Effect.Effect<never, StoreError | E> => {
        if (e instanceof Refused) return Effect.fail(e.error as E)
        if (e instanceof StoreError) return Effect.fail(e)
        return Effect.fail(Failure.storeError("change a task", e))
      }),
      Effect.tap((wrote) =>
        Effect.sync(() => {
          if (wrote && committed !== undefined) for (const e of written) committed(e)
        }),
      ),
    )
}

/**
 * Locks the breakers of tasks `ids` and then their rows, each in a fixed order (breakers by
 * key, rows by id), inside the caller's transaction (PostgreSQL): see `TaskStoreShape.lock`.
 * Breakers first is the lock order of every breaker step (see {@link modify}).
 */
export const lock = (sql: SqlClient, ids: ReadonlyArray<string>): Effect.Effect<void, StoreError> =>
  Effect.gen(function* () {
    yield* sql`SELECT key FROM tickwork_breakers WHERE key IN
      (SELECT breaker FROM tickwork_tasks WHERE id IN ${sql.in(ids)})
      ORDER BY key FOR UPDATE`
    yield* sql`SELECT id FROM tickwork_tasks WHERE id IN ${sql.in(ids)} ORDER BY id FOR UPDATE`
  }).pipe(Effect.mapError(Failure.failing("lock tasks")))
