/**
 * @internal
 * The checks of `new Kernel(options)`: retention bounds and shared breaker policies, each bad
 * value a typed error naming its field (the constructor throws it, before any state exists).
 */
import * as Breaker from "../Breaker.ts"
import { InvalidOption, show, unknownKey } from "../Errors.ts"
import * as Options from "../Options.ts"
import { MAX_MS, toMillisWith } from "../Time.ts"
import type { KernelOptions } from "./kernelTypes.ts"
import { retentionKeys } from "./kernelTypes.ts"

/** @internal The retention bounds: how many final tasks are kept, and for how long (ms). */
export interface RetentionBounds {
  readonly maxFinished: number
  readonly maxAgeMs: number
}

/** @internal `options.retention` checked, defaults filled in (10,000 tasks, no age bound). */
export const retentionOf = (options: KernelOptions): RetentionBounds | InvalidOption => {
  const retention = options.retention ?? {}
  const unknown = unknownKey(retention, retentionKeys, "retention.")
  if (unknown !== undefined) return unknown
  const maxFinished = retention.maxFinished ?? 10_000
  const ageInput = retention.maxAge ?? retention.maxAgeMs
  const maxAgeMs =
    ageInput === undefined
      ? MAX_MS
      : toMillisWith(ageInput, (reason) => {
          const field = retention.maxAge === undefined ? "retention.maxAgeMs" : "retention.maxAge"
          return new InvalidOption({
            field,
            value: ageInput,
            message: `${field} ${reason}, got ${show(ageInput)}`,
          })
        })
  if (typeof maxAgeMs !== "number") return maxAgeMs
  if (!Number.isSafeInteger(maxFinished) || maxFinished < 0) {
    return new InvalidOption({
      field: "retention.maxFinished",
      value: maxFinished,
      message: `retention.maxFinished must be a non-negative integer, got ${show(maxFinished)}`,
    })
  }
  const tooMany = Options.integer(
    "retention.maxFinished",
    maxFinished,
    0,
    0,
    Options.bounds.maxFinished,
  )
  if (typeof tooMany !== "number") return tooMany
  return { maxFinished, maxAgeMs }
}

/**
 * @internal `options.breakers` resolved, by name, in the order given; the first bad policy's
 * typed error instead.
 */
export const breakersOf = (
  options: KernelOptions,
): Array<readonly [string, Breaker.Resolved]> | InvalidOption => {
  const breakers = options.breakers ?? {}
  if (typeof breakers !== "object" || breakers === null) {
    return new InvalidOption({
      field: "breakers",
      value: breakers,
      message: `breakers must be an object of breaker policies by name, got ${show(breakers)}`,
    })
  }
  const out: Array<readonly [string, Breaker.Resolved]> = []
  for (const [name, policy] of Object.entries(breakers)) {
    const resolved = Breaker.resolve(policy, `breakers.${name}`)
    if (!("failures" in resolved)) return resolved
    out.push([name, resolved])
  }
  return out
}
