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
import type { Breaker, Errors, Task } from "@tickwork/core"
import { type Array as Arr, Context, Effect, Option, type Queue, type Scope } from "effect"
import type * as Migrator from "effect/sql/Migrator"
import { SqlClient } from "effect/sql/SqlClient"
import { SqlError } from "effect/sql/SqlError"
import type { StoreError } from "./Errors.ts"
import * as BreakerOps from "./internal/breakerOps.ts"
import * as Cancel from "./internal/cancel.ts"
import * as Claim from "./internal/claim.ts"
import * as Commit from "./internal/commit.ts"
import * as Deadline from "./internal/deadline.ts"
import * as Dedup from "./internal/dedup.ts"
import * as Due from "./internal/due.ts"
import * as Failure from "./internal/failure.ts"
import * as Ids from "./internal/ids.ts"
import * as Insert from "./internal/insert.ts"
import * as List from "./internal/list.ts"
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
import * as Modify from "./internal/modify.ts"
import * as Prune from "./internal/prune.ts"
import * as Recover from "./internal/recover.ts"
import * as ManualRetry from "./internal/retry.ts"
import * as ManualTrigger from "./internal/trigger.ts"

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
   * Schedules `tasks` in order, in one transaction, all or none, applying deduplication keys
   * (SPEC §20.3): a task with a `dedup` key is decided by core's `Rules.decideDedup` against the
   * key's holder (the newest row under the key, read in the transaction; on PostgreSQL after an
   * advisory lock on the key, so concurrent schedules of one key converge on one holder) and
   * is inserted, `deduplicated` into the holder (an event on it) or `replaced` into it through
   * the same path as {@link modify} with `options.replace`'s update. Answers each task's id
   * and outcome.
   *
   * @since 0.7.0
   */
  readonly scheduleKeyed: <E>(
    tasks: Arr.NonEmptyReadonlyArray<NewTask>,
    options: Dedup.KeyedOptions<E>,
  ) => Effect.Effect<
    ReadonlyArray<Dedup.Keyed>,
    Errors.DuplicateTaskId | Errors.InvalidOption | StoreError | E
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
   * Runs `self` as one transaction: the store's operations it calls (their own transactions
   * nested as savepoints) commit together, or, when `self` fails or is interrupted, none of
   * them is kept. A declaration applied by `ensure` is one (SPEC §18.2).
   *
   * @since 0.5.0
   */
  readonly transaction: <A, E, R>(
    self: Effect.Effect<A, E, R>,
  ) => Effect.Effect<A, E | StoreError, R>
  /**
   * Inside a {@link transaction}, on PostgreSQL: locks the breakers of these tasks (by key)
   * and then their rows (by id), each in that fixed order, and holds them until it ends — so
   * that transactions locking overlapping sets of tasks wait for each other instead of
   * deadlocking. Ids without a row lock nothing. Nothing on SQLite, whose transaction holds
   * the whole file.
   *
   * @since 0.5.0
   */
  readonly lock: (ids: ReadonlyArray<string>) => Effect.Effect<void, StoreError>
  /**
   * Tasks matching `query`, live and retained final ones, by id, at most `query.limit` of them
   * after `query.after`: one indexed statement (by tag through `tickwork_tags`), O(limit) rows.
   */
  readonly list: (query: Query) => Effect.Effect<ReadonlyArray<TaskRow>, StoreError>
  /**
   * Retries a `failed` task by hand at `now` (SPEC §19.2): it is `scheduled` again, due at once,
   * pushed as `seq`, with a `manual-retry` event (carrying `origin`). `Refused` with the task's
   * state (`unknown` for none) when it is not failed; nothing changes then.
   */
  readonly retry: (
    id: string,
    now: number,
    seq: number,
    origin?: string | undefined,
  ) => Effect.Effect<ManualRetry.Retried, StoreError>
  /**
   * Retries slot `slot` (epoch ms) of a `scheduled` recurring task by hand at `now` (SPEC
   * §19.7): its pending run set aside and the slot's next attempt due at once, pushed as `seq`,
   * with a `manual-retry` event (carrying `origin`). `Refused` with core's refusal when its
   * state or its ledger does not allow it; nothing changes then.
   */
  readonly retrySlot: (
    id: string,
    slot: number,
    now: number,
    seq: number,
    origin?: string | undefined,
  ) => Effect.Effect<ManualRetry.Retried, StoreError>
  /**
   * Triggers a `scheduled` task by hand at `now` (SPEC §19.1): its pending run is set aside
   * (`kept`) and a manual run is due at once, pushed as `seq`, with a `manual-trigger` event
   * (carrying `origin`). `Refused` with the task's state (`unknown` for none), and whether a
   * manual run is already pending, when the core refuses it; nothing changes then.
   *
   * @since 0.5.0
   */
  readonly trigger: (
    id: string,
    now: number,
    seq: number,
    origin?: string | undefined,
  ) => Effect.Effect<ManualTrigger.Triggered, StoreError>
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
  /** {@link counts} and the due runs waiting on a limit by cause (SPEC §20.4), in one read. */
  readonly tally: Effect.Effect<
    { readonly counts: Counts; readonly waiting: List.WaitCounts },
    StoreError
  >
  /** Deduplication keys held by a live task (SPEC §20.3), in one read (see `List.dedupKeys`). */
  readonly dedupKeys: Effect.Effect<number, StoreError>
  /**
   * Deletes ledger rows and final tasks that ended before `before`, and rate-limit starts
   * (SPEC §20.2) before `before` or their scope's cut-off in `starts`.
   */
  readonly prune: (before: number, starts?: Prune.StartCutoffs) => Effect.Effect<void, StoreError>
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
    const deadline = Deadline.make(options.deadlineMs)
    const none = Effect.succeed(Option.none())
    // Each operation is its module's (one per store operation), run under the deadline; an id
    // no store can keep is found nowhere, without a round trip.
    return TaskStore.of({
      dialect,
      exclusive: options.exclusive,
      insert: (tasks, o) => {
        for (const t of tasks) {
          const bad = Ids.check("id", t.id)
          if (bad !== undefined) return Effect.fail(bad)
        }
        const notices = { channel: options.channel, signal: options.signal }
        return deadline("insert")(Insert.insert(sql, dialect, notices, tasks, o))
      },
      scheduleKeyed: (tasks, o) => {
        for (const t of tasks) {
          const bad = Ids.check("id", t.id)
          if (bad !== undefined) return Effect.fail(bad)
        }
        const notices = { channel: options.channel, signal: options.signal }
        return deadline("insert")(Dedup.scheduleKeyed(sql, dialect, notices, tasks, o))
      },
      cancel: (id, now, origin) =>
        Ids.storable(id) ? deadline("cancel")(Cancel.cancel(sql, dialect, id, now, origin)) : none,
      get: (id) => (Ids.storable(id) ? deadline("read a task")(List.get(sql, id)) : none),
      state: (id) =>
        Ids.storable(id) ? deadline("read a task's state")(List.state(sql, id)) : none,
      modify: (id, decide, committed) =>
        Ids.storable(id)
          ? deadline("change a task")(Modify.modify(sql, dialect, id, decide, committed))
          : Effect.succeed(false),
      transaction: (self) =>
        deadline("apply a batch")(
          sql.withTransaction(self).pipe(
            Effect.catchIf(
              (e): e is SqlError => e instanceof SqlError,
              (e) => Effect.fail(Failure.storeError("apply a batch", e)),
            ),
          ),
        ),
      lock: (ids) => {
        const storable = ids.filter(Ids.storable)
        return dialect === "pg" && storable.length > 0
          ? deadline("lock tasks")(Modify.lock(sql, storable))
          : Effect.void
      },
      list: (q) => deadline("list tasks")(List.list(sql, q)),
      retry: (id, now, seq, origin) =>
        Ids.storable(id)
          ? deadline("retry a task")(
              Effect.mapError(ManualRetry.retry(sql, dialect, id, now, seq, origin), (e) =>
                e._tag === "StoreError" ? e : Failure.storeError("retry a task", e),
              ),
            )
          : Effect.succeed({ _tag: "Refused", state: "unknown" } as const),
      retrySlot: (id, slot, now, seq, origin) =>
        Ids.storable(id)
          ? deadline("retry a slot")(
              Effect.mapError(
                ManualRetry.retrySlot(sql, dialect, id, slot, now, seq, origin),
                (e) => (e._tag === "StoreError" ? e : Failure.storeError("retry a slot", e)),
              ),
            )
          : Effect.succeed({ _tag: "Refused", state: "unknown" } as const),
      trigger: (id, now, seq, origin) =>
        Ids.storable(id)
          ? deadline("trigger a task")(
              Effect.mapError(ManualTrigger.trigger(sql, dialect, id, now, seq, origin), (e) =>
                e._tag === "StoreError" ? e : Failure.storeError("trigger a task", e),
              ),
            )
          : Effect.succeed({ _tag: "Refused", state: "unknown", pending: false } as const),
      defineBreakers: (shared, now) =>
        deadline("define breakers")(BreakerOps.defineBreakers(sql, dialect, shared, now)),
      breakers: deadline("read the breakers")(BreakerOps.breakers(sql)),
      halfOpen: (now, context) =>
        deadline("half-open breakers")(BreakerOps.halfOpen(sql, dialect, now, context)),
      nextHalfOpen: deadline("find the next half-open breaker")(BreakerOps.nextHalfOpen(sql)),
      claim: (o) =>
        deadline("claim due tasks")(
          Claim.claim(sql, dialect, o, dialect === "pg" && o.whileSessionHeld === true).pipe(
            Effect.mapError(Failure.failing("claim due tasks")),
          ),
        ),
      commit: (changes, context) =>
        deadline("complete runs")(Commit.commit(sql, dialect, changes, context)),
      renew: (owner, held, now, leaseMs) =>
        deadline("renew leases")(Due.renew(sql, owner, held, now, leaseMs)),
      nextDue: (handlers) => deadline("find the next due task")(Due.nextDue(sql, handlers)),
      nextTimes: (handlers) => deadline("find the next due time")(Due.nextTimes(sql, handlers)),
      recover: (now) => deadline("recover interrupted runs")(Recover.recover(sql, now)),
      runs: (id) =>
        Ids.storable(id) ? deadline("read the run ledger")(List.runs(sql, id)) : Effect.succeed([]),
      events: (id) =>
        Ids.storable(id) ? deadline("read the events")(List.events(sql, id)) : Effect.succeed([]),
      counts: deadline("count tasks")(List.counts(sql)),
      tally: deadline("count tasks")(List.tally(sql)),
      dedupKeys: deadline("count deduplication keys")(List.dedupKeys(sql)),
      prune: (before, starts) => deadline("prune the ledger")(Prune.prune(sql, before, starts)),
      signal: options.signal,
      session: options.session,
      integrity: options.integrity,
      takeOver:
        dialect === "pg" && options.session !== undefined
          ? (owner, now, mine) =>
              deadline("take over the claims of ended sessions")(
                Recover.takeOver(sql, owner, now, mine),
              )
          : undefined,
    })
  })
