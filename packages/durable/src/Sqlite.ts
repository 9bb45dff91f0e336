/**
 * The embedded store: SQLite through better-sqlite3, for one process that must survive
 * restarts. No server; the file is locked for the process that opened it (a second process gets
 * `StoreLocked`), and runs cut off by a crash are made due again when the scheduler starts.
 *
 * **Example** (A durable scheduler on a file)
 *
 * ```ts
 * import { Layer } from "effect"
 * import { DurableScheduler, Sqlite } from "@tickwork/durable"
 *
 * const live = DurableScheduler.layer({ handlers: [remind] }).pipe(
 *   Layer.provide(Sqlite.layer({ filename: "tasks.db" })),
 * )
 * ```
 *
 * @since 0.1.0
 */
import type { Errors as CoreErrors } from "@tickwork/core"
import { Effect, Layer } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql/SqlClient"
import type { StoreCorrupt, StoreLocked, StoreUnavailable } from "./Errors.ts"
import * as Connection from "./internal/connection.ts"
import * as SqliteClient from "./SqliteClient.ts"
import * as TaskStore from "./TaskStore.ts"

/**
 * Options: the file, and how hard each commit is made durable.
 *
 * @category models
 * @since 0.1.0
 */
export type SqliteStoreConfig = SqliteClient.SqliteConfig

/**
 * A {@link TaskStore.TaskStore} on a SQLite file (created and migrated if needed). Fails with `StoreLocked` when another process has the file open,
 * with `StoreCorrupt` when the integrity check at open (`PRAGMA quick_check`) finds a damaged
 * page, with `StoreUnavailable` when it cannot be opened or migrated, and with `InvalidOption`
 * naming `lockTimeoutMs` and its value when that is not a whole number of ms in range.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  config: SqliteStoreConfig,
): Layer.Layer<
  TaskStore.TaskStore,
  StoreLocked | StoreUnavailable | StoreCorrupt | CoreErrors.InvalidOption
> =>
  Layer.effect(
    TaskStore.TaskStore,
    Effect.gen(function* () {
      const { client, db } = yield* SqliteClient.make(config)
      const integrity = {
        filename: config.filename,
        // A check that cannot run at all (the file went away) finds nothing to report.
        check: Effect.sync(() => SqliteClient.quickCheck(db)).pipe(
          Effect.catchDefect(() => Effect.succeed([])),
        ),
      }
      return yield* TaskStore.make({ exclusive: config.exclusive !== false, integrity }).pipe(
        Effect.provideService(SqlClient, client),
        Effect.mapError((error) =>
          Connection.unavailable("sqlite", config.filename, "prepare", error),
        ),
      )
    }),
  ).pipe(Layer.provide(Reactivity.layer))
