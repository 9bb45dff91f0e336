/**
 * Typed errors for bad input (SPEC §13). Every error names the offending field and carries the
 * rejected value; a call that fails with one of them has changed no state.
 *
 * The classes are `Data.TaggedError`s, so Effect code can `yield*` them and `catchTag` them.
 *
 * @since 0.1.0
 */
import { Data } from "effect"

interface FieldError {
  /** The option or argument that was rejected, e.g. `"delay"` or `"retry.factor"`. */
  readonly field: string
  /** The rejected value, as given. */
  readonly value: unknown
  /** A sentence naming the field, the value and the rule it broke. */
  readonly message: string
}

/**
 * A delay, period-free duration or backoff that is not a whole, non-negative, safe number of ms,
 * or whose slot would pass 2^53-1.
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidDelay extends Data.TaggedError("InvalidDelay")<FieldError> {}

/**
 * An absolute time that is not a safe integer number of epoch ms, or a clock moved backwards.
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidTime extends Data.TaggedError("InvalidTime")<FieldError> {}

/**
 * A period that is not a positive safe integer number of ms (0 would loop inside one instant).
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidPeriod extends Data.TaggedError("InvalidPeriod")<FieldError> {}

/**
 * A priority other than `"high"`, `"normal"` or `"low"`.
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidPriority extends Data.TaggedError("InvalidPriority")<FieldError> {}

/**
 * A retry or failure policy field out of range (`maxRetries`, `base`, `factor`, `maxDelay`,
 * `jitter`, `pauseAfterConsecutiveFailures`).
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidRetryPolicy extends Data.TaggedError("InvalidRetryPolicy")<FieldError> {}

/**
 * A cron expression that does not parse.
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidCronExpression extends Data.TaggedError("InvalidCronExpression")<FieldError> {}

/**
 * A time zone that is not a known IANA zone name.
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidTimeZone extends Data.TaggedError("InvalidTimeZone")<FieldError> {}

/**
 * An id that belongs to a task that is still `scheduled` or `running`.
 *
 * @category errors
 * @since 0.1.0
 */
export class DuplicateTaskId extends Data.TaggedError("DuplicateTaskId")<FieldError> {}

/**
 * Any other option out of range: an empty or reserved id, an unknown missed-run policy, a
 * retention limit, a job that is not what the driver runs.
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidOption extends Data.TaggedError("InvalidOption")<FieldError> {}

/**
 * The scheduler no longer accepts tasks: it is shutting down or closed.
 *
 * @category errors
 * @since 0.1.0
 */
export class SchedulerClosed extends Data.TaggedError("SchedulerClosed")<{
  readonly message: string
}> {}

/**
 * A manual run (SPEC §19) that the task's state does not allow: `trigger` of a task that is not
 * `scheduled` (running, paused, final) or already has a manual run pending, `retry` of a task
 * that is not `failed`, a `retry` of one slot (`slot` set, SPEC §19.7) that its task or its
 * ledger does not allow, or any of them for an unknown id (`state` is then `"unknown"`). Nothing
 * has changed.
 *
 * @category errors
 * @since 0.4.0
 */
export class ManualRunRefused extends Data.TaggedError("ManualRunRefused")<{
  /** `"trigger"` or `"retry"`. */
  readonly action: "trigger" | "retry"
  /** The task's id, as given. */
  readonly id: string
  /** The task's state when it was refused, or `"unknown"`. */
  readonly state: string
  /** The slot asked for (epoch ms), for a retry of one slot (SPEC §19.7); absent otherwise. */
  readonly slot?: number | undefined
  /** A sentence naming the id, its state and what to do instead. */
  readonly message: string
}> {}

/**
 * Every error a schedule call can fail with, other than {@link SchedulerClosed}.
 *
 * @category errors
 * @since 0.1.0
 */
export type ScheduleError =
  | InvalidDelay
  | InvalidTime
  | InvalidPeriod
  | InvalidPriority
  | InvalidRetryPolicy
  | InvalidCronExpression
  | InvalidTimeZone
  | DuplicateTaskId
  | InvalidOption

const tags: ReadonlySet<string> = new Set([
  "InvalidDelay",
  "InvalidTime",
  "InvalidPeriod",
  "InvalidPriority",
  "InvalidRetryPolicy",
  "InvalidCronExpression",
  "InvalidTimeZone",
  "DuplicateTaskId",
  "InvalidOption",
])

/**
 * Whether a value is one of the {@link ScheduleError}s.
 *
 * @category errors
 * @since 0.1.0
 */
export const isScheduleError = (u: unknown): u is ScheduleError =>
  typeof u === "object" && u !== null && tags.has((u as { _tag?: unknown })._tag as string)

/**
 * A broken internal invariant (SPEC §14). Never expected; thrown by the `verify`/`checkInvariants`
 * checks that tests run after every step.
 *
 * @category errors
 * @since 0.1.0
 */
export class InvariantViolation extends Data.TaggedError("InvariantViolation")<{
  readonly message: string
}> {}

/**
 * The first key of `options` that is not in `known`, as an {@link InvalidOption} naming it (with
 * `path` before it, e.g. `"retry."`), or `undefined` when every key is known. A typo such as
 * `missedRun` must fail loudly, never be ignored (SPEC §13). O(keys).
 *
 * @category constructors
 * @since 0.1.0
 */
export const unknownKey = (
  options: object,
  known: ReadonlySet<string>,
  path = "",
): InvalidOption | undefined => {
  for (const key in options) {
    if (!known.has(key)) {
      const field = `${path}${key}`
      return new InvalidOption({
        field,
        value: (options as Record<string, unknown>)[key],
        message: `${field} is not a known option (known: ${[...known].join(", ")})`,
      })
    }
  }
  return undefined
}

/** Renders a rejected value for a message: strings quoted, everything else as JS would print it. */
export const show = (value: unknown): string => {
  if (typeof value === "string") return JSON.stringify(value)
  if (typeof value === "bigint") return `${value}n`
  if (typeof value === "function") return "a function"
  if (value instanceof Date) return `Date(${value.getTime()})`
  if (typeof value === "object" && value !== null) {
    try {
      return JSON.stringify(value) ?? String(value)
    } catch {
      return String(value)
    }
  }
  return String(value)
}
