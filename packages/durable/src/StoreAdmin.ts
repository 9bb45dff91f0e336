/**
 * A durable store opened for an operator: inspect its tasks, ledger and fleet, and pause, resume
 * or cancel a task, **without running a scheduler** — no dispatcher, no claims, no worker. The
 * `tickwork` command line and the live view's dashboard are built on it.
 *
 * Writes go through the same code as the `DurableScheduler`'s: pause and resume are the
 * scheduler's controls (the core's `Rules.pause` / `Rules.resume` over the row, in one
 * transaction, applied only if the row's fence and state are still the ones read), and cancel
 * is the store's own `cancel`. A worker holding a run keeps its lease and fence: a pause of a
 * running task is applied by that worker's completion, a cancel lets the run finish.
 *
 * The store is named by a SQLite file path or a PostgreSQL URL (`postgres://…`). A SQLite store
 * that a scheduler holds with its default exclusive lock cannot be opened beside it
 * (`StoreLocked`); open it in the scheduler with `Sqlite.layer({ filename, exclusive: false })` to
 * inspect and control it while it runs. Opened `readOnly`, nothing is written at all (SQLite:
 * a read-only connection; PostgreSQL: `default_transaction_read_only`), and the controls fail
 * with `ReadOnlyStore`. The store is never created or migrated here: a path or database no
 * scheduler has used is an `InvalidOption` naming `store`.
 *
 * **Example** (Pause a task in a shared store)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { StoreAdmin } from "@tickwork/durable"
 *
 * const program = Effect.scoped(
 *   Effect.gen(function* () {
 *     const admin = yield* StoreAdmin.open("postgres://tickwork@db.internal/tickwork")
 *     const paused = yield* admin.pause("nightly-import")
 *     const page = yield* admin.tasks({ state: "paused", limit: 20 })
 *     return { paused, names: page.tasks.map((t) => t.id) }
 *   }),
 * )
 * ```
 *
 * @since 0.1.0
 */
import { Errors as CoreErrors, Lifecycle, type Task } from "@tickwork/core"
import { Health } from "@tickwork/runtime"
import { Clock, Effect, Option, type Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import {
  ReadOnlyStore,
  type StoreError,
  type StoreLocked,
  type StoreUnavailable,
  UnknownTask,
} from "./Errors.ts"
import {
  type ControlOptions,
  type ControlResult,
  DEFAULT_LIMIT,
  LATENESS_SAMPLE,
  MAX_LIMIT,
  type OpenOptions,
  type RetryControlOptions,
  type StoreAdminShape,
  type StoreStats,
  type TaskDetails,
} from "./internal/adminShape.ts"
import * as Connection from "./internal/connection.ts"
import * as Controls from "./internal/controls.ts"
import * as Env from "./internal/env.ts"
import * as Failure from "./internal/failure.ts"
import * as Ids from "./internal/ids.ts"
import * as Inspect from "./internal/inspect.ts"
import * as Ledger from "./internal/ledger.ts"
import * as Options from "./internal/options.ts"
import * as RetryControl from "./internal/retryControl.ts"
import * as Rows from "./internal/rows.ts"
import { infoOf } from "./internal/scheduler.ts"
import * as TriggerControl from "./internal/triggerControl.ts"
import { make as makeStore, type TaskRow, type TaskStoreShape } from "./TaskStore.ts"

/**
 * Where a store is: a SQLite file, or a PostgreSQL database (`where`: `host:port/database`, for
 * messages, never the password).
 *
 * @category models
 * @since 0.1.0
 */
export type Target = Connection.Target

/**
 * Reads a store's name: a `postgres://` or `postgresql://` URL, or else a SQLite file path.
 * Anything else (another URL scheme, a URL that does not parse or names no host, an empty
 * text) is an `InvalidOption` naming `store` and the text (a password in it is masked).
 * Whether the file exists is checked by {@link open}.
 *
 * **Example** (Two stores and a mistake)
 *
 * ```ts
 * import { StoreAdmin } from "@tickwork/durable"
 * StoreAdmin.parseTarget("./tasks.db") // { kind: "sqlite", filename: "./tasks.db" }
 * StoreAdmin.parseTarget("postgres://db.internal/tickwork") // { kind: "postgres", … }
 * StoreAdmin.parseTarget("mysql://db/x") // InvalidOption: store must be a SQLite file path or …
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const parseTarget: (text: string) => Target | CoreErrors.InvalidOption =
  Connection.parseTarget

export type {
  ControlOptions,
  ControlResult,
  Lateness,
  OpenOptions,
  Owner,
  RetryControlOptions,
  StoreAdminShape,
  StoreStats,
  TaskDetails,
  TaskFilter,
  TaskPage,
} from "./internal/adminShape.ts"
export { DEFAULT_LIMIT, LATENESS_SAMPLE, MAX_LIMIT } from "./internal/adminShape.ts"

/** How far back {@link StoreStats.owners} counts completed runs. */
const OWNER_WINDOW_MS = 10 * 60_000

const percentile = (sorted: ReadonlyArray<number>, p: number): number | null =>
  sorted.length === 0
    ? null
    : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? null)

