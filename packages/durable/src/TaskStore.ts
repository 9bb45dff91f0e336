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
import {
  Breaker,
  Errors,
  type MissedRun,
  type Retry,
  type Schedule,
  type Task,
} from "@tickwork/core"
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
import * as Write from "./internal/write.ts"

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
  /** Its tags (SPEC §15), duplicates dropped, in the order given. */
  readonly tags: ReadonlyArray<string>
  /** Its own catch-up window, ms; `null`: the layer's `catchUpWindow` applies. */
  readonly windowMs: number | null
  /** The key of its circuit breaker's row (see {@link BreakerRow.key}); `null`: none. */
  readonly breaker: string | null
  /**
   * A schedule change waiting for the slot in progress (a run, a pending retry) to end: the new
   * schedule, in whole ms, started as if scheduled when that slot ends. `undefined`: none.
   */
  readonly restart: Schedule.Schedule | undefined
  /** Raised by every update: a completion decided on an older revision is decided again. */
  readonly revision: number
}

/**
 * A task's definition as {@link TaskStoreShape.modify} rewrites it (an update, SPEC §15).
 *
 * @category models
 * @since 0.3.0
 */
export interface Definition {
  readonly payload: string
  readonly schedule: Schedule.Encoded
  readonly priority: number
  readonly retry: Retry.Resolved
  readonly missedRuns: MissedRun.MissedRunPolicy
  readonly pauseAfter: number
  readonly timeoutMs: number
  readonly tags: ReadonlyArray<string>
  readonly windowMs: number | null
  readonly breaker: string | null
  readonly restart: Schedule.Schedule | undefined
}

/**
 * One circuit breaker as stored (SPEC §7): shared by name, or a task's own.
 *
 * @category models
 * @since 0.3.0
 */
export interface BreakerRow {
  /** `"shared:<name>"` for a breaker defined on the layer, `"task:<id>"` for a task's own. */
  readonly key: string
  /** A shared breaker's name, or the id of the task that owns it. */
  readonly name: string
  readonly shared: boolean
  readonly policy: Breaker.Resolved
  readonly state: Breaker.BreakerState
  /** Failed slots in a row, counted while closed. */
  readonly failures: number
  /** Times it opened since it last closed. */
  readonly opens: number
  /** When it last opened, epoch ms. */
  readonly openedAt: number | null
  /** When an open breaker goes half-open, epoch ms; `null` otherwise. */
  readonly halfOpenAt: number | null
  /** The half-open breaker's probe: a task id and its generation. */
  readonly probe: string | null
  readonly probeGeneration: number | null
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
  /** Its tags; none when absent. */
  readonly tags?: ReadonlyArray<string> | undefined
  /** Its own catch-up window, ms; absent or `null`: the layer's. */
  readonly windowMs?: number | null | undefined
  /** The first slot. */
  readonly slot: number
  readonly now: number
  /** Its circuit breaker: a shared one (defined on the layer) or its own policy. */
  readonly breaker?:
    | { readonly key: string; readonly name: string; readonly policy: Breaker.Resolved }
    | undefined
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
  /**
   * The schedule from now on, when a waiting schedule change ({@link TaskRow.restart}) took
   * effect; it also clears the change. Absent: unchanged.
   */
  readonly schedule?: Schedule.Encoded | undefined
  /** A new definition (an update): written with a raised {@link TaskRow.revision}. */
  readonly define?: Definition | undefined
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
 * - `paused`, `resumed`: the task was paused (by hand, its failure policy or its breaker) or
 *   resumed;
 * - `expired`: a one-shot taken past its deadline (its slot + its own window): it did not run
 *   and the task ended `failed`;
 * - `breaker`: a circuit breaker changed state (`cause` is the new state, {@link
 *   EventEntry.breaker} its name; the task is the one whose slot moved it, or the probe).
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
  | "expired"
  | "breaker"

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
  /** A `breaker` event's breaker (a shared breaker's name, or the owning task's id). */
  readonly breaker?: string | null | undefined
  /**
   * Who asked for a `paused`, `resumed` or `cancelled` event by hand through a tool that names
   * itself (`StoreAdmin`'s controls with an `origin`: the CLI records `cli`, the dashboard
   * `dashboard`). Absent for every other event, and for the scheduler API's own controls.
   *
   * @since 0.4.0
   */
  readonly origin?: string | undefined
}

/**
 * A decision about a row: its update, the run ledger row when a run ended, its events, and what
 * a circuit breaker counts (the slot ended; it failed).
 *
 * @category models
 * @since 0.3.0
 */
