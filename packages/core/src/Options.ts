/**
 * Checks shared by every layer that takes options (the kernel's task options, the runtime's
 * layer and schedule options, the durable scheduler's): each bad value is an `InvalidOption`
 * naming the field and the value (SPEC §13), written once here so every layer words it alike.
 *
 * @since 0.3.0
 */
import { InvalidOption, show } from "./Errors.ts"
import { type DurationInput, toMillisWith } from "./Time.ts"

export { unknownKey } from "./Errors.ts"

/**
 * An `InvalidOption` for `field`: "`field` `rule`, got `value`".
 *
 * @category constructors
 * @since 0.3.0
 */
export const invalid = (field: string, value: unknown, rule: string): InvalidOption =>
  new InvalidOption({ field, value, message: `${field} ${rule}, got ${show(value)}` })

/**
 * A safe integer `>= min` (default 1), or `fallback` when absent.
 *
 * @category constructors
 * @since 0.3.0
 */
export const integer = (
  field: string,
  value: number | undefined,
  fallback: number,
  min = 1,
): number | InvalidOption => {
  const v = value ?? fallback
  return Number.isSafeInteger(v) && v >= min
    ? v
    : invalid(field, value, `must be an integer >= ${min}`)
}

/**
 * Whole ms of a duration (ms or an Effect `Duration` input); `fallback` when absent; `false`
 * (where an option allows it) is +Infinity, "none". With `positive`, 0 is refused.
 *
 * @category constructors
 * @since 0.3.0
 */
export const millis = (
  field: string,
  input: DurationInput | false | undefined,
  fallback: number,
  positive = false,
): number | InvalidOption => {
  if (input === false) return Number.POSITIVE_INFINITY
  if (input === undefined) return fallback
  const ms = toMillisWith(input, (reason) => invalid(field, input, reason))
  if (typeof ms === "number" && positive && ms === 0)
    return invalid(field, input, "must be positive")
  return ms
}
