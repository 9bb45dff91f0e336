/**
 * Time values. Every instant and duration in tickwork is a whole number of milliseconds held in a
 * `number` that is a safe integer (SPEC §2): no fractional ms ever enter the kernel, so there is
 * no floating-point drift to accumulate. Durations may also be given in Effect's `Duration` forms
 * (`"5 seconds"`, `Duration.minutes(2)`, …); they are converted exactly, and a sub-millisecond
 * remainder is rejected rather than rounded.
 *
 * @since 0.1.0
 */
import { DateTime, Duration, Option } from "effect"
import { InvalidDelay, InvalidTime, show } from "./Errors.ts"

/**
 * A duration: integer milliseconds, or any Effect `Duration.Input` (`"2 seconds"`, a `Duration`,
 * `{ minutes: 1 }`, …).
 *
 * @category models
 * @since 0.1.0
 */
export type DurationInput = number | Duration.Input

/**
 * The largest instant or duration the kernel holds: 2^53-1 ms (about 285,000 years).
 *
 * @category models
 * @since 0.1.0
 */
export const MAX_MS = Number.MAX_SAFE_INTEGER

const NANOS_PER_MS = 1_000_000n

/**
 * Converts a duration to whole milliseconds, or returns the error made by `onError` (which gets
 * the reason) when it is not a non-negative, finite, whole, safe number of ms. O(1).
 *
 * @category constructors
 * @since 0.1.0
 */
export const toMillisWith = <E>(
  input: DurationInput,
  onError: (reason: string) => E,
): number | E => {
  if (typeof input === "number") {
    if (!Number.isSafeInteger(input)) {
      return onError(
        !Number.isFinite(input)
          ? "must be a finite number of milliseconds"
          : Number.isInteger(input)
            ? "must be at most 2^53-1 ms"
            : "must be a whole number of milliseconds",
      )
    }
    return input < 0 ? onError("must not be negative") : input
  }
  const decoded = Duration.fromInput(input)
  if (Option.isNone(decoded)) return onError("is not a duration")
  const nanos = Duration.toNanos(decoded.value)
  if (Option.isNone(nanos)) return onError("must be finite")
  if (nanos.value < 0n) return onError("must not be negative")
  if (nanos.value % NANOS_PER_MS !== 0n) {
    return onError("has a sub-millisecond part (durations are whole milliseconds)")
  }
  const ms = nanos.value / NANOS_PER_MS
  return ms > BigInt(MAX_MS) ? onError("must be at most 2^53-1 ms") : Number(ms)
}

/**
 * Converts a delay to whole milliseconds, or an {@link InvalidDelay} naming `field`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const toDelay = (input: DurationInput, field = "delay"): number | InvalidDelay =>
  toMillisWith(
    input,
    (reason) =>
      new InvalidDelay({ field, value: input, message: `${field} ${reason}, got ${show(input)}` }),
  )

/**
 * Checks an absolute instant (epoch ms, a `Date`, or an Effect `DateTime`), returning it as a number or an
 * {@link InvalidTime} naming `field`. Instants in the past are valid (they are due at once).
 *
 * @category constructors
 * @since 0.1.0
 */
export const toInstant = (
  input: number | Date | DateTime.DateTime,
  field = "time",
): number | InvalidTime => {
  const ms =
    input instanceof Date
      ? input.getTime()
      : DateTime.isDateTime(input)
        ? DateTime.toEpochMillis(input)
        : input
  if (typeof ms !== "number" || !Number.isSafeInteger(ms)) {
    return new InvalidTime({
      field,
      value: input,
      message: `${field} must be a safe integer number of epoch milliseconds, got ${show(input)}`,
    })
  }
  return ms
}

/**
 * `now + delay` as a slot, or an {@link InvalidDelay} when the sum passes 2^53-1 ms.
 *
 * @category combinators
 * @since 0.1.0
 */
export const slotAfter = (
  now: number,
  delay: number,
  field: string,
  input: unknown,
): number | InvalidDelay => {
  const slot = now + delay
  return slot > MAX_MS
    ? new InvalidDelay({
        field,
        value: input,
        message: `${field} ${show(input)} from now=${now} puts the slot beyond 2^53-1 ms`,
      })
    : slot
}
