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
import { Errors, type MissedRun, type Retry, type Schedule, type Task } from "@tickwork/core"
import { Array as Arr, Context, Effect, Option, type Queue, type Scope } from "effect"
import type * as Migrator from "effect/sql/Migrator"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { StoreError } from "./Errors.ts"
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

/**
 * One task as stored.
 *
 * @category models
 * @since 0.1.0
 */
export interface TaskRow {
  readonly id: string
  /** Raised each time the id is reused after its previous task ended. */
  readonly generation: number
  readonly handler: string
  /** The payload as encoded by the handler's schema, JSON text. */
  readonly payload: string
  /** The schedule as stored (the core's encoded form). */
  readonly schedule: Schedule.Encoded
  /** The schedule's plan, read back from {@link schedule}; `undefined` for a one-shot. */
  readonly plan: Schedule.Plan | undefined
  /** 0 = high, 1 = normal, 2 = low (the core's priority ranks). */
  readonly priority: number
  readonly retry: Retry.Resolved
  readonly missedRuns: MissedRun.MissedRunPolicy
  /** `pauseAfterConsecutiveFailures`; 0 = never. */
  readonly pauseAfter: number
  /** Run timeout in ms; 0 = none. */
  readonly timeoutMs: number
  readonly state: Task.TaskState
  readonly slot: number
  readonly runAt: number
  readonly dueAt: number
  /** 1-based attempt of the slot. */
  readonly attempt: number
  /** Runs whose completion committed. */
  readonly runNumber: number
  readonly consecutiveFailures: number
  /** Claims of the pending (slot, attempt): more than 1 after a crash or a lost lease. */
  readonly deliveries: number
  readonly fence: number
  readonly leaseOwner: string | null
  /** Push order among equal due times and priorities (SPEC §4): the first pushed runs first. */
  readonly seq: number
  readonly createdAt: number
  readonly updatedAt: number
  readonly finishedAt: number | null
  /** The last failure, rendered. */
  readonly lastError: string | null
  /**
   * Why it is `paused`; while `running`, a pause asked for during the run (applied when it
   * ends). `null` otherwise.
   */
  readonly pausedReason: Task.PauseReason | null
  /**
   * Set when a held retry of a grid task was resumed: the grid slots before it were recorded as
   * skipped, so the slot after the retry is the first grid slot at or after it. Epoch ms, or -1.
   */
  readonly resumeFrom: number
}

/**
 * A task to insert, validated.
 *
 * @category models
 * @since 0.1.0
 */
export interface NewTask
  extends Pick<
    TaskRow,
    | "id"
    | "handler"
    | "payload"
    | "schedule"
    | "priority"
    | "retry"
    | "missedRuns"
    | "pauseAfter"
    | "timeoutMs"
    | "seq"
  > {
  /** The first slot. */
  readonly slot: number
  readonly now: number
}

/**
 * The new values of a claimed row.
 *
 * @category models
 * @since 0.1.0
 */
export interface RowUpdate {
  readonly state: Task.TaskState
  readonly slot: number
  readonly runAt: number
  readonly dueAt: number
  readonly attempt: number
  readonly runNumber: number
  readonly consecutiveFailures: number
  readonly deliveries: number
  readonly leaseOwner: string | null
  readonly finishedAt: number | null
  readonly lastError: string | null
  readonly seq: number
  readonly updatedAt: number
  /** Why the row is `paused`; `null` (or absent) in any other state. */
  readonly pausedReason?: Task.PauseReason | null | undefined
  /** See {@link TaskRow.resumeFrom}; -1 (or absent) when unset. */
  readonly resumeFrom?: number | undefined
}

/**
 * One row of the run ledger: a run whose completion committed.
 *
 * @category models
 * @since 0.1.0
 */
export interface RunEntry {
  readonly taskId: string
  readonly generation: number
  readonly slot: number
  readonly attempt: number
  /** When this attempt was due (`scheduledFor`). */
  readonly runAt: number
  readonly startedAt: number
  readonly finishedAt: number
  readonly outcome: Task.Outcome["kind"]
  /** The failure, rendered, for any outcome but `succeeded`. */
  readonly error: string | null
  readonly fence: number
  readonly owner: string
  readonly delivery: number
  /** The task's state after the run. */
  readonly state: Task.TaskState
  /** Where the task went next: a retry's time or the next slot; `null` when final. */
  readonly nextRunAt: number | null
}

