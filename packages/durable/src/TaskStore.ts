/**
 * The `TaskStore` service: durable tasks kept as rows, claimed with a lease, completed under a
 * fence. One table shape, one set of migrations and one set of statements serve both
 * implementations — SQLite (`Sqlite.layer`, one process) and PostgreSQL (`Postgres.layer`,
 * several processes) — through `effect/sql`; only the claim differs (PostgreSQL adds
 * `FOR UPDATE SKIP LOCKED`).
 *
 * ```text
 * tickwork_tasks   one row per task id: its definition (handler, payload, schedule, policies),
 *                  its lifecycle state and counters, and
 *                    slot    the grid slot being worked on ((id, slot) is the idempotency key)
 *                    run_at  when the pending attempt is due (the slot, or a retry's time)
 *                    due_at  when the row can be claimed: run_at while scheduled, the lease's
 *                            expiry while running (a dead owner's runs are simply due again)
 *                    fence   raised by every claim; a completion must present the current one
 * tickwork_runs    the ledger of runs whose completion committed: one row per
 *                  (task id, generation, slot, attempt)
 * tickwork_events  what did not run, and why: skipped, coalesced, fenced-out, cancelled,
 *                  recovered, released
 * ```
 *
 * Times are epoch milliseconds from the scheduler's `Clock`; processes sharing a PostgreSQL store
 * should keep their clocks in sync (NTP), well within a lease period.
 *
 * @since 0.1.0
 */
import { Breaker, Errors, type Task } from "@tickwork/core"
import { Array as Arr, Context, Effect, Option, type Queue, type Scope } from "effect"
import type * as Migrator from "effect/sql/Migrator"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { StoreError } from "./Errors.ts"
import * as Breakers from "./internal/breakers.ts"
import * as Claim from "./internal/claim.ts"
import {
  decodeEvent,
  decodeRow,
  decodeRun,
  eventRecord,
  num,
  type Raw,
  strOrNull,
  taskRecord,
} from "./internal/codec.ts"
import * as Commit from "./internal/commit.ts"
import * as Deadline from "./internal/deadline.ts"
import * as Events from "./internal/events.ts"
import * as Failure from "./internal/failure.ts"
import * as Fleet from "./internal/fleet.ts"
import * as Ids from "./internal/ids.ts"
import { migrate } from "./internal/migrations.ts"
import type {
  BreakerView,
  Cancelled,
  Change,
  ClaimOptions,
  CommitContext,
  Committed,
  Counts,
  EventEntry,
  Modification,
  NewTask,
  NextTimes,
  Query,
  Rejected,
  RunEntry,
  Session,
  TakenOver,
  TaskRow,
} from "./internal/model.ts"
import * as Write from "./internal/write.ts"

/**
 * The store's models (rows, ledger entries, changes and their results), kept in their own module
 * so that the parts of the store can share them without importing the store.
 *
 * @category models
 * @since 0.1.0
 */
export type {
  BreakerRow,
  BreakerView,
  Cancelled,
  Change,
  ChangeResult,
  ClaimOptions,
  CommitContext,
  Committed,
  Counts,
  Decided,
  Definition,
  EventEntry,
  EventKind,
  Modification,
  NewTask,
  NextTimes,
  Query,
  Rejected,
  RowUpdate,
  RunEntry,
  Session,
  TakenOver,
  TaskRow,
} from "./internal/model.ts"