/** A row as an operator sees it (tags read apart: a store before 0003 keeps none). */
const details = (row: TaskRow, tags: ReadonlyArray<string>): TaskDetails => ({
  ...infoOf(row),
  tags,
  leaseExpiresAt: Rows.leaseUntil(row) ?? null,
  missedRuns: row.missedRuns,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
})

/** The task states, as the core's lifecycle lists them. */
const STATES: ReadonlyArray<Task.TaskState> = Lifecycle.states

const checkLimit = (limit: number | undefined): number | CoreErrors.InvalidOption =>
  limit === undefined
    ? DEFAULT_LIMIT
    : Number.isSafeInteger(limit) && limit >= 1 && limit <= MAX_LIMIT
      ? limit
      : new CoreErrors.InvalidOption({
          field: "limit",
          value: limit,
          message: `limit must be a whole number from 1 to ${MAX_LIMIT}, got ${CoreErrors.show(limit)}`,
        })

const unknownTask = (id: string): UnknownTask =>
  new UnknownTask({
    field: "id",
    value: id,
    message: `id ${Ids.brief(id)} names no task in this store`,
  })

/**
 * Opens a store for inspection and control, in the current scope (the connection closes with
 * it). Starts no scheduler: nothing is claimed or run. Fails with `InvalidOption` naming
 * `store` (a bad name, a missing file, a database no scheduler has used), `StoreLocked` (a
 * SQLite file a scheduler holds exclusively) or `StoreUnavailable`.
 *
 * **Example** (The dashboard's read-only view of a file)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { StoreAdmin } from "@tickwork/durable"
 *
 * const stats = Effect.scoped(
 *   Effect.flatMap(StoreAdmin.open("tasks.db", { readOnly: true }), (admin) => admin.stats),
 * )
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const open = (
  store: string | Target,
  options: OpenOptions = {},
): Effect.Effect<
  StoreAdminShape,
  CoreErrors.InvalidOption | StoreLocked | StoreUnavailable,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const target = typeof store === "string" ? parseTarget(store) : store
    if (!("kind" in target)) return yield* target
    const readOnly = options.readOnly === true
    const resolved = Options.resolve(
      {
        handlers: [],
        claim: false,
        owner: `tickwork-admin:${process.pid}`,
        ...(options.catchUpWindow === undefined ? {} : { catchUpWindow: options.catchUpWindow }),
      },
      false,
    )
    if (!("workers" in resolved)) return yield* resolved
    const connection =
      target.kind === "sqlite"
        ? yield* Connection.openSqlite(target.filename, readOnly)
        : yield* Connection.openPostgres(target, readOnly)
    const { sql } = connection
    const kind = target.kind
    const unavailable = (error: unknown) =>
      Connection.unavailable(kind, connection.where, "read", error)
    const present = yield* Inspect.isStore(sql).pipe(Effect.mapError(unavailable))
    if (!present) return yield* Connection.notAStore(connection.where)
    const tagged = yield* Inspect.hasTags(sql).pipe(Effect.mapError(unavailable))
    const originKept = yield* Inspect.hasOrigin(sql).pipe(Effect.mapError(unavailable))
    const taskStore: TaskStoreShape = yield* makeStore({
      exclusive: false,
      migrate: false,
      deadlineMs:
        kind === "postgres" ? 2 * Connection.STATEMENT_MS + Connection.CONNECT_MS : undefined,
    }).pipe(Effect.provideService(SqlClient, sql), Effect.mapError(unavailable))

    // The controls' narrow environment, built as the scheduler builds its own: the store, the
    // clock, the push order and the catch-up window; a tool runs nothing and publishes nothing.
    const env: Env.ControlEnv = Env.base(taskStore, resolved, yield* Clock.Clock, () => {})
    const now = env.now

    const fail = (operation: string) => (error: SqlError) =>
      Failure.storeError(operation, error) as StoreError
    const idError = (id: string) => Ids.check("id", id)

    const row = (id: string) =>
      Effect.gen(function* () {
        const bad = idError(id)
        if (bad !== undefined) return yield* bad
        const found = yield* taskStore.get(id)
        if (Option.isNone(found)) return yield* unknownTask(id)
        return found.value
      })

    const info: StoreAdminShape["info"] = (id) =>
      Effect.gen(function* () {
        const r = yield* row(id)
        const tags = yield* Inspect.tagsOf(sql, id, tagged).pipe(
          Effect.mapError(fail("read a task")),
        )
        const lastResult = yield* Inspect.lastResult(sql, id, r.generation).pipe(
          Effect.mapError(fail("read a task")),
        )
        const lastFailureAt = yield* Inspect.lastFailureAt(sql, id, r.generation).pipe(
          Effect.mapError(fail("read a task")),
        )
        const d = details(r, tags)
        const withResult = lastResult === undefined ? d : { ...d, lastResult }
        return lastFailureAt === undefined ? withResult : { ...withResult, lastFailureAt }
      })

    const tasks: StoreAdminShape["tasks"] = (filter = {}) =>
      Effect.gen(function* () {
        const state = filter.state
        if (state !== undefined && !STATES.includes(state as Task.TaskState)) {
          return yield* new CoreErrors.InvalidOption({
            field: "state",
            value: state,
            message: `state must be one of ${STATES.join(", ")}, got ${CoreErrors.show(state)}`,
          })
        }
        const limit = checkLimit(filter.limit)
        if (typeof limit !== "number") return yield* limit
        if (filter.handler !== undefined) {
          const bad = Ids.check("handler", filter.handler)
          if (bad !== undefined) return yield* bad
        }
        if (filter.tag !== undefined) {
          const bad = Ids.check("tag", filter.tag)
          if (bad !== undefined) return yield* bad
          if (!tagged) {
            return yield* new CoreErrors.InvalidOption({
              field: "tag",
              value: filter.tag,
              message: `tag cannot filter this store: its tasks keep no tags (no tags column), got ${CoreErrors.show(filter.tag)}`,
            })
          }
        }
        const page = yield* Inspect.list(
          sql,
          {
            state: state as Task.TaskState | undefined,
            handler: filter.handler,
            tag: filter.tag,
            limit,
          },
          tagged,
        ).pipe(
          Effect.mapError(fail("list tasks")),
          Effect.catchDefect((defect) =>
            Effect.fail(Failure.storeError("list tasks", defect) as StoreError),
          ),
        )
        return {
          tasks: page.rows.map((r) => details(r.row, r.tags)),
          total: page.total,
          limit,
        }
      })

    const ledger: StoreAdminShape["ledger"] = (id, limit) =>
      Effect.gen(function* () {
        const bad = idError(id)
        if (bad !== undefined) return yield* bad
        if (limit !== undefined) {
          const l = checkLimit(limit)
          if (typeof l !== "number") return yield* l
        }
        const [runs, events, state] = yield* Effect.all([
          taskStore.runs(id),
          taskStore.events(id),
          taskStore.state(id),
        ])
        if (Option.isNone(state) && runs.length === 0 && events.length === 0) {
          return yield* unknownTask(id)
        }
        const all = Ledger.merge(runs, events)
        return limit === undefined ? all : all.slice(Math.max(0, all.length - limit))
      })

    const recent: StoreAdminShape["recent"] = (limit) => {
      const l = checkLimit(limit)
      if (typeof l !== "number") return Effect.fail(l)
      return Inspect.recent(sql, l).pipe(
        Effect.map(({ runs, events }) => Ledger.merge(runs, events).reverse().slice(0, l)),
        Effect.mapError(fail("read the recent ledger")),
      )
    }

    const stats: StoreAdminShape["stats"] = Effect.gen(function* () {
      const at = now()
      const counts = yield* taskStore.counts
      const [owners, late, due] = yield* Effect.all([
        Inspect.owners(sql, at - OWNER_WINDOW_MS),
        Inspect.lateness(sql, LATENESS_SAMPLE),
        Inspect.overdue(sql, at),
      ]).pipe(Effect.mapError(fail("read the store's figures")))
      const sorted = [...late].sort((a, b) => a - b)
      // The store records when runs end, not when they start: the latest end is its progress.
      let lastEnded: number | undefined
      for (const o of owners) {
        if (o.lastFinishedAt !== null && (lastEnded === undefined || o.lastFinishedAt > lastEnded))
          lastEnded = o.lastFinishedAt
      }
      const health = Health.assess({
        now: at,
        dueSince: due.since ?? undefined,
        lastStartedAt: lastEnded,
      })
      return {
        store: kind,
        target: connection.where,
        at,
        tasks: counts,
        total: Object.values(counts).reduce((a, b) => a + b, 0),
        overdue: due.count,
        oldestDueAt: due.since,
        owners,
        window: OWNER_WINDOW_MS,
        lateness: {
          runs: sorted.length,
          p50: percentile(sorted, 50),
          p90: percentile(sorted, 90),
          p99: percentile(sorted, 99),
          max: sorted.length === 0 ? null : (sorted[sorted.length - 1] ?? null),
        },
        health,
      }
    })

    /**
     * A control: refused when read-only; the task must exist; its state is read back after.
     * `write` answers whether it changed the task, or a manual run's refusal (SPEC §19.4).
     */
    const control =
      <E = never, O extends ControlOptions = ControlOptions>(
        operation: "pause" | "resume" | "cancel" | "retry" | "trigger",
        write: (
          id: string,
          origin: string | undefined,
          options: O,
        ) => Effect.Effect<boolean | CoreErrors.ManualRunRefused, StoreError | E>,
      ) =>
      (id: string, options: O = {} as O) =>
        Effect.gen(function* () {
          if (options.origin !== undefined) {
            const bad = Ids.check("origin", options.origin)
            if (bad !== undefined) return yield* bad
          }
          if (readOnly) {
            return yield* new ReadOnlyStore({
              operation,
              message: `cannot ${operation} task ${Ids.brief(id)}: the store was opened read-only`,
            })
          }
          yield* row(id)
          const changed = yield* write(id, originKept ? options.origin : undefined, options)
          const after = yield* row(id)
          return {
            id,
            changed: changed === true,
            state: after.state,
            pausedReason: after.pausedReason,
            ...(typeof changed === "boolean" ? {} : { refused: changed.message }),
          } satisfies ControlResult
        })

    const notify =
      connection.notify === undefined
        ? Effect.void
        : Effect.ignore(connection.notify.pipe(Effect.mapError(fail("notify the workers"))))

    type ManualAsk<E> = Effect.Effect<void, CoreErrors.ManualRunRefused | StoreError | E>
    /** A manual run asked by an operator: a refusal is no change; a change wakes the fleet. */
    const manual = <E = never, O extends ControlOptions = ControlOptions>(
      operation: "retry" | "trigger",
      ask: (
        env: Env.ControlEnv,
        id: string,
        origin: string | undefined,
        options: O,
      ) => ManualAsk<E>,
    ) =>
      control<E, O>(
        operation,
        (id, origin, options): Effect.Effect<true | CoreErrors.ManualRunRefused, StoreError | E> =>
          Effect.matchEffect(ask(env, id, origin, options), {
            onFailure: (e): Effect.Effect<CoreErrors.ManualRunRefused, StoreError | E> =>
              typeof e === "object" && e !== null && "_tag" in e && e._tag === "ManualRunRefused"
                ? Effect.succeed(e as CoreErrors.ManualRunRefused)
                : Effect.fail(e as StoreError | E),
            onSuccess: () => Effect.as(notify, true as const),
          }),
      )

    return {
      store: kind,
      target: connection.where,
      readOnly,
      tags: tagged,
      tasks,
      info,
      ledger,
      recent,
      stats,
      pause: control("pause", (id, origin) => Controls.pause(env, id, origin)),
      resume: control("resume", (id, origin) =>
        Effect.tap(Controls.resume(env, id, origin), (ok) => (ok ? notify : Effect.void)),
      ),
      retry: manual<CoreErrors.InvalidTime, RetryControlOptions>(
        "retry",
        (env, id, origin, options) => RetryControl.retryAsked(env, id, options.slot, origin),
      ),
      trigger: manual<never>("trigger", (env, id, origin) =>
        TriggerControl.triggerTask(env, id, origin),
      ),
      cancel: control("cancel", (id, origin) =>
        Effect.map(taskStore.cancel(id, now(), origin), (found) => Option.isSome(found)),
      ),
    } satisfies StoreAdminShape
  })
