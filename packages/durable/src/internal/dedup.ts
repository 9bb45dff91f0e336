/**
 * @internal
 * The store's schedule under deduplication keys (SPEC §20.3): in one transaction, each key's
 * holder is found (on PostgreSQL after a transaction-scoped advisory lock on the key, so that
 * processes scheduling the same key at once take turns and converge on one holder), core's
 * `Rules.decideDedup` decides, and the decision is written: a new row (the key's new holder),
 * a `deduplicated` event on the holder, or the holder replaced in place through `modify` (the
 * code path of `update`). No rule is stated here: the SQL only finds and writes rows.
 */
import { type Errors, Rules, type Task } from "@tickwork/core"
import { type Array as Arr, Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { StoreError } from "../Errors.ts"
import { decodeRow, type Raw } from "./codec.ts"
import * as Events from "./events.ts"
import * as Failure from "./failure.ts"
import * as Insert from "./insert.ts"
import type { EventEntry, Modification, NewTask, Rejected, TaskRow } from "./model.ts"
import * as Modify from "./modify.ts"
import * as Write from "./write.ts"

/**
 * The advisory lock class of deduplication keys ("dedu" in ASCII), beside the fleet's owner
 * locks ("tick", `fleet.ts`): a key's lock never collides with an owner's.
 */
export const LOCK_CLASS_DEDUP = 0x64656475

/** What one schedule did: the id it answers with and whether it created that task. */
export interface Keyed {
  readonly id: string
  readonly outcome: "created" | "deduplicated" | "replaced"
}

/** How the caller's side of a keyed schedule is done: who records, and a debounce's update. */
export interface KeyedOptions<E> {
  /** The process recording the events (`owner` of the `deduplicated` event). */
  readonly owner: string | null
  /** With a store that notifies: tell other processes once the new rows commit. */
  readonly notify: boolean
  /**
   * The update (SPEC §15) that replaces the pending holder `row` with request `k` (debounce),
   * or its typed error (then the whole schedule changes nothing).
   */
  readonly replace: (k: number, row: TaskRow) => Modification | Rejected<E>
  /** Hears every event written, once written. */
  readonly committed?: ((event: EventEntry) => void) | undefined
}

/**
 * The newest row under `key` (its holder: the last task created under it), read in the
 * caller's transaction. `undefined` when no row has the key (none was created, or retention
 * dropped it), which `Rules.decideDedup` reads as a free key.
 */
const holderOf = (sql: SqlClient, key: string) =>
  Effect.map(
    sql<Raw>`SELECT * FROM tickwork_tasks WHERE dedup_key = ${key}
      ORDER BY created_at DESC, seq DESC LIMIT 1`,
    (rows) => (rows.length === 0 ? undefined : decodeRow(rows[0] as Raw)),
  )

/**
 * Schedules `tasks` (accepted at `tasks[0].now`) in order, in one transaction, all or none: a
 * task without a key is inserted; one with a key is decided by `Rules.decideDedup` against the
 * key's holder as the transaction sees it, so a later task in the batch sees an earlier one.
 * On PostgreSQL the keys are locked first, sorted, so batches sharing keys never deadlock.
 */
export const scheduleKeyed = <E>(
  sql: SqlClient,
  dialect: "sqlite" | "pg",
  notices: Parameters<typeof Insert.insert>[2],
  tasks: Arr.NonEmptyReadonlyArray<NewTask>,
  options: KeyedOptions<E>,
): Effect.Effect<ReadonlyArray<Keyed>, Errors.DuplicateTaskId | StoreError | E> => {
  const written: Array<EventEntry> = []
  const body = Effect.gen(function* () {
    if (dialect === "pg") {
      const keys = [...new Set(tasks.flatMap((t) => (t.dedup === undefined ? [] : [t.dedup.key])))]
      keys.sort()
      // Transaction-scoped: released at COMMIT or ROLLBACK, whatever happens to the process.
      for (const key of keys) {
        yield* sql`SELECT pg_advisory_xact_lock(${LOCK_CLASS_DEDUP}, hashtext(${key}))`
      }
    }
    const out: Array<Keyed> = []
    let notified = false
    for (let k = 0; k < tasks.length; k++) {
      const task = tasks[k] as NewTask
      const dedup = task.dedup
      const holder = dedup === undefined ? undefined : yield* holderOf(sql, dedup.key)
      const decision =
        dedup === undefined
          ? ({ outcome: "created" } as const)
          : Rules.decideDedup(
              dedup,
              holder === undefined
                ? undefined
                : {
                    id: holder.id as Task.TaskId,
                    state: holder.state,
                    acceptedAt: holder.createdAt,
                  },
              task.now,
            )
      if (decision.outcome === "created") {
        // One notice per batch, in the first insert's statement (PostgreSQL: on commit).
        yield* Insert.insert(sql, dialect, notices, [task], {
          notify: options.notify && !notified,
        })
        notified = true
        out.push({ id: task.id, outcome: "created" })
        continue
      }
      const row = holder as TaskRow
      const event = Events.make("deduplicated", row, task.now, options.owner, {
        cause: decision.outcome,
        detail: `key ${JSON.stringify(dedup?.key)}, mode ${dedup?.mode}`,
      })
      if (decision.outcome === "deduplicated") {
        yield* Write.events(sql, [event])
        written.push(event)
      } else {
        const wrote = yield* Modify.modify<E>(
          sql,
          dialect,
          row.id,
          (current) => {
            const m = options.replace(k, current)
            return "rejected" in m ? m : { ...m, events: [...m.events, event] }
          },
          (e) => written.push(e),
        )
        // The holder was read live in this transaction (and locked by its key): it is written.
        if (!wrote)
          return yield* Effect.fail(Failure.storeError("replace the key's holder", row.id))
      }
      out.push({ id: row.id, outcome: decision.outcome })
    }
    return out
  })
  return sql.withTransaction(body).pipe(
    Effect.catch((e): Effect.Effect<never, Errors.DuplicateTaskId | StoreError | E> => {
      if (e instanceof StoreError) return Effect.fail(e)
      if (typeof e === "object" && e !== null && "_tag" in e && e._tag === "SqlError") {
        return Effect.fail(Failure.storeError("schedule under a deduplication key", e))
      }
      return Effect.fail(e as E)
    }),
    Effect.tap(() =>
      Effect.sync(() => {
        if (options.committed !== undefined) for (const e of written) options.committed(e)
      }),
    ),
  )
}