export interface Decided {
  readonly update: RowUpdate
  readonly run?: RunEntry | undefined
  /** Where a run's task went (SPEC §6.7): a `retry` counts in `tickwork_retries_total`. */
  readonly continuation?: Task.Continuation | undefined
  readonly events: ReadonlyArray<EventEntry>
  readonly slot?: { readonly ended: boolean; readonly failed: boolean } | undefined
  /**
   * The task ended without a slot its breaker counts (a one-shot expired): it leaves its
   * breaker, and a half-open breaker whose probe it was lets another held task through.
   */
  readonly leaves?: boolean | undefined
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
  /** The revision of the row the change was decided on (see {@link TaskRow.revision}). */
  readonly revision?: number | undefined
  /**
   * The same decision made again on the row as it is in the transaction, when it changed while
   * it ran (a pause asked for, an update) or it has a circuit breaker: `breakerOpens` answers
   * from the breaker's stored state, and the breaker then counts the slot in that transaction.
   */
  readonly redecide?:
    | ((fresh: TaskRow, breakerOpens: (() => boolean) | undefined) => Decided)
    | undefined
  /** The run ledger row, when a run ended. */
  readonly run?: RunEntry | undefined
  readonly events: ReadonlyArray<EventEntry>
  /** Recorded instead of everything above when the fence no longer matches. */
  readonly fencedOut: EventEntry
}

/**
 * What became of a {@link Change}: `applied`; `held` (applied as {@link Change.redecide}
 * decided: a pause was asked for while it ran); `cancelled` (the task was cancelled while it ran:
 * the run is recorded, the task stays cancelled); `fenced-out` (another delivery holds the row).
 *
 * @category models
 * @since 0.1.0
 */
export type ChangeResult = "applied" | "held" | "cancelled" | "fenced-out"

/**
 * What a commit did: each change's result and the decision applied (the change's own, or the
 * one {@link Change.redecide} made), and the events of circuit breakers it moved (transitions,
 * tasks held or released), to publish.
 *
 * @category models
 * @since 0.3.0
 */
export interface Committed {
  readonly results: ReadonlyArray<ChangeResult>
  readonly decided: ReadonlyArray<Decided>
  readonly events: ReadonlyArray<EventEntry>
}

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
    context: Commit.Context,
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
    context?: Commit.Context,
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
 * When the dispatcher must look again: the earliest due time of the claimable rows it asked
 * about, and the earliest half-open time of an open breaker (epoch ms; `undefined`: none).
 *
 * @category models
 * @since 0.4.0
 */
export interface NextTimes {
  readonly due: number | undefined
  readonly halfOpen: number | undefined
}

/**
 * A {@link TaskStoreShape.modify} decision that changes a row: its update, its events, and the
 * breakers it leaves and joins (row keys; an own breaker to create first).
 *
 * @category models
 * @since 0.3.0
 */
export interface Modification {
  readonly update: RowUpdate
  readonly events: ReadonlyArray<EventEntry>
  readonly breaker?:
    | {
        readonly leave: string | null
        readonly join: string | null
        readonly own?:
          | { readonly key: string; readonly name: string; readonly policy: Breaker.Resolved }
          | undefined
        /**
         * The task stays in this breaker but can no longer be its probe (it was paused by hand):
         * a half-open breaker lets another held task through.
         */
        readonly unprobe?: string | undefined
      }
    | undefined
}

/**
 * A {@link TaskStoreShape.modify} decision that rejects the change with a typed error.
 *
 * @category models
 * @since 0.3.0
 */
export interface Rejected<E> {
  readonly rejected: E
}

/**
 * Which tasks {@link TaskStoreShape.list} reads.
 *
 * @category models
 * @since 0.3.0
 */
export interface Query {
  readonly state?: Task.TaskState | undefined
  readonly tag?: string | undefined
  readonly kind?: Task.TaskInfo["kind"] | undefined
  readonly handler?: string | undefined
  /** Only ids greater than this one (the last id of the previous page). */
  readonly after?: string | undefined
  readonly limit: number
}

/**
 * A breaker with its live tasks, as {@link TaskStoreShape.breakers} reads it.
 *
 * @category models
 * @since 0.3.0
 */
export interface BreakerView {
  readonly breaker: BreakerRow
  /** Its live tasks, by id. */
  readonly tasks: ReadonlyArray<string>
  /** Those it holds (`paused`, reason `breaker`). */
  readonly held: ReadonlyArray<string>
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
