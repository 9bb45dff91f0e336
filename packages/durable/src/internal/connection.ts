/**
 * @internal
 * Where a store is and how a connection to it is opened, shared by `Sqlite.layer`,
 * `Postgres.layer` and `StoreAdmin.open`: the parsing of a store's address (a SQLite file path or
 * a `postgres://` URL), the `host:port/database` that messages name (never a password), the
 * PostgreSQL session settings every connection of the store carries, the `LISTEN`/`NOTIFY`
 * channel, and the `StoreUnavailable` an open that fails becomes.
 */
import { existsSync, statSync } from "node:fs"
import { PgClient } from "@effect/sql-pg"
import { Errors as CoreErrors } from "@tickwork/core"
import { Effect, Redacted, type Scope } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { StoreLocked, StoreUnavailable } from "../Errors.ts"
import * as SqliteClient from "../SqliteClient.ts"
import * as Failure from "./failure.ts"
import * as Inspect from "./inspect.ts"

/** A store's address: a SQLite file, or a PostgreSQL database. */
export type Target =
  | { readonly kind: "sqlite"; readonly filename: string }
  | {
      readonly kind: "postgres"
      readonly url: Redacted.Redacted<string>
      /** `host:port/database`, for messages (never the password). */
      readonly where: string
    }

/** The `LISTEN`/`NOTIFY` channel on which processes (and tools) tell workers work is due soon. */
export const CHANNEL = "tickwork_due"

/** The text as given, with a URL's password replaced by `***`, for messages. */
const shown = (text: string): string => {
  try {
    const u = new URL(text)
    if (u.password !== "") {
      u.password = "***"
      return CoreErrors.show(u.toString())
    }
  } catch {
    // Not a URL: shown as it is.
  }
  return CoreErrors.show(text)
}

/** An `InvalidOption` naming `store` and its text (a password masked): it `rule`. */
export const badStore = (text: string, rule: string): CoreErrors.InvalidOption =>
  new CoreErrors.InvalidOption({
    field: "store",
    value: text,
    message: `store ${rule}, got ${shown(text)}`,
  })

/** `host:port/database` of a PostgreSQL URL (port 5432 when absent), for messages. */
export const whereOf = (url: URL): string =>
  `${url.hostname}:${url.port || "5432"}${url.pathname === "" ? "/" : url.pathname}`

/**
 * Reads a store's address: a `postgres://` or `postgresql://` URL, or else a SQLite file path
 * (a Windows drive path included). Anything else is an `InvalidOption` naming `store`.
 */
export const parseTarget = (text: string): Target | CoreErrors.InvalidOption => {
  if (typeof text !== "string" || text.trim() === "") {
    return badStore(String(text), "must be a SQLite file path or a postgres:// URL")
  }
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(text)?.[1]?.toLowerCase()
  if (scheme === undefined || (scheme.length === 1 && /^[A-Za-z]:[\\/]/.test(text))) {
    return { kind: "sqlite", filename: text }
  }
  if (scheme === "file") {
    return badStore(text, "must be a SQLite file path (without file:) or a postgres:// URL")
  }
  if (scheme !== "postgres" && scheme !== "postgresql") {
    return badStore(text, "must be a SQLite file path or a postgres:// URL")
  }
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return badStore(text, "must be a valid postgres:// URL")
  }
  if (url.hostname === "") return badStore(text, "must be a postgres:// URL naming a host")
  return { kind: "postgres", url: Redacted.make(text), where: whereOf(url) }
}

/**
 * The `StoreUnavailable` of a store at `where` that could not be used (`verb`: what was being
 * done, e.g. `use`, `read`, `prepare`), its reason diagnosed from the driver's error.
 */
export const unavailable = (
  store: "sqlite" | "postgres",
  where: string,
  verb: string,
  error: unknown,
): StoreUnavailable => {
  const { reason, detail } = Failure.diagnose(error)
  const named =
    store === "sqlite" ? `SQLite store ${CoreErrors.show(where)}` : `PostgreSQL store at ${where}`
  return new StoreUnavailable({
    store,
    target: where,
    reason,
    message: `cannot ${verb} the ${named}: ${Failure.headline[reason]}: ${detail}`,
    cause: error,
  })
}

/**
 * The session settings of every connection to a PostgreSQL store: the server-side deadline of
 * a statement and of a session idling in a transaction (`statementMs`, ms), and, `readOnly`, a
 * server that refuses every write of the session (read-only is then not only a promise of ours).
 */
