/**
 * Kept results (SPEC §19.3): the one rule for whether a run's value is kept with its ledger
 * entry. A value is kept as JSON text of at most `maxResultBytes` UTF-8 bytes; a value JSON
 * cannot write, or whose text is longer, is not kept, and the run carries a typed error instead.
 * Its outcome stays what the job did: a run whose job succeeded is not failed (nor retried) for
 * its result, since running it again repeats its side effect and yields the same value.
 *
 * The in-memory runtime and the durable store both call {@link keep}; neither decides it again.
 *
 * @since 0.5.0
 */
import { Data } from "effect"
import * as Errors from "./Errors.ts"
import { bounds, integer } from "./Options.ts"

/**
 * The default bound of a kept result: 64 KiB of encoded JSON.
 *
 * @category constants
 * @since 0.5.0
 */
export const DEFAULT_MAX_BYTES = 65_536

/**
 * A run's value whose JSON text is longer than the bound: it is not kept. `bytes` is the size
 * of the text, UTF-8; `limit` the bound it passed.
 *
 * @category errors
 * @since 0.5.0
 */
export class ResultTooLarge extends Data.TaggedError("ResultTooLarge")<{
  readonly taskId: string
  readonly bytes: number
  readonly limit: number
  readonly message: string
}> {}

/**
 * A run's value that cannot be kept as JSON: its schema refused it, or JSON cannot write it
 * (a cycle, a bigint) or would change it (a `Date`, a `Map`, `NaN`).
 *
 * @category errors
 * @since 0.5.0
 */
export class ResultEncodeError extends Data.TaggedError("ResultEncodeError")<{
  readonly taskId: string
  readonly message: string
}> {}

/**
 * What became of a run's value: kept as JSON text, or refused with its typed error.
 *
 * @category models
 * @since 0.5.0
 */
export type Kept =
  | { readonly kind: "kept"; readonly json: string }
  | { readonly kind: "refused"; readonly error: ResultTooLarge | ResultEncodeError }

/**
 * The UTF-8 byte length of `text` (what a database column and a wire reply carry), computed
 * without allocating the encoded bytes.
 *
 * @category utils
 * @since 0.5.0
 */
export const utf8Bytes = (text: string): number => {
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4
        i++
      } else n += 3
    } else n += 3
  }
  return n
}

/**
 * The rule: `json` (the value's JSON text) is kept when it is at most `limit` bytes; past it the
 * run carries a `ResultTooLarge` naming the task, the size and the limit.
 *
 * @category decisions
 * @since 0.5.0
 */
export const keep = (taskId: string, json: string, limit: number): Kept => {
  // A UTF-8 byte is at least one UTF-16 unit and at most three: most texts are decided by length.
  if (json.length * 3 <= limit) return { kind: "kept", json }
  const bytes = utf8Bytes(json)
  if (bytes <= limit) return { kind: "kept", json }
  return {
    kind: "refused",
    error: new ResultTooLarge({
      taskId,
      bytes,
      limit,
      message: `the result of task ${Errors.show(taskId)} is ${bytes} bytes of JSON, over the limit of ${limit} bytes (maxResultBytes): it is not kept; keep a large output in your own storage and return its key`,
    }),
  }
}

/**
 * A value refused before its size is known (its schema or JSON could not write it).
 *
 * @category constructors
 * @since 0.5.0
 */
export const notEncodable = (taskId: string, why: string): Kept => ({
  kind: "refused",
  error: new ResultEncodeError({
    taskId,
    message: `the result of task ${Errors.show(taskId)} cannot be kept: ${why}`,
  }),
})

/**
 * A value with no schema of its own (the in-memory runtime's `keepResult`), as JSON text:
 * kept when JSON writes it and it is within `limit`; `undefined` (a job that returns nothing)
 * keeps nothing and is `undefined` here.
 *
 * @category decisions
 * @since 0.5.0
 */
export const keepValue = (taskId: string, value: unknown, limit: number): Kept | undefined => {
  if (value === undefined) return undefined
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch (error) {
    return notEncodable(taskId, `JSON cannot write it (${String(error)})`)
  }
  if (json === undefined) return notEncodable(taskId, `JSON cannot write a ${typeof value}`)
  return keep(taskId, json, limit)
}

/**
 * The `maxResultBytes` option: a whole number of bytes from 1 to `Options.bounds.resultBytes` (8 MiB),
 * {@link DEFAULT_MAX_BYTES} when absent.
 *
 * @category constructors
 * @since 0.5.0
 */
export const maxBytes = (field: string, value: number | undefined): number | Errors.InvalidOption =>
  integer(field, value, DEFAULT_MAX_BYTES, 1, bounds.resultBytes)
