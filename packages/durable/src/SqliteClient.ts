/**
 * better-sqlite3 (v13) as an `effect/sql` `SqlClient`, so the same statements and migrations run
 * on SQLite and on PostgreSQL. effect 4.1.0 ships no SQLite driver, and the `@effect/sql-sqlite-*`
 * 4.x betas import modules 4.1.0 does not have. better-sqlite3 13 loads an N-API prebuild from
 * its own package, so installing it compiles nothing.
 *
 * The database is opened in WAL mode with `synchronous=NORMAL` (a process crash loses nothing
 * committed; power loss may lose the last commits) or `FULL` (nothing committed is lost), and,
 * unless `exclusive: false`, with `locking_mode=EXCLUSIVE` and a write at open: the file then
 * stays locked until the process closes it or dies, and a second process gets
 * {@link StoreLocked}.
 *
 * better-sqlite3 is synchronous: each statement runs to completion on the calling fiber. One
 * permit serializes statements and transactions (`BEGIN IMMEDIATE`) between fibers.
 *
 * @since 0.1.0
 */
import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs"
import { dirname } from "node:path"
import { type Errors as CoreErrors, Options as CoreOptions } from "@tickwork/core"
import Database from "better-sqlite3"
import { Effect, Layer, type Scope, Semaphore, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import { classifySqliteError, SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import { type StoreCorrupt, StoreLocked, StoreUnavailable, storeCorrupt } from "./Errors.ts"
import * as Direct from "./internal/direct.ts"
import * as Failure from "./internal/failure.ts"
import * as ReadOnly from "./internal/readonly.ts"

/**
 * How to open the file.
 *
 * @category models
 * @since 0.1.0
 */
export interface SqliteConfig {
  /** A file path; `":memory:"` for a private in-memory database. */
  readonly filename: string
  /** `"NORMAL"` (default): survives a process crash. `"FULL"`: also power loss (fsync per commit). */
  readonly synchronous?: "NORMAL" | "FULL" | undefined
  /** Lock the file for this process (default true). */
  readonly exclusive?: boolean | undefined
  /**
   * How long to wait for another process's lock at open, in whole ms from 0 to
   * {@link MAX_LOCK_TIMEOUT_MS}. Default 0: fail at once.
   */
  readonly lockTimeoutMs?: number | undefined
  /**
   * Open an existing file for reading only (default false): nothing is written, not even the
   * journal mode or the lock; `exclusive` and `synchronous` are ignored. A missing file fails.
   * In a directory this process may not write, where SQLite cannot create the WAL index, the
   * file (and its WAL) is read from a private copy taken at open, removed at close.
   */
  readonly readOnly?: boolean | undefined
}

/**
 * A better-sqlite3 database handle.
 *
 * @category models
 * @since 0.1.0
 */
export type Db = Database.Database

const sqlError = (cause: unknown, operation: string) =>
  new SqlError({
    reason: classifySqliteError(cause, { message: `sqlite ${operation} failed`, operation }),
  })

/**
 * `error`, or, when it is a `SQLITE_IOERR_WRITE` on a file at the process's size limit, an
 * `EFBIG` error saying so: then the store reports `disk-full` (no room to write), not `other`.
 */
const writeError = (error: unknown, filename: string): unknown => {
  if (code(error) !== "SQLITE_IOERR_WRITE" || filename === ":memory:") return error
  let limits: string
  try {
    limits = readFileSync("/proc/self/limits", "utf8")
  } catch {
    return error
  }
  const limit = Failure.fileSizeLimit(limits)
  const sizes = [filename, `${filename}-wal`].flatMap((f) => {
    try {
      return [statSync(f).size]
    } catch {
      return []
    }
  })
  if (!Failure.pastSizeLimit(sizes, limit)) return error
  const words = error instanceof Error ? error.message : String(error)
  return Object.assign(
    new Error(
      `${words}: file too large, past this process's file size limit of ${limit} bytes (ulimit -f)`,
    ),
    { code: "EFBIG" },
  )
}

const code = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : ""

const openError = (filename: string, error: unknown): StoreLocked | StoreUnavailable => {
  const c = code(error)
  if (c.startsWith("SQLITE_BUSY") || c.startsWith("SQLITE_LOCKED")) {
    return new StoreLocked({
      filename,
      message: `the SQLite store ${JSON.stringify(filename)} is locked by another process (only one scheduler may open a store file)`,
    })
  }
  const { reason, detail } = Failure.diagnose(error)
  if (reason !== "corrupt" && filename !== ":memory:" && !writable(filename)) {
    // SQLite opens such a file read-only without a word, then fails at the first write or
    // lock, often as "disk I/O error": say what is wrong instead.
    return new StoreUnavailable({
      store: "sqlite",
      target: filename,
      reason: "read-only",
      message: `cannot open the SQLite store ${JSON.stringify(filename)}: ${Failure.headline["read-only"]}: this process may not write the file or its directory (the store writes the file and its -wal and -shm files beside it); SQLite said: ${detail}`,
      cause: error,
    })
  }
  return new StoreUnavailable({
    store: "sqlite",
    target: filename,
    reason,
    message: `cannot open the SQLite store ${JSON.stringify(filename)}: ${Failure.headline[reason]}: ${detail}`,
    cause: error,
  })
}

/**
 * What `PRAGMA quick_check` finds wrong with the open file (at most 10 findings), or nothing for
 * a sound one. A check that itself stops on a damaged page (`SQLITE_CORRUPT`) is a finding too.
 * It reads every page but checks no index against its table (that is `integrity_check`, several
 * times slower): O(file size), about 0.1 s per 100k tasks (see the durable README).
 */
export const quickCheck = (db: Db): ReadonlyArray<string> => {
  try {
    const rows = db.pragma("quick_check(10)") as Array<Record<string, unknown>>
    const lines = rows.map((r) => String(Object.values(r)[0]))
    return lines.length === 1 && lines[0] === "ok" ? [] : lines
  } catch (error) {
    const c = code(error)
    if (c.startsWith("SQLITE_CORRUPT") || c === "SQLITE_NOTADB") {
      return [`${error instanceof Error ? error.message : String(error)} (${c})`]
    }
    throw error
  }
}

/** Thrown inside the open when the integrity check finds damage: the open fails with it. */
class DamagedAtOpen {
  readonly findings: ReadonlyArray<string>
  constructor(findings: ReadonlyArray<string>) {
    this.findings = findings
  }
}

/** Whether this process may write `filename` (or create it) and its directory. */
const writable = (filename: string): boolean => {
  const can = (path: string) => {
    try {
      accessSync(path, constants.W_OK)
      return true
    } catch (error) {
      // Missing: not a question of permissions (opening says what is missing).
      return (error as { code?: unknown }).code === "ENOENT"
    }
  }
  return can(filename) && can(dirname(filename))
}

/**
 * The longest `lockTimeoutMs`, ms (about 24.8 days): SQLite's busy timeout is a 32-bit count
 * of ms.
 *
 * @category models
 * @since 0.4.0
 */
export const MAX_LOCK_TIMEOUT_MS = 2 ** 31 - 1

/**
 * Opens the file (closed when the scope closes) and wraps it as a `SqlClient`. A bad
 * `lockTimeoutMs` is an `InvalidOption` naming it and its value, before the file is touched.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (
  config: SqliteConfig,
): Effect.Effect<
  { readonly client: SqlClient.SqlClient; readonly db: Db },
  StoreLocked | StoreUnavailable | StoreCorrupt | CoreErrors.InvalidOption,
  Reactivity.Reactivity | Scope.Scope
> =>
  Effect.gen(function* () {
    if (config.lockTimeoutMs !== undefined) {
      const bad = CoreOptions.integer("lockTimeoutMs", config.lockTimeoutMs, 0, 0, {
        max: MAX_LOCK_TIMEOUT_MS,
        why: "SQLite's busy timeout is a 32-bit count of ms",
      })
      if (typeof bad !== "number") return yield* Effect.fail(bad)
    }
    const filename = config.filename
    // A read-only open in a directory it may not write reads a snapshot (see ReadOnly), removed
    // when the database closes.
    let removeSnapshot: (() => void) | undefined
    const db = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          if (config.readOnly === true) {
            let path = filename
            if (
              filename !== ":memory:" &&
              existsSync(filename) &&
              ReadOnly.planFor(filename) === "snapshot"
            ) {
              if (ReadOnly.lockedByAnother(filename)) {
                throw Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" })
              }
              const copy = ReadOnly.snapshot(filename)
              removeSnapshot = copy.remove
              path = copy.file
            }
            let db: Database.Database
            try {
              db = new Database(path, {
                readonly: true,
                fileMustExist: true,
                timeout: config.lockTimeoutMs ?? 0,
              })
              // A reader waits for no writer in WAL mode; only an exclusive lock blocks it long.
              db.pragma(`busy_timeout = ${config.lockTimeoutMs ?? 1000}`)
            } catch (error) {
              removeSnapshot?.()
              throw error
            }
            try {
              const findings = quickCheck(db)
              if (findings.length > 0) throw new DamagedAtOpen(findings)
            } catch (error) {
              const c = code(error)
              // Held by a scheduler (which checked it when it opened it): the reads that follow
              // say so, with what to do.
              if (!(c.startsWith("SQLITE_BUSY") || c.startsWith("SQLITE_LOCKED"))) {
                db.close()
                removeSnapshot?.()
                throw error
              }
            }
            return db
          }
          const db = new Database(filename, { timeout: config.lockTimeoutMs ?? 0 })
          try {
            if (config.exclusive !== false && filename !== ":memory:") {
              // Before WAL is entered: then no shared-memory index exists and the lock is the file's.
              db.pragma("locking_mode = EXCLUSIVE")
            }
            db.pragma("journal_mode = WAL")
            db.pragma(`synchronous = ${config.synchronous === "FULL" ? "FULL" : "NORMAL"}`)
            if (config.exclusive !== false) {
              // A write takes the exclusive lock now, not at the first task.
              db.exec(
                "CREATE TABLE IF NOT EXISTS tickwork_open (id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, opened_at INTEGER NOT NULL)",
              )
              db.prepare("INSERT OR REPLACE INTO tickwork_open VALUES (1, ?, ?)").run(
                process.pid,
                Date.now(),
              )
            }
            db.pragma("busy_timeout = 5000")
            // A damaged page is found now, not as a stall at the first claim that reads it.
            if (filename !== ":memory:") {
              const findings = quickCheck(db)
              if (findings.length > 0) throw new DamagedAtOpen(findings)
            }
            return db
          } catch (error) {
            db.close()
            throw error
          }
        },
        catch: (error) =>
          error instanceof DamagedAtOpen
            ? storeCorrupt(filename, `quick_check: ${error.findings.join("; ")}`)
            : openError(filename, error),
      }),
      (db) =>
        Effect.sync(() => {
          db.close()
          removeSnapshot?.()
        }),
    )
    const cache = new Map<string, Database.Statement>()
    const prepare = (sql: string): Database.Statement => {
      let stmt = cache.get(sql)
      if (stmt === undefined) {
        stmt = db.prepare(sql)
        cache.set(sql, stmt)
      }
      return stmt
    }
    // Readers (SELECT, … RETURNING) return rows; writers return [].
    const run = (
      sql: string,
      params: ReadonlyArray<unknown>,
      values: boolean,
      prepared: boolean,
      // biome-ignore lint/suspicious/noExplicitAny: rows are untyped here, as Connection's are
    ): Effect.Effect<Array<any>, SqlError> =>
      Effect.try({
        // biome-ignore lint/suspicious/noExplicitAny: as above
        try: (): Array<any> => {
          const stmt = prepared ? prepare(sql) : db.prepare(sql)
          if (stmt.reader) return stmt.raw(values).all(...params)
          stmt.run(...params)
          return []
        },
        catch: (error) => sqlError(writeError(error, filename), "execute"),
      })
    const connection: Connection = {
      execute: (sql, params, rows) =>
        rows ? Effect.map(run(sql, params, false, true), rows) : run(sql, params, false, true),
      executeRaw: (sql, params) => run(sql, params, false, true),
      executeStream: (sql, params, rows) =>
        Stream.fromIterableEffect(connection.execute(sql, params, rows)),
      executeValues: (sql, params) => run(sql, params, true, true),
      executeValuesUnprepared: (sql, params) => run(sql, params, true, false),
      executeUnprepared: (sql, params, rows) =>
        rows ? Effect.map(run(sql, params, false, false), rows) : run(sql, params, false, false),
    }
    const semaphore = yield* Semaphore.make(1)
    const client = yield* SqlClient.make({
      ...SqlClient.makeSqliteAcquirers({
        connection: Effect.succeed(connection),
        semaphore,
        isTransaction: () => db.inTransaction,
      }),
      compiler: Statement.makeCompilerSqlite(),
      driver: "sqlite",
      spanAttributes: [["db.system.name", "sqlite"]],
      // Take the write lock at BEGIN: a reader that upgrades later could get SQLITE_BUSY.
      beginTransaction: "BEGIN IMMEDIATE",
      // SQLite prepares BEGIN, COMMIT and savepoints (named by nesting depth: a bounded set):
      // kept in the statement cache, not parsed again for every transaction.
      prepareTransactionControls: true,
    })
    // The store's single-row inserts run straight on the connection, under the same permit.
    Direct.register(client, {
      semaphore,
      inTransaction: () => db.inTransaction,
      execute: (sql, params) => run(sql, params, false, true),
    })
    return { client, db }
  })

/**
 * A layer with the `SqlClient`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  config: SqliteConfig,
): Layer.Layer<
  SqlClient.SqlClient,
  StoreLocked | StoreUnavailable | StoreCorrupt | CoreErrors.InvalidOption
> =>
  Layer.effect(
    SqlClient.SqlClient,
    Effect.map(make(config), ({ client }) => client),
  ).pipe(Layer.provide(Reactivity.layer))