export const pgSession = (statementMs: number, readOnly = false): Record<string, string> => ({
  statement_timeout: String(statementMs),
  idle_in_transaction_session_timeout: String(statementMs),
  ...(readOnly ? { default_transaction_read_only: "on" } : {}),
})

/**
 * A pool of connections to a PostgreSQL store, in the current scope, with the store's session
 * settings ({@link pgSession}: `statementMs`, `readOnly`).
 */
export const pgClient = (
  options: Omit<PgClient.PgPoolConfig, "startupParameters"> & {
    readonly statementMs: number
    readonly readOnly?: boolean | undefined
  },
): Effect.Effect<PgClient.PgClient, SqlError, Scope.Scope | Reactivity.Reactivity> => {
  const { statementMs, readOnly, ...config } = options
  return PgClient.make({ ...config, startupParameters: pgSession(statementMs, readOnly) })
}

/** The statement deadline of a tool's PostgreSQL connections, ms. */
export const STATEMENT_MS = 15_000
/** How long a tool's connecting may take, ms. */
export const CONNECT_MS = 5_000

/** The connection, and how to tell workers that work is due (PostgreSQL). */
export interface Opened {
  readonly sql: SqlClient
  readonly notify: Effect.Effect<void, SqlError> | undefined
  readonly where: string
}

/** The `InvalidOption` for an address where no scheduler has kept tasks. */
export const notAStore = (store: string): CoreErrors.InvalidOption =>
  badStore(
    store,
    "must name a store a tickwork scheduler has used (it has no tickwork_tasks table)",
  )

/** A SQLite file that cannot be read: `StoreLocked` when a scheduler holds it exclusively. */
const unavailableSqlite = (filename: string, error: unknown): StoreUnavailable | StoreLocked => {
  if (Failure.diagnose(error).reason === "locked") {
    return new StoreLocked({
      filename,
      message: `the SQLite store ${CoreErrors.show(filename)} is locked by another process: a scheduler holds it with its default exclusive lock; to inspect or control it while the scheduler runs, open it there with Sqlite.layer({ filename, exclusive: false })`,
    })
  }
  return unavailable("sqlite", filename, "read", error)
}

/**
 * Opens an existing SQLite store for a tool, in the current scope: looked at read-only first (a
 * file that is no store is left as it was), then, unless `readOnly`, opened for writing.
 */
export const openSqlite = (
  filename: string,
  readOnly: boolean,
): Effect.Effect<Opened, CoreErrors.InvalidOption | StoreLocked | StoreUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    if (!existsSync(filename)) {
      return yield* badStore(filename, "must be an existing SQLite file or a postgres:// URL")
    }
    if (!statSync(filename).isFile()) {
      return yield* badStore(filename, "must be a SQLite file, not a directory")
    }
    const open = (readOnly: boolean) =>
      SqliteClient.make({ filename, exclusive: false, readOnly }).pipe(
        Effect.provide(Reactivity.layer),
        // A damaged file: the tools say so (reason `corrupt`) with what to do, as one of their
        // open errors.
        Effect.catchTag("StoreCorrupt", (e) =>
          Effect.fail(
            new StoreUnavailable({
              store: "sqlite",
              target: filename,
              reason: "corrupt",
              message: e.message,
              cause: e,
            }),
          ),
        ),
      )
    // Looked at read-only first: a file that is no store is left as it was.
    const reader = yield* open(true)
    const present = yield* Inspect.isStore(reader.client).pipe(
      Effect.mapError((error) => unavailableSqlite(filename, error)),
    )
    if (!present) return yield* notAStore(filename)
    const { client } = readOnly ? reader : yield* open(false)
    return { sql: client, notify: undefined, where: filename }
  })

/**
 * Opens a PostgreSQL store for a tool, in the current scope: a pool of two connections with the
 * store's session settings (read-only at the server when `readOnly`), named for the tool.
 */
export const openPostgres = (
  target: Extract<Target, { kind: "postgres" }>,
  readOnly: boolean,
): Effect.Effect<Opened, StoreUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const client = yield* pgClient({
      url: target.url,
      connectTimeout: CONNECT_MS,
      maxConnections: 2,
      applicationName: readOnly ? "tickwork-dashboard" : "tickwork-admin",
      statementMs: STATEMENT_MS,
      readOnly,
    }).pipe(Effect.provide(Reactivity.layer))
    return {
      sql: client,
      notify: client.notify(CHANNEL, ""),
      where: target.where,
    }
  }).pipe(Effect.mapError((error) => unavailable("postgres", target.where, "use", error)))
