/**
 * The shared store: PostgreSQL (via `@effect/sql-pg` 4.0.5), for 2–20 processes running the same
 * tasks. Due rows are claimed with `FOR UPDATE SKIP LOCKED`, so no two processes ever claim the
 * same run; a claim is a lease folded into the row's due time, renewed while the run goes on, and
 * a completion counts only under the fence it was claimed with. Each claiming process holds an
 * advisory lock on its owner key on one dedicated session (not from the pool) and `LISTEN`s
 * there; when that session ends (the process died) PostgreSQL frees the lock, and the other
 * processes take its runs in flight over at once under a new fence. No slot is lost.
 *
 * **Example** (Two or more processes, one database)
 *
 * ```ts
 * import { Layer, Redacted } from "effect"
 * import { DurableScheduler, Postgres } from "@tickwork/durable"
 *
 * const live = DurableScheduler.layer({ handlers: [remind], leaseMs: 10_000 }).pipe(
 *   Layer.provide(Postgres.layer({ url: Redacted.make(process.env.DATABASE_URL!) })),
 * )
 * ```
 *
 * @since 0.1.0
 */
import { PgConnection } from "@effect/sql-pg"
import { type Errors as CoreErrors, Options as CoreOptions } from "@tickwork/core"
import { type Duration, Effect, Layer, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql/SqlClient"
import { StoreError, type StoreUnavailable } from "./Errors.ts"
import * as Connection from "./internal/connection.ts"
import * as Fleet from "./internal/fleet.ts"
import * as TaskStore from "./TaskStore.ts"

/**
 * Connection options: a URL (plain or `Redacted`), or the parts; and the pool size.
 *
 * @category models
 * @since 0.1.0
 */
export interface PostgresStoreConfig {
  readonly url?: string | Redacted.Redacted | undefined
  readonly host?: string | undefined
  readonly port?: number | undefined
  readonly database?: string | undefined
  readonly username?: string | undefined
  readonly password?: Redacted.Redacted | undefined
  /**
   * Connections in the pool: a whole number from 1 to 1,000 (the core's
   * `Options.bounds.maxConnections`). Default 4. A claiming process also holds one dedicated
   * session connection (its liveness lock and `LISTEN`), outside the pool: 20 processes then
   * use 100 connections, PostgreSQL's default `max_connections`; raise it, or use 3.
   */
  readonly maxConnections?: number | undefined
  /** How long connecting may take: from 1 ms to {@link MAX_TIMEOUT_MS}. Default 5 seconds. */
  readonly connectTimeout?: Duration.Input | undefined
  /**
   * The server-side deadline of one statement, and of a session idling inside a transaction
   * (PostgreSQL's `statement_timeout` and `idle_in_transaction_session_timeout`, set on every
   * connection of the pool). Each store operation also has a client-side deadline of
   * `2 × statementTimeout + connectTimeout`: a connection that never answers (a server restarted
   * under it, a network that drops packets) fails the operation with reason `timeout`, and the
   * scheduler retries it on another connection. Default 15 seconds, generous for a loaded
   * 2-core machine; a statement of this store normally takes milliseconds. From 1 ms to
   * {@link MAX_TIMEOUT_MS}.
   */
  readonly statementTimeout?: Duration.Input | undefined
}

/**
 * The longest `connectTimeout` and `statementTimeout`, ms (about 24.8 days): PostgreSQL's
 * `statement_timeout` is a 32-bit count of ms, and so is a Node timer.
 *
 * @category models
 * @since 0.4.0
 */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1

/** The config's sizes and timeouts checked; ms. */
interface Checked {
  readonly maxConnections: number
  readonly connectMs: number
  readonly statementMs: number
}

/** A timeout: a duration from 1 ms to `MAX_TIMEOUT_MS`, `fallback` ms when absent. */
const timeout = (
  field: string,
  input: Duration.Input | undefined,
  fallback: number,
): number | CoreErrors.InvalidOption => {
  const ms = CoreOptions.millis(field, input, fallback, true)
  if (typeof ms !== "number") return ms
  return ms <= MAX_TIMEOUT_MS
    ? ms
    : CoreOptions.invalid(
        field,
        input,
        `must be at most ${MAX_TIMEOUT_MS} ms (PostgreSQL's longest statement_timeout)`,
      )
}

/** The first bad size or timeout of `config`, as an `InvalidOption` naming it and its value. */
const check = (config: PostgresStoreConfig): Checked | CoreErrors.InvalidOption => {
  const maxConnections = CoreOptions.integer(
    "maxConnections",
    config.maxConnections,
    4,
    1,
    CoreOptions.bounds.maxConnections,
  )
  if (typeof maxConnections !== "number") return maxConnections
  const connectMs = timeout("connectTimeout", config.connectTimeout, 5_000)
  if (typeof connectMs !== "number") return connectMs
  const statementMs = timeout("statementTimeout", config.statementTimeout, 15_000)
  if (typeof statementMs !== "number") return statementMs
  return { maxConnections, connectMs, statementMs }
}

/** `host:port/database` without credentials, for messages. */
const target = (config: PostgresStoreConfig): string => {
  const url =
    config.url === undefined
      ? undefined
      : Redacted.isRedacted(config.url)
        ? Redacted.value(config.url)
        : config.url
  if (url !== undefined) {
    try {
      return Connection.whereOf(new URL(url))
    } catch {
      return "(an unparsable URL)"
    }
  }
  return `${config.host ?? "localhost"}:${config.port ?? 5432}/${config.database ?? config.username ?? "postgres"}`
}

/**
 * A {@link TaskStore.TaskStore} on a PostgreSQL database, migrated if needed (concurrent starts
 * are safe: the migrator locks its table). Fails with `StoreUnavailable` when the server cannot
 * be reached or the migrations fail; the message names the server, never the password. A bad
 * `maxConnections`, `connectTimeout` or `statementTimeout` is an `InvalidOption` naming it and
 * its value, before any connection is made.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  config: PostgresStoreConfig,
): Layer.Layer<TaskStore.TaskStore, StoreUnavailable | CoreErrors.InvalidOption> => {
  const checked = check(config)
  if (!("maxConnections" in checked)) return Layer.effect(TaskStore.TaskStore, Effect.fail(checked))
  const { maxConnections, connectMs, statementMs } = checked
  const where = target(config)
  const unavailable = (error: unknown) => Connection.unavailable("postgres", where, "use", error)
  return Layer.effect(
    TaskStore.TaskStore,
    Effect.gen(function* () {
      const connection = {
        ...(config.url === undefined
          ? {}
          : { url: Redacted.isRedacted(config.url) ? config.url : Redacted.make(config.url) }),
        ...(config.host === undefined ? {} : { host: config.host }),
        ...(config.port === undefined ? {} : { port: config.port }),
        ...(config.database === undefined ? {} : { database: config.database }),
        ...(config.username === undefined ? {} : { username: config.username }),
        ...(config.password === undefined ? {} : { password: config.password }),
        connectTimeout: connectMs,
        applicationName: "tickwork",
        // A peer that vanished without closing the socket is noticed by TCP, not never.
        keepAlive: "10 seconds" as Duration.Input,
      }
      const client = yield* Connection.pgClient({
        ...connection,
        statementMs,
        maxConnections,
      })
      const fail = (operation: string) => (error: unknown) => TaskStore.storeError(operation, error)
      return yield* TaskStore.make({
        exclusive: false,
        deadlineMs: 2 * statementMs + connectMs,
        channel: Connection.CHANNEL,
        signal: {
          notify: client
            .notify(Connection.CHANNEL, "")
            .pipe(Effect.mapError(fail("notify other processes"))),
          listen: client
            .listen(Connection.CHANNEL)
            .pipe(Effect.mapError(fail("listen for other processes"))),
        },
        session: (owner) =>
          Effect.gen(function* () {
            // Its own connection, never the pool's: the lock lives exactly as long as it.
            const conn = yield* PgConnection.make({
              ...connection,
              startupParameters: Connection.pgSession(statementMs),
              applicationName: "tickwork-session",
            })
            const pinned = yield* conn.pin
            const locked = yield* pinned.query(
              "SELECT pg_try_advisory_lock($1, hashtext($2)) AS held",
              [Fleet.LOCK_CLASS, owner],
              false,
            )
            if (locked.rows[0]?.held !== true) {
              return yield* Effect.fail(
                TaskStore.storeError(
                  "hold this process's liveness lock",
                  new Error(
                    `another live session holds the lock of owner ${JSON.stringify(owner)} (a process of the same name, or an ended session the server has not noticed yet)`,
                  ),
                ),
              )
            }
            const notices = yield* pinned.listen(Connection.CHANNEL)
            return {
              notices,
              ping: pinned
                .query("SELECT 1", [], true)
                .pipe(Effect.asVoid, Effect.mapError(fail("check this process's session"))),
            }
          }).pipe(
            Effect.mapError((e) =>
              e instanceof StoreError ? e : fail("hold this process's liveness lock")(e),
            ),
            Effect.timeoutOrElse({
              duration: 2 * statementMs + connectMs,
              orElse: () =>
                Effect.fail(
                  TaskStore.storeError(
                    "hold this process's liveness lock",
                    new Error("timed out connecting"),
                  ),
                ),
            }),
          ),
      }).pipe(Effect.provideService(SqlClient, client))
    }).pipe(Effect.mapError(unavailable)),
  ).pipe(Layer.provide(Reactivity.layer))
}
