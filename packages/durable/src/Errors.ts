/**
 * Typed errors of durable scheduling. Like the core's (SPEC §13), each names the offending field
 * and carries the rejected value; a call that fails with one of them has written nothing.
 *
 * The core's errors (`InvalidDelay`, `InvalidPeriod`, `InvalidCronExpression`, `DuplicateTaskId`,
 * `SchedulerClosed`, …) are reused as they are: a durable task is validated by the same rules.
 *
 * @since 0.1.0
 */
import type { Errors } from "@tickwork/core"
import { Data } from "effect"

interface FieldError {
  /** The option that was rejected, e.g. `"handler"` or `"payload.to"`. */
  readonly field: string
  /** The rejected value, as given. */
  readonly value: unknown
  /** A sentence naming the field, the value and the rule it broke. */
  readonly message: string
}

/**
 * A task names a handler that is not registered with the durable scheduler.
 *
 * @category errors
 * @since 0.1.0
 */
export class UnknownHandler extends Data.TaggedError("UnknownHandler")<FieldError> {}

/**
 * A payload that its handler's `Schema` rejects, or whose encoded form is not JSON that decodes
 * back. `field` is the path of the first bad value (`"payload.to"`).
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidPayload extends Data.TaggedError("InvalidPayload")<
  FieldError & {
    /** The handler whose schema rejected it. */
    readonly handler: string
  }
> {}

/**
 * A schedule that cannot be kept as data: a custom schedule's `next` function cannot be stored,
 * so it cannot survive a restart. Use once/at/fixedRate/fixedDelay/cron, or the in-memory
 * `Scheduler` for closures.
 *
 * @category errors
 * @since 0.1.0
 */
export class NotDurable extends Data.TaggedError("NotDurable")<FieldError> {}

/**
 * The SQLite file is held by another process (the store takes an exclusive lock, so two
 * schedulers can never run the same tasks from one file by mistake).
 *
 * @category errors
 * @since 0.1.0
 */
export class StoreLocked extends Data.TaggedError("StoreLocked")<{
  readonly filename: string
  readonly message: string
}> {}

/**
 * Why a store failed, as one of a few kinds a program can act on (the message says the same in
 * words, with the database's own message and code):
 * - `disk-full`: no room left for the database (`SQLITE_FULL`; PostgreSQL `53100`; `ENOSPC`,
 *   `EDQUOT`, or `EFBIG`: a file past its size limit, such as the process's `ulimit -f`);
 * - `read-only`: the database cannot be written (a read-only file or directory, `SQLITE_READONLY`;
 *   PostgreSQL `25006`);
 * - `timeout`: no answer within the store's deadline, or a server-side timeout cancelled the
 *   statement (PostgreSQL `57014`, `25P03`);
 * - `connection-lost`: the server went away or cannot be reached (restart, network, `08xxx`,
 *   `57P0x`);
 * - `unknown-database`: the server has no database of that name (PostgreSQL `3D000`);
 * - `authentication`: the server refused the credentials (PostgreSQL `28xxx`);
 * - `locked`: another process holds the database's lock (`SQLITE_BUSY`);
 * - `corrupt`: the file is not a database, or is damaged (`SQLITE_NOTADB`, `SQLITE_CORRUPT`);
 * - `other`: anything else (the message has the database's words).
 *
 * @category errors
 * @since 0.1.0
 */
export type StoreFailure =
  | "disk-full"
  | "read-only"
  | "timeout"
  | "connection-lost"
  | "unknown-database"
  | "authentication"
  | "locked"
  | "corrupt"
  | "other"

/**
 * The store could not be opened or reached: a file that cannot be created or is not a SQLite
 * database, a PostgreSQL server that refuses or does not answer, a failed migration.
 *
 * @category errors
 * @since 0.1.0
 */
export class StoreUnavailable extends Data.TaggedError("StoreUnavailable")<{
  readonly store: "sqlite" | "postgres"
  /** The file, or the server as `host:port/database` (never a password). */
  readonly target: string
  /** Why, as one of a few kinds: see {@link StoreFailure}. */
  readonly reason: StoreFailure
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * A statement failed on an open store (the database went away, a disk is full, …). Nothing of
 * the failed call was committed.
 *
 * @category errors
 * @since 0.1.0
 */
export class StoreError extends Data.TaggedError("StoreError")<{
  /** What the store was doing, e.g. `"insert"` or `"claim due tasks"`. */
  readonly operation: string
  /** Why, as one of a few kinds: see {@link StoreFailure}. */
  readonly reason: StoreFailure
  /** The database's own words (its message and code), e.g. `database or disk is full (SQLITE_FULL)`. */
  readonly detail: string
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * The SQLite file is damaged: a page SQLite cannot read (`SQLITE_CORRUPT`), found by the
 * integrity check (`PRAGMA quick_check`) when the store opens, or after a statement failed with
 * `SQLITE_CORRUPT` while it ran. Fatal: retrying cannot mend a file, so the scheduler stops
 * claiming, logs this at Error, and its layer (or, while running, the program it serves) fails.
 * The message says what to do: restore the file from a backup, or salvage what is readable with
 * `sqlite3 <file> ".recover" | sqlite3 <new file>`; runs cut off by the stop are due again when a
 * good file is opened.
 *
 * @category errors
 * @since 0.4.0
 */
export class StoreCorrupt extends Data.TaggedError("StoreCorrupt")<{
  /** The SQLite file. */
  readonly filename: string
  /** What SQLite said: the failed statement's message and code, and `quick_check`'s findings. */
  readonly detail: string
  readonly message: string
}> {}

/**
 * The message of a {@link StoreCorrupt} for `filename`, with SQLite's words and what to do.
 *
 * @category errors
 * @since 0.4.0
 */
export const storeCorrupt = (filename: string, detail: string): StoreCorrupt =>
  new StoreCorrupt({
    filename,
    detail,
    message: `the SQLite store ${JSON.stringify(filename)} is damaged (SQLite said: ${detail}); stop every process using it and restore it from a backup, or salvage what is readable with: sqlite3 ${JSON.stringify(filename)} ".recover" | sqlite3 recovered.db (then open recovered.db); runs cut off are due again when a good file is opened`,
  })

/**
 * A stored payload that no longer decodes with its handler's schema (the schema changed since
 * the task was scheduled). The run fails with it, as a typed failure, and the task's retry and
 * failure policies apply.
 *
 * @category errors
 * @since 0.1.0
 */
export class PayloadDecodeError extends Data.TaggedError("PayloadDecodeError")<{
  readonly handler: string
  readonly taskId: string
  readonly message: string
}> {}

/**
 * Everything `schedule` can fail with.
 *
 * @category errors
 * @since 0.1.0
 */
export type DurableScheduleError =
  | Errors.ScheduleError
  | Errors.SchedulerClosed
  | UnknownHandler
  | InvalidPayload
  | NotDurable
  | StoreError

/**
 * An id that names no task in the store (an inspection or a control by an operator, e.g.
 * `tickwork status <id>`). The scheduler's own `status` answers `"unknown"` instead.
 *
 * @category errors
 * @since 0.1.0
 */
export class UnknownTask extends Data.TaggedError("UnknownTask")<FieldError> {}

/**
 * A write asked of a store opened read-only (`StoreAdmin.open(…, { readOnly: true })`): nothing
 * was written.
 *
 * @category errors
 * @since 0.1.0
 */
export class ReadOnlyStore extends Data.TaggedError("ReadOnlyStore")<{
  /** The operation refused, e.g. `"pause"`. */
  readonly operation: string
  readonly message: string
}> {}