/**
 * The store's operations. Every write is one transaction; none is half-applied. Every operation
 * has a deadline (see {@link make}); failures are `StoreError`s whose `reason` says what went
 * wrong. Lookups of an id no store can keep find nothing.
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskStoreShape {
  readonly dialect: "sqlite" | "pg"
  /**
   * Whether this process is the store's only user (SQLite's exclusive lock): then nobody else
   * inserts or claims, so no poll is needed, and rows left `running` by a crash are recovered at
   * once when the scheduler starts.
   */
  readonly exclusive: boolean
  /**
   * Inserts tasks, all or none. An id whose task is final is reused (generation + 1); an id
   * whose task is scheduled or running fails with `DuplicateTaskId`; an id no store can keep
   * (empty, over 1,024 UTF-8 bytes, with NUL or a lone surrogate) fails with `InvalidOption`
   * naming `id`, before anything is sent. Returns the generations. With `notify` (a store with
   * {@link signal}), other processes are told once the rows commit: on PostgreSQL by
   * `pg_notify` in the insert's own statement (or transaction), not in a round trip after it.
   */
  readonly insert: (
    tasks: Arr.NonEmptyReadonlyArray<NewTask>,
    options?: { readonly notify?: boolean | undefined },
  ) => Effect.Effect<
    ReadonlyArray<number>,
    Errors.DuplicateTaskId | Errors.InvalidOption | StoreError
  >
  /**
   * Cancels a scheduled, running or paused task, recording it (with `origin`, when given, on its
   * event); `None` if it was none of those.
   */
  readonly cancel: (
    id: string,
    now: number,
    origin?: string | undefined,
  ) => Effect.Effect<Option.Option<Cancelled>, StoreError>
  /** A task's row; a row that cannot be read (edited by hand) is a `StoreError` saying so. */
  readonly get: (id: string) => Effect.Effect<Option.Option<TaskRow>, StoreError>
  /**
   * Reads a live (scheduled, running or paused) task's row and writes what `decide` makes of it,
   * in one transaction; `decide` returns `undefined` to change nothing, or a typed error (an
   * update's bad field) to change nothing and fail with it. Returns whether it wrote. The
   * controls (pause, resume, update) use it: the decision is the core's, the store only keeps
   * rows. A modification that moves the task between breakers has it leave the old one and join
   * the new one in the same transaction.
   */
  readonly modify: <E = never>(
    id: string,
    decide: (row: TaskRow) => Modification | undefined | Rejected<E>,
    /** Hears every event the change wrote (its own and its breakers'), once it committed. */
    committed?: (event: EventEntry) => void,
  ) => Effect.Effect<boolean, StoreError | E>
  /**
   * Tasks matching `query`, live and retained final ones, by id, at most `query.limit` of them
   * after `query.after`: one indexed statement (by tag through `tickwork_tags`), O(limit) rows.
   */
  readonly list: (query: Query) => Effect.Effect<ReadonlyArray<TaskRow>, StoreError>
  /** Creates the layer's shared breakers (a policy given again replaces the stored one). */
  readonly defineBreakers: (
    list: ReadonlyArray<{ readonly name: string; readonly policy: Breaker.Resolved }>,
    now: number,
  ) => Effect.Effect<void, StoreError>
  /**
   * Every shared breaker and the own breakers of live tasks, each with its live tasks and
   * those it holds. O(breakers + their tasks).
   */
  readonly breakers: Effect.Effect<ReadonlyArray<BreakerView>, StoreError>
  /**
   * The half-open step at `now` (SPEC §7): open breakers whose cool-down ended go half-open and
   * let a probe through, in one transaction. Returns the events (transitions, tasks resumed).
   */
  readonly halfOpen: (
    now: number,
    context: CommitContext,
  ) => Effect.Effect<ReadonlyArray<EventEntry>, StoreError>
  /** The earliest half-open time of an open breaker: the dispatcher wakes then. */
  readonly nextHalfOpen: Effect.Effect<number | undefined, StoreError>
  /** A task's state alone. */
  readonly state: (id: string) => Effect.Effect<Option.Option<Task.TaskState>, StoreError>
  /**
   * Claims up to `limit` due rows (scheduled, or running with an expired lease), earliest
   * first: each becomes `running`, leased to `owner` until `now + leaseMs`, with a new fence.
   */
  readonly claim: (options: ClaimOptions) => Effect.Effect<ReadonlyArray<TaskRow>, StoreError>
  /**
   * Applies changes in one transaction, each under its fence; a change decided again (see
   * {@link Change.redecide}) moves its breaker in that transaction. `context` gives released
   * tasks their push order.
   */
  readonly commit: (
    changes: ReadonlyArray<Change>,
    context?: CommitContext,
  ) => Effect.Effect<Committed, StoreError>
  /**
   * Extends the leases `owner` still holds under these fences; returns the ids renewed. A task
   * cancelled while it runs keeps its lease: its run finishes (cancellation is cooperative).
   */
  readonly renew: (
    owner: string,
    held: ReadonlyArray<{ readonly id: string; readonly fence: number }>,
    now: number,
    leaseMs: number,
  ) => Effect.Effect<ReadonlySet<string>, StoreError>
  /** The earliest `due_at` of the claimable rows of these handlers. */
  readonly nextDue: (
    handlers: ReadonlyArray<string>,
  ) => Effect.Effect<number | undefined, StoreError>
  /**
   * {@link nextDue} (none for no handlers) and {@link nextHalfOpen} in one statement: what the
   * dispatcher reads before it sleeps, in one round trip instead of two.
   */
  readonly nextTimes: (handlers: ReadonlyArray<string>) => Effect.Effect<NextTimes, StoreError>
  /**
   * Makes every `running` row due again at its `run_at`, recording a `recovered` event: for an
   * exclusive store when it is reopened (the runs it had in flight were cut off). Returns how many.
   */
  readonly recover: (now: number) => Effect.Effect<number, StoreError>
  /** The run ledger of a task, oldest first. */
  readonly runs: (id: string) => Effect.Effect<ReadonlyArray<RunEntry>, StoreError>
  /** The events of a task, oldest first. */
  readonly events: (id: string) => Effect.Effect<ReadonlyArray<EventEntry>, StoreError>
  readonly counts: Effect.Effect<Counts, StoreError>
  /** Deletes ledger rows and final tasks that ended before `before`. */
  readonly prune: (before: number) => Effect.Effect<void, StoreError>
  /**
   * Liveness from the database session (a shared store): opens a dedicated connection (not from
   * the pool) and takes `owner`'s lock on it, held until the scope closes or the session ends.
   * Fails if the lock is held by another session (a process of the same name that is still
   * alive, or an ended session the server has not noticed yet).
   */
  readonly session?:
    | ((owner: string) => Effect.Effect<Session, StoreError, Scope.Scope>)
    | undefined
  /**
   * SQLite: the file, and its integrity check (`PRAGMA quick_check`), run after a statement
   * failed as `corrupt`: what it finds wrong (at most 10 findings), empty when it finds nothing.
   * Absent on PostgreSQL, whose server checks its own pages.
   *
   * @since 0.4.0
   */
  readonly integrity?:
    | {
        readonly filename: string
        readonly check: Effect.Effect<ReadonlyArray<string>>
      }
    | undefined
  /**
   * Makes due at once the claims of owners whose session ended (other than `owner`; `owner`'s
   * own too when `mine`), recording a `recovered` event for each; returns them. A shared store
   * with {@link session} only.
   */
  readonly takeOver?:
    | ((
        owner: string,
        now: number,
        mine: boolean,
      ) => Effect.Effect<ReadonlyArray<TakenOver>, StoreError>)
    | undefined
  /**
   * Cross-process wake-ups, for a shared store that has them (PostgreSQL `LISTEN`/`NOTIFY`):
   * `notify` tells every listening process that a task is due soon; `listen` delivers those
   * notices (its own included) while the scope lasts. Without it, other processes see new
   * work at their next poll.
   */
  readonly signal?:
    | {
        readonly notify: Effect.Effect<void, StoreError>
        readonly listen: Effect.Effect<Queue.Dequeue<unknown, unknown>, StoreError, Scope.Scope>
      }
    | undefined
}

