/**
 * @internal
 * Task ids as every store can keep them. SQLite would take almost any string, PostgreSQL would
 * not (`TEXT` refuses NUL; a primary-key entry must fit an index page), and a lone surrogate
 * would come back as U+FFFD from either: one rule for both stores, checked before anything is
 * sent to a database.
 */
import { Errors } from "@tickwork/core"

/**
 * The longest id, in UTF-8 bytes: PostgreSQL's B-tree entries hold at most about 2,700 bytes,
 * and ids are indexed in two tables.
 */
export const MAX_ID_BYTES = 1024

/** A long value cut for a message: its start, and its length. */
export const brief = (value: string): string =>
  value.length <= 64
    ? Errors.show(value)
    : `${Errors.show(value.slice(0, 40))}… (${value.length} characters)`

/** Whether `s` is well-formed UTF-16 (no lone surrogate); `String.prototype.isWellFormed`. */
const wellFormed = (s: string): boolean =>
  !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s)

/** What is wrong with `value` as a stored string (an id, an owner name), or `undefined`. */
export const problem = (value: unknown): string | undefined => {
  if (typeof value !== "string") return "must be a string"
  if (value.length === 0) return "must not be empty"
  if (value.includes("\u0000")) return "must not contain NUL (U+0000)"
  if (!wellFormed(value)) {
    return "must be well-formed UTF-16 (it has a lone surrogate, which no store keeps)"
  }
  const bytes = Buffer.byteLength(value, "utf8")
  if (bytes > MAX_ID_BYTES)
    return `must be at most ${MAX_ID_BYTES} bytes in UTF-8 (it has ${bytes})`
  return undefined
}

/** An `InvalidOption` for `field` if `value` cannot be stored, else `undefined`. */
export const check = (field: string, value: unknown): Errors.InvalidOption | undefined => {
  const rule = problem(value)
  return rule === undefined
    ? undefined
    : new Errors.InvalidOption({
        field,
        value,
        message: `${field} ${rule}, got ${typeof value === "string" ? brief(value) : Errors.show(value)}`,
      })
}

/** Whether `id` could name a stored task (lookups of other ids find nothing). */
export const storable = (id: unknown): id is string => problem(id) === undefined
