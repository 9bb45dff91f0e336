/**
 * @internal
 * Store failures in words: what went wrong (a {@link StoreFailure} kind) and the database's own
 * message and code, dug out of the driver's nested errors (`SqlError` → its reason → the
 * driver's error → the server's or SQLite's). A failure is named once, where it is caught, so
 * every log line and error says the same thing.
 */
import { StoreError, type StoreFailure } from "../Errors.ts"

/** A store failure, diagnosed. */
export interface Diagnosis {
  readonly reason: StoreFailure
  /** The database's words and code, e.g. `database or disk is full (SQLITE_FULL)`. */
  readonly detail: string
}

const record = (u: unknown): Record<string, unknown> | undefined =>
  typeof u === "object" && u !== null ? (u as Record<string, unknown>) : undefined

const codeOf = (u: unknown): string | undefined => {
  const code = record(u)?.code
  return typeof code === "string" && code !== "" ? code : undefined
}

const wordsOf = (u: unknown): string => {
  const message = record(u)?.message
  if (typeof message === "string" && message !== "") return message.replace(/^PgConnection: /, "")
  return String(u)
}

const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
])

/**
 * The system's codes for "no room to write": no space on the device, the user's disk quota
 * spent, and a file past its largest size (the process's `ulimit -f`, or the file system's
 * own limit). Each leaves the store unable to grow until an operator makes room.
 */
const NO_ROOM_CODES = new Set(["ENOSPC", "EDQUOT", "EFBIG"])

/** The kind of failure a database code (SQLite or PostgreSQL SQLSTATE) or error tag means. */
export const classify = (code: string | undefined, tags: ReadonlySet<string>): StoreFailure => {
  if (code !== undefined) {
    if (code === "SQLITE_FULL" || code === "53100" || NO_ROOM_CODES.has(code)) return "disk-full"
    if (code.startsWith("SQLITE_READONLY") || code === "25006") return "read-only"
    if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) return "locked"
    if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") return "corrupt"
    if (code === "57014" || code === "25P03" || code === "55P03") return "timeout"
    if (code === "3D000") return "unknown-database"
    if (/^28[0-9A-Z]{3}$/.test(code)) return "authentication"
    if (/^(08|57P)[0-9A-Z]+$/.test(code) || CONNECTION_CODES.has(code)) return "connection-lost"
  }
  if (tags.has("TimeoutError")) return "timeout"
  if (tags.has("ConnectionError")) return "connection-lost"
  if (tags.has("AuthenticationError")) return "authentication"
  return "other"
}

/**
 * Diagnoses a failure: follows `reason` (an effect/sql `SqlError`'s) and `cause` links, takes
 * the innermost error that carries a code, and classifies that code.
 */
export const diagnose = (error: unknown): Diagnosis => {
  const chain: Array<unknown> = []
  const seen = new Set<unknown>()
  let current: unknown = error
  while (record(current) !== undefined && !seen.has(current) && chain.length < 16) {
    seen.add(current)
    chain.push(current)
    const r = record(current) as Record<string, unknown>
    current = record(r.reason) !== undefined ? r.reason : r.cause
  }
  if (chain.length === 0) return { reason: "other", detail: String(error) }
  const tags = new Set<string>()
  for (const e of chain) {
    const tag = record(e)?._tag
    if (typeof tag === "string") tags.add(tag)
  }
  let coded: unknown
  for (const e of chain) if (codeOf(e) !== undefined) coded = e
  const code = codeOf(coded)
  const words = wordsOf(coded ?? chain[chain.length - 1])
  return {
    reason: classify(code, tags),
    detail: code === undefined || words.includes(code) ? words : `${words} (${code})`,
  }
}

/** The kind of failure, in words, to lead a message with. */
export const headline: Record<StoreFailure, string> = {
  "disk-full": "the disk is full",
  "read-only": "the database is read-only",
  timeout: "the database did not answer in time",
  "connection-lost": "the connection to the database was lost",
  "unknown-database": "the database does not exist",
  authentication: "the server refused the credentials",
  locked: "the database is locked by another process",
  corrupt: "the file is not a database or is damaged",
  other: "the database reported an error",
}

/**
 * A `StoreError` for a failed operation: its `reason` and `detail` are diagnosed from the
 * driver's nested errors, and its message says both in one line.
 */
export const storeError = (operation: string, cause: unknown): StoreError => {
  const { reason, detail } = diagnose(cause)
  return new StoreError({
    operation,
    reason,
    detail,
    message: `the task store failed to ${operation}: ${headline[reason]}: ${detail}`,
    cause,
  })
}

/**
 * The process's largest file size in bytes (`ulimit -f`, `RLIMIT_FSIZE`) read from the text of
 * Linux's `/proc/self/limits`; `undefined` when unlimited or not stated.
 */
export const fileSizeLimit = (limits: string): number | undefined => {
  const m = /^Max file size\s+(\S+)/m.exec(limits)
  if (m === null || m[1] === "unlimited") return undefined
  const n = Number(m[1])
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined
}

/**
 * Whether a write that SQLite reported as `SQLITE_IOERR_WRITE` was refused for the file's size:
 * SQLite keeps `errno` to itself and reports `EFBIG` (a file past the process's size limit) as a
 * plain I/O error, which would read as a failing device. A file that cannot grow is at its
 * limit: one of `sizes` (the database and its WAL, in bytes) is within `slack` bytes of `limit`
 * (a write is at most one WAL frame, a 64 KiB page and its header, past the last that fitted).
 */
export const pastSizeLimit = (
  sizes: ReadonlyArray<number>,
  limit: number | undefined,
  slack = 2 * (65_536 + 24),
): boolean => limit !== undefined && sizes.some((size) => size + slack >= limit)

/**
 * The failure mapper of one store operation: a `StoreError` (raised inside it) passes as it is;
 * anything else (the driver's `SqlError`) becomes a `StoreError` for `operation`.
 */
export const failing =
  (operation: string) =>
  (error: unknown): StoreError =>
    error instanceof StoreError ? error : storeError(operation, error)
