/**
 * Durable tickwork tasks: tasks kept as data, run by named handlers, surviving restarts, shared
 * by several processes. SQLite is the embedded default for one process; PostgreSQL serves 2–20
 * processes. Runs are at least once: see `DurableScheduler`.
 *
 * @since 0.1.0
 */

/** The DurableScheduler service and its layer. @since 0.1.0 */
export * as DurableScheduler from "./DurableScheduler.ts"
/** Typed errors. @since 0.1.0 */
export * as Errors from "./Errors.ts"
/** Named handlers and the run info they receive. @since 0.1.0 */
export * as Handler from "./Handler.ts"
/** The PostgreSQL store. @since 0.1.0 */
export * as Postgres from "./Postgres.ts"
/** The embedded SQLite store. @since 0.1.0 */
export * as Sqlite from "./Sqlite.ts"
/** better-sqlite3 as an effect `SqlClient`. @since 0.1.0 */
export * as SqliteClient from "./SqliteClient.ts"
/** A store opened for an operator: inspect and control tasks without a scheduler. @since 0.1.0 */
export * as StoreAdmin from "./StoreAdmin.ts"
/** The TaskStore service, its table shape and migrations. @since 0.1.0 */
export * as TaskStore from "./TaskStore.ts"