/**
 * The TaskStore service.
 *
 * @category services
 * @since 0.1.0
 */
export class TaskStore extends Context.Service<TaskStore, TaskStoreShape>()(
  "@tickwork/durable/TaskStore",
) {}

/** Rows per multi-row INSERT: 24 columns × 400 stays under both engines' parameter limits. */
const CHUNK = 400

// ------------------------------------------------------------------------------ the store

/**
 * A `StoreError` for a failed operation: its `reason` and `detail` are diagnosed from the
 * driver's nested errors (the database's own message and code), and its message says both in
 * one line, e.g. `the task store failed to complete runs: the disk is full: database or disk is
 * full (SQLITE_FULL)`.
 *
 * @category errors
 * @since 0.1.0
 */
export const storeError: (operation: string, cause: unknown) => StoreError = Failure.storeError

/**
 * The store over the `SqlClient` in context, after running the migrations. `exclusive` says
 * whether this process is the store's only user (see {@link TaskStoreShape.exclusive}).
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (options: {
  readonly exclusive: boolean
  /** LISTEN/NOTIFY on PostgreSQL: see {@link TaskStoreShape.signal}. */
  readonly signal?: TaskStoreShape["signal"]
  /**
   * The channel `signal` notifies on (PostgreSQL): an insert that notifies calls `pg_notify` on
   * it in its own statement. Without it, `signal.notify` follows the insert.
   */
  readonly channel?: string | undefined
  /** The dedicated liveness session: see {@link TaskStoreShape.session}. */
  readonly session?: TaskStoreShape["session"]
  /** The integrity check (SQLite): see {@link TaskStoreShape.integrity}. */
  readonly integrity?: TaskStoreShape["integrity"]
  /**
   * How long one operation (a statement, or a transaction with its connection checkout) may
   * take, in ms, before it fails with a `StoreError` of reason `timeout`. The operation is
   * abandoned on its own fiber, so a connection that never answers cannot hold up the caller;
   * the next attempt takes another connection. None for SQLite, whose statements run
   * synchronously on the calling thread and wait for a lock at most its `busy_timeout`.
   */
  readonly deadlineMs?: number | undefined
  /**
   * Run the migrations first (default true). A reader that must not write (an inspection of a
   * store a scheduler migrated) sets it to false.
   */
  readonly migrate?: boolean | undefined
}): Effect.Effect<TaskStoreShape, Migrator.MigrationError | SqlError, SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient
    if (options.migrate !== false) yield* migrate
    const dialect: "sqlite" | "pg" = sql.onDialectOrElse({
      pg: () => "pg" as const,
      orElse: () => "sqlite" as const,
    })
    const fail =
      (operation: string) =>
      (error: SqlError): StoreError =>
        storeError(operation, error)

    const deadline = Deadline.make(options.deadlineMs)

    /** The channel inserts notify on in their own statement (PostgreSQL), if any. */
    const channel = dialect === "pg" ? options.channel : undefined

    const insertChunk = (chunk: Arr.NonEmptyReadonlyArray<NewTask>, notify = false) =>
      Effect.gen(function* () {
        const upsert = sql<{ id: string; generation: unknown }>`
          INSERT INTO tickwork_tasks ${sql.insert(Arr.map(chunk, taskRecord))}
          ON CONFLICT (id) DO UPDATE SET
            generation = tickwork_tasks.generation + 1,
            handler = excluded.handler, payload = excluded.payload, schedule = excluded.schedule,
            priority = excluded.priority, retry = excluded.retry,
            missed_runs = excluded.missed_runs, pause_after = excluded.pause_after,
            timeout_ms = excluded.timeout_ms, state = excluded.state, slot = excluded.slot,
            run_at = excluded.run_at, due_at = excluded.due_at, attempt = excluded.attempt,
            run_number = excluded.run_number,
            consecutive_failures = excluded.consecutive_failures,
            deliveries = excluded.deliveries, fence = tickwork_tasks.fence + 1,
            lease_owner = excluded.lease_owner, seq = excluded.seq,
            created_at = excluded.created_at,
            updated_at = excluded.updated_at, finished_at = excluded.finished_at,
            last_error = excluded.last_error, paused_reason = excluded.paused_reason,
            resume_from = excluded.resume_from, tags = excluded.tags,
            window_ms = excluded.window_ms, breaker = excluded.breaker,
            restart = excluded.restart, revision = excluded.revision
          WHERE tickwork_tasks.state IN ('done', 'failed', 'cancelled')
          RETURNING id, generation`
        // NOTIFY is transactional: delivered when this statement commits, never for no row.
        const rows = yield* notify && channel !== undefined
          ? sql<{ id: string; generation: unknown }>`
              WITH ins AS (${upsert})
              SELECT id, generation, (SELECT pg_notify(${channel}, '')) AS notified FROM ins`
          : upsert
        if (rows.length === chunk.length) {
          const byId = new Map(rows.map((r) => [String(r.id), num(r.generation)]))
          return chunk.map((t) => byId.get(t.id) as number)
        }
        const written = new Set(rows.map((r) => String(r.id)))
        const live = chunk.find((t) => !written.has(t.id)) as NewTask
        return yield* new Errors.DuplicateTaskId({
          field: "id",
          value: live.id,
          message: `id ${Errors.show(live.id)} belongs to a task that is still scheduled or running`,
        })
      })

    const insert: TaskStoreShape["insert"] = (tasks, insertOptions) => {
      const seen = new Set<string>()
      for (const t of tasks) {
        if (seen.has(t.id)) {
          return Effect.fail(
            new Errors.DuplicateTaskId({
              field: "id",
              value: t.id,
              message: `id ${Errors.show(t.id)} appears twice in one batch`,
            }),
          )
        }
        seen.add(t.id)
      }
      const chunks = Arr.chunksOf(tasks, CHUNK)
      // Tags and breakers are written beside the rows: then one transaction holds them all.
      const extras = tasks.some((t) => (t.tags?.length ?? 0) > 0 || t.breaker !== undefined)
      const notify = insertOptions?.notify === true && options.signal !== undefined
      // All or none: the upsert skips a live id's row and writes the others, so any batch of
      // more than one row runs in a transaction that the `DuplicateTaskId` rolls back. One row
      // and nothing beside it is one statement, atomic by itself, and saves BEGIN/COMMIT.
      const all =
        tasks.length === 1 && !extras
          ? insertChunk(chunks[0], notify)
          : sql.withTransaction(
              Effect.gen(function* () {
                const gs = (yield* Effect.forEach(chunks, (c) => insertChunk(c))).flat()
                if (notify && channel !== undefined) yield* sql`SELECT pg_notify(${channel}, '')`
                if (!extras) return gs
                // A reused id's old tags go; a task's own breaker starts closed.
                yield* Write.tags(
                  sql,
                  tasks.map((t, k) => ({
                    id: t.id,
                    generation: gs[k] as number,
                    tags: t.tags ?? [],
                  })),
                )
                const tx: Breakers.Tx = { sql, dialect, seq: () => 0, owner: null }
                const now = tasks[0].now
                const own = tasks.flatMap((t) =>
                  t.breaker !== undefined && t.breaker.key === Breakers.ownKey(t.id)
                    ? [{ ...t.breaker, shared: false }]
                    : [],
                )
                yield* Breakers.define(tx, own, now)
                for (let k = 0; k < tasks.length; k++) {
                  const t = tasks[k] as NewTask
                  if (t.breaker === undefined) continue
                  const joined = yield* Breakers.join(
                    tx,
                    t.breaker.key,
                    {
                      id: t.id,
                      generation: gs[k] as number,
                      slot: t.slot,
                      fence: 0,
                      state: "scheduled",
                    },
                    now,
                  )
                  yield* Write.events(sql, joined)
                }
                return gs
              }),
            )
      const inserted = Effect.mapError(all, (e) =>
        e._tag === "DuplicateTaskId" ? e : fail("insert")(e),
      )
      // A store that cannot notify in the insert's statement notifies after it.
      return notify && channel === undefined && options.signal !== undefined
        ? Effect.tap(inserted, () => Effect.ignore(options.signal?.notify ?? Effect.void))
        : inserted
    }

    const get: TaskStoreShape["get"] = (id) =>
      sql<Raw>`SELECT * FROM tickwork_tasks WHERE id = ${id}`.pipe(
        Effect.mapError(fail("read a task")),
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

    const state: TaskStoreShape["state"] = (id) =>
      sql<Raw>`SELECT state FROM tickwork_tasks WHERE id = ${id}`.pipe(
        Effect.map((rows) => Option.map(Arr.head(rows), (r) => String(r.state) as Task.TaskState)),
        Effect.mapError(fail("read a task's state")),
      )

    const cancel: TaskStoreShape["cancel"] = (id, now, origin) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const rows = yield* sql<Raw>`
              SELECT generation, state, slot, fence, lease_owner, breaker FROM tickwork_tasks
              WHERE id = ${id} AND state IN ('scheduled', 'running', 'paused')`
            const row = rows[0]
            if (row === undefined) return Option.none<Cancelled>()
            const found: Cancelled = {
              generation: num(row.generation),
              from: String(row.state) as Cancelled["from"],
              slot: num(row.slot),
              fence: num(row.fence),
              leaseOwner: strOrNull(row.lease_owner),
            }
            // The lease (and fence) stay: a run in flight still completes under its fence,
            // and its ledger row is written, but the task stays cancelled.
            yield* sql`UPDATE tickwork_tasks SET state = 'cancelled', finished_at = ${now},
              updated_at = ${now}, paused_reason = NULL WHERE id = ${id}`
            yield* sql`INSERT INTO tickwork_events ${sql.insert(
              eventRecord(
                Events.make("cancelled", { id, ...found }, now, found.leaseOwner, {
                  cause: found.from,
                  origin,
                }),
              ),
            )}`
            if (row.breaker !== null && row.breaker !== undefined) {
              const tx: Breakers.Tx = { sql, dialect, seq: () => now * 1000, owner: null }
              const left = yield* Breakers.leave(
                tx,
                String(row.breaker),
                { id, generation: found.generation },
                now,
              )
              yield* Write.events(sql, left)
            }
            return Option.some(found)
          }),
        )
        .pipe(Effect.mapError((e) => (e instanceof StoreError ? e : fail("cancel")(e as SqlError))))

    /** A decision's typed error, carried out of the transaction (which it rolls back). */
    class Refused {
      readonly error: unknown
      constructor(error: unknown) {
        this.error = error
      }
    }
    const modify = <E>(
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
            const rows =
              dialect === "pg"
                ? yield* sql<Raw>`SELECT * FROM tickwork_tasks
                    WHERE id = ${id} AND state IN ('scheduled', 'running', 'paused') FOR UPDATE`
                : yield* sql<Raw>`SELECT * FROM tickwork_tasks
                    WHERE id = ${id} AND state IN ('scheduled', 'running', 'paused')`
            const raw = rows[0]
            if (raw === undefined) return false
            const row = decodeRow(raw)
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
              // Held by the breaker it left, and the one it joined does not hold it: released.
              if (Breaker.releasedOnLeave(joined?.state)) {
                const current = yield* sql<Raw>`SELECT * FROM tickwork_tasks WHERE id = ${id}`
                const now2 = decodeRow(current[0] as Raw)
                if (now2.pausedReason === "breaker" && moves.leave !== null) {
                  yield* writeEvents(yield* Breakers.releaseTask(tx, now2, now))
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
            return Effect.fail(fail("change a task")(e as SqlError))
          }),
          Effect.tap((wrote) =>
            Effect.sync(() => {
              if (wrote && committed !== undefined) for (const e of written) committed(e)
            }),
          ),
        )
    }

    const list: TaskStoreShape["list"] = (q) => {
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
        Effect.mapError(fail("list tasks")),
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

    const defineBreakers: TaskStoreShape["defineBreakers"] = (shared, now) =>
      shared.length === 0
        ? Effect.void
        : sql
            .withTransaction(
              Breakers.define(
                { sql, dialect, seq: () => 0, owner: null },
                shared.map((b) => ({
                  key: Breakers.sharedKey(b.name),
                  name: b.name,
                  shared: true,
                  policy: b.policy,
                })),
                now,
              ),
            )
            .pipe(Effect.mapError(fail("define breakers")))

    const breakers: TaskStoreShape["breakers"] = Effect.gen(function* () {
      const rows = yield* Breakers.all(sql)
      const members = yield* sql<Raw>`SELECT id, breaker, state, paused_reason FROM tickwork_tasks
        WHERE breaker IS NOT NULL AND state IN ('scheduled', 'running', 'paused') ORDER BY id`
      const byKey = new Map<string, { tasks: Array<string>; held: Array<string> }>()
      for (const m of members) {
        const key = String(m.breaker)
        let v = byKey.get(key)
        if (v === undefined) {
          v = { tasks: [], held: [] }
          byKey.set(key, v)
        }
        v.tasks.push(String(m.id))
        if (m.state === "paused" && m.paused_reason === "breaker") v.held.push(String(m.id))
      }
      return rows.flatMap((breaker): Array<BreakerView> => {
        const v = byKey.get(breaker.key)
        // A task's own breaker is listed while its task lives.
        if (!breaker.shared && v === undefined) return []
        return [{ breaker, tasks: v?.tasks ?? [], held: v?.held ?? [] }]
      })
    }).pipe(Effect.mapError(fail("read the breakers")))

    const halfOpen: TaskStoreShape["halfOpen"] = (now, context) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const events = yield* Breakers.halfOpen(
              { sql, dialect, seq: context.seq, owner: context.owner },
              now,
            )
            yield* Write.events(sql, events)
            return events
          }),
        )
        .pipe(
          Effect.mapError((e) =>
            e instanceof StoreError ? e : fail("half-open breakers")(e as SqlError),
          ),
        )

    const nextHalfOpen: TaskStoreShape["nextHalfOpen"] = Breakers.nextHalfOpen(sql).pipe(
      Effect.mapError(fail("find the next half-open breaker")),
    )

    const claim: TaskStoreShape["claim"] = (o) =>
      Claim.claim(sql, dialect, o, dialect === "pg" && o.whileSessionHeld === true).pipe(
        Effect.mapError(fail("claim due tasks")),
      )

    const commit: TaskStoreShape["commit"] = (changes, context) =>
      changes.length === 0
        ? Effect.succeed({ results: [], decided: [], events: [] })
        : sql
            .withTransaction(
              Commit.commitAll(sql, dialect, changes, context ?? { seq: () => 0, owner: null }),
            )
            .pipe(
              Effect.mapError((e) =>
                e instanceof StoreError ? e : fail("complete runs")(e as SqlError),
              ),
            )

    const renew: TaskStoreShape["renew"] = (owner, held, now, leaseMs) =>
      held.length === 0
        ? Effect.succeed(new Set())
        : sql<Raw>`
            UPDATE tickwork_tasks SET due_at = ${now + leaseMs}
            WHERE state IN ('running', 'cancelled') AND lease_owner = ${owner}
              AND id IN ${sql.in(held.map((h) => h.id))}
            RETURNING id, fence`.pipe(
            Effect.map((rows) => {
              const fences = new Map(rows.map((r) => [String(r.id), num(r.fence)]))
              return new Set(held.filter((h) => fences.get(h.id) === h.fence).map((h) => h.id))
            }),
            Effect.mapError(fail("renew leases")),
          )

    const nextDue: TaskStoreShape["nextDue"] = (handlers) =>
      handlers.length === 0
        ? Effect.succeed(undefined)
        : sql<Raw>`
            SELECT due_at FROM tickwork_tasks
            WHERE state IN ('scheduled', 'running') AND handler IN ${sql.in(handlers)}
            ORDER BY due_at LIMIT 1`.pipe(
            Effect.map((rows) => (rows[0] === undefined ? undefined : num(rows[0].due_at))),
            Effect.mapError(fail("find the next due task")),
          )

    const nextTimes: TaskStoreShape["nextTimes"] = (handlers) =>
      sql<Raw>`
        SELECT ${
          handlers.length === 0
            ? sql`NULL`
            : sql`(SELECT due_at FROM tickwork_tasks
            WHERE state IN ('scheduled', 'running') AND handler IN ${sql.in(handlers)}
            ORDER BY due_at LIMIT 1)`
        } AS due,
          (SELECT MIN(half_open_at) FROM tickwork_breakers WHERE state = 'open') AS half_open`.pipe(
        Effect.map((rows) => {
          const r = rows[0]
          const at = (v: unknown) => (v === null || v === undefined ? undefined : num(v))
          return { due: at(r?.due), halfOpen: at(r?.half_open) }
        }),
        Effect.mapError(fail("find the next due time")),
      )

    const recover: TaskStoreShape["recover"] = (now) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const rows = yield* sql<Raw>`
              UPDATE tickwork_tasks SET state = 'scheduled', due_at = run_at, lease_owner = NULL,
                updated_at = ${now}
              WHERE state = 'running'
              RETURNING id, generation, slot, attempt, fence, lease_owner, deliveries`
            for (const chunk of Arr.chunksOf(rows, CHUNK)) {
              yield* sql`INSERT INTO tickwork_events ${sql.insert(
                Arr.map(chunk, (r) =>
                  eventRecord(
                    Events.make(
                      "recovered",
                      {
                        id: String(r.id),
                        generation: num(r.generation),
                        slot: num(r.slot),
                        fence: num(r.fence),
                      },
                      now,
                      strOrNull(r.lease_owner),
                      { detail: `attempt ${num(r.attempt)}, delivery ${num(r.deliveries)}` },
                    ),
                  ),
                ),
              )}`
            }
            return rows.length
          }),
        )
        .pipe(Effect.mapError(fail("recover interrupted runs")))

    const runs: TaskStoreShape["runs"] = (id) =>
      sql<Raw>`SELECT * FROM tickwork_runs WHERE task_id = ${id}
        ORDER BY generation, finished_at, slot, attempt`.pipe(
        Effect.map((rows) => rows.map(decodeRun)),
        Effect.mapError(fail("read the run ledger")),
      )

    const events: TaskStoreShape["events"] = (id) =>
      sql<Raw>`SELECT * FROM tickwork_events WHERE task_id = ${id} ORDER BY id`.pipe(
        Effect.map((rows) => rows.map(decodeEvent)),
        Effect.mapError(fail("read the events")),
      )

    const counts: TaskStoreShape["counts"] = sql<Raw>`
      SELECT state, COUNT(*) AS n FROM tickwork_tasks GROUP BY state`.pipe(
      Effect.map((rows) => {
        const out = { scheduled: 0, running: 0, paused: 0, done: 0, failed: 0, cancelled: 0 }
        for (const r of rows) out[String(r.state) as Task.TaskState] = num(r.n)
        return out
      }),
      Effect.mapError(fail("count tasks")),
    )

    const prune: TaskStoreShape["prune"] = (before) =>
      sql
        .withTransaction(
          Effect.all([
            sql`DELETE FROM tickwork_runs WHERE finished_at < ${before}`,
            sql`DELETE FROM tickwork_events WHERE at < ${before}`,
            sql`DELETE FROM tickwork_breakers WHERE shared = 0 AND NOT EXISTS (
              SELECT 1 FROM tickwork_tasks t WHERE t.breaker = tickwork_breakers.key
                AND t.state IN ('scheduled', 'running', 'paused'))`,
            sql`DELETE FROM tickwork_tasks
              WHERE state IN ('done', 'failed', 'cancelled') AND finished_at < ${before}`,
            // Tags of pruned tasks, and of earlier generations of reused ids.
            sql`DELETE FROM tickwork_tags WHERE NOT EXISTS (SELECT 1 FROM tickwork_tasks t
              WHERE t.id = tickwork_tags.task_id AND t.generation = tickwork_tags.generation)`,
          ]),
        )
        .pipe(Effect.asVoid, Effect.mapError(fail("prune the ledger")))

    const none = Effect.succeed(Option.none())
    return TaskStore.of({
      dialect,
      exclusive: options.exclusive,
      insert: (tasks, insertOptions) => {
        for (const t of tasks) {
          const bad = Ids.check("id", t.id)
          if (bad !== undefined) return Effect.fail(bad)
        }
        return deadline("insert")(insert(tasks, insertOptions))
      },
      cancel: (id, now, origin) =>
        Ids.storable(id) ? deadline("cancel")(cancel(id, now, origin)) : none,
      get: (id) => (Ids.storable(id) ? deadline("read a task")(get(id)) : none),
      state: (id) => (Ids.storable(id) ? deadline("read a task's state")(state(id)) : none),
      modify: (id, decide, committed) =>
        Ids.storable(id)
          ? deadline("change a task")(modify(id, decide, committed))
          : Effect.succeed(false),
      list: (q) => deadline("list tasks")(list(q)),
      defineBreakers: (shared, now) => deadline("define breakers")(defineBreakers(shared, now)),
      breakers: deadline("read the breakers")(breakers),
      halfOpen: (now, context) => deadline("half-open breakers")(halfOpen(now, context)),
      nextHalfOpen: deadline("find the next half-open breaker")(nextHalfOpen),
      claim: (o) => deadline("claim due tasks")(claim(o)),
      commit: (changes, context) => deadline("complete runs")(commit(changes, context)),
      renew: (owner, held, now, leaseMs) =>
        deadline("renew leases")(renew(owner, held, now, leaseMs)),
      nextDue: (handlers) => deadline("find the next due task")(nextDue(handlers)),
      nextTimes: (handlers) => deadline("find the next due time")(nextTimes(handlers)),
      recover: (now) => deadline("recover interrupted runs")(recover(now)),
      runs: (id) =>
        Ids.storable(id) ? deadline("read the run ledger")(runs(id)) : Effect.succeed([]),
      events: (id) =>
        Ids.storable(id) ? deadline("read the events")(events(id)) : Effect.succeed([]),
      counts: deadline("count tasks")(counts),
      prune: (before) => deadline("prune the ledger")(prune(before)),
      signal: options.signal,
      session: options.session,
      integrity: options.integrity,
      takeOver:
        dialect === "pg" && options.session !== undefined
          ? (owner, now, mine) =>
              deadline("take over the claims of ended sessions")(
                Effect.all([
                  mine
                    ? sql.withTransaction(Fleet.takeOver(sql, owner, now, [owner], true))
                    : Effect.succeed([]),
                  Fleet.deadOwners(sql, owner, now).pipe(
                    Effect.flatMap((dead) =>
                      dead.length > 0
                        ? sql.withTransaction(Fleet.takeOver(sql, owner, now, dead))
                        : Effect.succeed([]),
                    ),
                  ),
                ]).pipe(
                  Effect.map(([own, others]) => [...own, ...others]),
                  Effect.mapError(fail("take over the claims of ended sessions")),
                ),
              )
          : undefined,
    })
  })