/**
 * Kinds of ledger event.
 * - `skipped`: grid slots dropped (missed-run policy `skip`, or older than the catch-up window);
 * - `coalesced`: grid slots merged into one run (policy `coalesce`);
 * - `fenced-out`: a completion rejected because the lease had passed to another delivery;
 * - `cancelled`: the task was cancelled;
 * - `recovered`: a run cut off by a crash, made due again when the store was reopened;
 * - `released`: a claimed run handed back unfinished by a closing scheduler;
 * - `paused`, `resumed`: the task was paused (by hand, or by its failure policy) or resumed.
 *
 * @category models
 * @since 0.1.0
 */
export type EventKind =
  | "skipped"
  | "coalesced"
  | "fenced-out"
  | "cancelled"
  | "recovered"
  | "released"
  | "paused"
  | "resumed"

/**
 * One ledger event.
 *
 * @category models
 * @since 0.1.0
 */
export interface EventEntry {
  readonly taskId: string
  readonly generation: number
  readonly kind: EventKind
  /** The slots concerned, `firstSlot`…`lastSlot`, `count` of them (one slot for a run). */
  readonly firstSlot: number
  readonly lastSlot: number
  readonly count: number
  /**
   * Why: `late` / `overlap` / `late-and-overlap` (as the runtime's ledger says), `window`
   * (older than the catch-up window), or the state a cancel came from.
   */
  readonly cause: string | null
  readonly at: number
  readonly fence: number | null
  readonly owner: string | null
  /** Free text: the attempt and outcome of a fenced-out run, … */
  readonly detail: string | null
}

/**
 * A change to a claimed row, applied only while the row is still `running` under `fence`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Change {
  readonly id: string
  readonly fence: number
  readonly update: RowUpdate
  /**
   * The row's update instead of {@link update} when a pause was asked for while it ran (the
   * row's `pausedReason`): the same decision with that request.
   */
  readonly ifPauseRequested?:
    | ((reason: Task.PauseReason) => {
        readonly update: RowUpdate
        readonly run?: RunEntry | undefined
      })
    | undefined
  /** The run ledger row, when a run ended. */
  readonly run?: RunEntry | undefined
  readonly events: ReadonlyArray<EventEntry>
  /** Recorded instead of everything above when the fence no longer matches. */
  readonly fencedOut: EventEntry
}

/**
 * What became of a {@link Change}: `applied`; `held` (applied as {@link Change.ifPauseRequested}
 * decided: a pause was asked for while it ran); `cancelled` (the task was cancelled while it ran:
 * the run is recorded, the task stays cancelled); `fenced-out` (another delivery holds the row).
 *
 * @category models
 * @since 0.1.0
 */
export type ChangeResult = "applied" | "held" | "cancelled" | "fenced-out"

/**
 * What a cancel found.
 *
 * @category models
 * @since 0.1.0
 */
export interface Cancelled {
  readonly generation: number
  readonly from: "scheduled" | "running" | "paused"
  readonly slot: number
  readonly fence: number
  readonly leaseOwner: string | null
}

/**
 * Tasks by state.
 *
 * @category models
 * @since 0.1.0
 */
export type Counts = Readonly<Record<Task.TaskState, number>>

/**
 * What to claim.
 *
 * @category models
 * @since 0.1.0
 */
export interface ClaimOptions {
  readonly owner: string
  readonly now: number
  readonly limit: number
  readonly leaseMs: number
  /** Only tasks of these handlers (the ones this process can run). */
  readonly handlers: ReadonlyArray<string>
  /**
   * Claim only while `owner`'s liveness lock is held (see {@link TaskStoreShape.session}): a
   * process whose session has just ended claims nothing the others would take over at once.
   * PostgreSQL only; ignored by SQLite.
   */
  readonly whileSessionHeld?: boolean | undefined
}

/**
 * A claim taken over from a process whose database session ended: made due at once.
 *
 * @category models
 * @since 0.1.0
 */
export interface TakenOver {
  readonly id: string
  readonly generation: number
  readonly slot: number
  readonly attempt: number
  readonly fence: number
  /** The owner whose session ended. */
  readonly owner: string
  readonly delivery: number
}

/**
 * A process's liveness on a shared store (PostgreSQL): a dedicated session holding the
 * process's lock, which the database releases when the session ends. See
 * {@link TaskStoreShape.session}.
 *
 * @category models
 * @since 0.1.0
 */
export interface Session {
  /**
   * Other processes' notices that work is due soon (`LISTEN` on the same session). The queue
   * fails when the session is lost.
   */
  readonly notices: Queue.Dequeue<unknown, unknown>
  /** A round trip on the session: fails (or does not end) when it is lost. */
  readonly ping: Effect.Effect<void, StoreError>
}

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
   * naming `id`, before anything is sent. Returns the generations.
   */
  readonly insert: (
    tasks: Arr.NonEmptyReadonlyArray<NewTask>,
  ) => Effect.Effect<
    ReadonlyArray<number>,
    Errors.DuplicateTaskId | Errors.InvalidOption | StoreError
  >
  /** Cancels a scheduled, running or paused task, recording it; `None` if it was none of those. */
  readonly cancel: (id: string, now: number) => Effect.Effect<Option.Option<Cancelled>, StoreError>
  /** A task's row; a row that cannot be read (edited by hand) is a `StoreError` saying so. */
  readonly get: (id: string) => Effect.Effect<Option.Option<TaskRow>, StoreError>
  /**
   * Reads a live (scheduled, running or paused) task's row and writes what `decide` makes of it,
   * in one transaction; `decide` returns `undefined` to change nothing. Returns whether it wrote.
   * The controls (pause, resume) use it: the decision is the core's, the store only keeps rows.
   */
  readonly modify: (
    id: string,
    decide: (
      row: TaskRow,
    ) => { readonly update: RowUpdate; readonly events: ReadonlyArray<EventEntry> } | undefined,
  ) => Effect.Effect<boolean, StoreError>
  /** A task's state alone. */
  readonly state: (id: string) => Effect.Effect<Option.Option<Task.TaskState>, StoreError>
  /**
   * Claims up to `limit` due rows (scheduled, or running with an expired lease), earliest
   * first: each becomes `running`, leased to `owner` until `now + leaseMs`, with a new fence.
   */
  readonly claim: (options: ClaimOptions) => Effect.Effect<ReadonlyArray<TaskRow>, StoreError>
  /** Applies changes in one transaction, each under its fence. */
  readonly commit: (
    changes: ReadonlyArray<Change>,
  ) => Effect.Effect<ReadonlyArray<ChangeResult>, StoreError>
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
  /** The dedicated liveness session: see {@link TaskStoreShape.session}. */
  readonly session?: TaskStoreShape["session"]
  /**
   * How long one operation (a statement, or a transaction with its connection checkout) may
   * take, in ms, before it fails with a `StoreError` of reason `timeout`. The operation is
   * abandoned on its own fiber, so a connection that never answers cannot hold up the caller;
   * the next attempt takes another connection. None for SQLite, whose statements run
   * synchronously on the calling thread and wait for a lock at most its `busy_timeout`.
   */
  readonly deadlineMs?: number | undefined
}): Effect.Effect<TaskStoreShape, Migrator.MigrationError | SqlError, SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient
    yield* migrate
    const dialect: "sqlite" | "pg" = sql.onDialectOrElse({
      pg: () => "pg" as const,
      orElse: () => "sqlite" as const,
    })
    const fail =
      (operation: string) =>
      (error: SqlError): StoreError =>
        storeError(operation, error)

    const deadline = Deadline.make(options.deadlineMs)

    const insertChunk = (chunk: Arr.NonEmptyReadonlyArray<NewTask>) =>
      Effect.gen(function* () {
        const rows = yield* sql<{ id: string; generation: unknown }>`
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
            last_error = excluded.last_error
          WHERE tickwork_tasks.state IN ('done', 'failed', 'cancelled')
          RETURNING id, generation`
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

    const insert: TaskStoreShape["insert"] = (tasks) => {
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
      const all =
        chunks.length === 1
          ? insertChunk(chunks[0])
          : sql.withTransaction(Effect.map(Effect.forEach(chunks, insertChunk), (gs) => gs.flat()))
      return Effect.mapError(all, (e) => (e._tag === "DuplicateTaskId" ? e : fail("insert")(e)))
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

    const cancel: TaskStoreShape["cancel"] = (id, now) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const rows = yield* sql<Raw>`
              SELECT generation, state, slot, fence, lease_owner FROM tickwork_tasks
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
                }),
              ),
            )}`
            return Option.some(found)
          }),
        )
        .pipe(Effect.mapError(fail("cancel")))

    const modify: TaskStoreShape["modify"] = (id, decide) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            const rows = yield* sql<Raw>`SELECT * FROM tickwork_tasks
              WHERE id = ${id} AND state IN ('scheduled', 'running', 'paused')`
            const raw = rows[0]
            if (raw === undefined) return false
            const row = decodeRow(raw)
            const change = decide(row)
            if (change === undefined) return false
            const u = change.update
            yield* sql`UPDATE tickwork_tasks SET state = ${u.state}, slot = ${u.slot},
              run_at = ${u.runAt}, due_at = ${u.dueAt}, attempt = ${u.attempt},
              run_number = ${u.runNumber}, consecutive_failures = ${u.consecutiveFailures},
              deliveries = ${u.deliveries}, lease_owner = ${u.leaseOwner},
              finished_at = ${u.finishedAt}, last_error = ${u.lastError}, seq = ${u.seq},
              updated_at = ${u.updatedAt}, paused_reason = ${u.pausedReason ?? null},
              resume_from = ${u.resumeFrom ?? -1}
              WHERE id = ${id} AND fence = ${row.fence} AND state = ${row.state}`
            for (const chunk of Arr.chunksOf(change.events, CHUNK)) {
              yield* sql`INSERT INTO tickwork_events ${sql.insert(Arr.map(chunk, eventRecord))}`
            }
            return true
          }),
        )
        .pipe(
          Effect.mapError((e) =>
            e instanceof StoreError ? e : fail("change a task")(e as SqlError),
          ),
        )

    const claim: TaskStoreShape["claim"] = (o) =>
      Claim.claim(sql, dialect, o).pipe(Effect.mapError(fail("claim due tasks")))

    const commit: TaskStoreShape["commit"] = (changes) =>
      changes.length === 0
        ? Effect.succeed([])
        : sql
            .withTransaction(Commit.commitAll(sql, changes))
            .pipe(Effect.mapError(fail("complete runs")))

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
            sql`DELETE FROM tickwork_tasks
              WHERE state IN ('done', 'failed', 'cancelled') AND finished_at < ${before}`,
          ]),
        )
        .pipe(Effect.asVoid, Effect.mapError(fail("prune the ledger")))

    const none = Effect.succeed(Option.none())
    return TaskStore.of({
      dialect,
      exclusive: options.exclusive,
      insert: (tasks) => {
        for (const t of tasks) {
          const bad = Ids.check("id", t.id)
          if (bad !== undefined) return Effect.fail(bad)
        }
        return deadline("insert")(insert(tasks))
      },
      cancel: (id, now) => (Ids.storable(id) ? deadline("cancel")(cancel(id, now)) : none),
      get: (id) => (Ids.storable(id) ? deadline("read a task")(get(id)) : none),
      state: (id) => (Ids.storable(id) ? deadline("read a task's state")(state(id)) : none),
      modify: (id, decide) =>
        Ids.storable(id) ? deadline("change a task")(modify(id, decide)) : Effect.succeed(false),
      claim: (o) => deadline("claim due tasks")(claim(o)),
      commit: (changes) => deadline("complete runs")(commit(changes)),
      renew: (owner, held, now, leaseMs) =>
        deadline("renew leases")(renew(owner, held, now, leaseMs)),
      nextDue: (handlers) => deadline("find the next due task")(nextDue(handlers)),
      recover: (now) => deadline("recover interrupted runs")(recover(now)),
      runs: (id) =>
        Ids.storable(id) ? deadline("read the run ledger")(runs(id)) : Effect.succeed([]),
      events: (id) =>
        Ids.storable(id) ? deadline("read the events")(events(id)) : Effect.succeed([]),
      counts: deadline("count tasks")(counts),
      prune: (before) => deadline("prune the ledger")(prune(before)),
      signal: options.signal,
      session: options.session,
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
