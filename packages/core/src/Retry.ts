/**
 * Retry and failure policy (SPEC §7).
 *
 * A failed run is retried while its task has retries left for the current slot. Retry `r`
 * (1-based) is due at `failedAt + backoff(r)` where
 *
 * ```text
 * backoff(r) = min(maxDelay, base * factor^(r-1))          jitter "none" (default)
 *            = uniform integer in [0, backoff(r)]           jitter "full"
 *            = ceil(b/2) + uniform integer in [0, floor(b/2)]  jitter "equal" (b = backoff(r))
 * ```
 *
 * Jitter draws from the injected {@link Random}, so a seed reproduces every delay. All results
 * are whole milliseconds.
 *
 * @since 0.1.0
 */
import { type InvalidOption, InvalidRetryPolicy, show, unknownKey } from "./Errors.ts"
import type { Random } from "./Random.ts"
import { type DurationInput, MAX_MS, toMillisWith } from "./Time.ts"

/**
 * How backoff delays are spread out.
 *
 * @category models
 * @since 0.1.0
 */
export type Jitter = "none" | "full" | "equal"

/**
 * Retry options, all optional.
 *
 * @category models
 * @since 0.1.0
 */
export interface RetryPolicy {
  /** Retries per slot after the first attempt. Default 0. */
  readonly maxRetries?: number
  /** Backoff of the first retry. Default 1 second. */
  readonly base?: DurationInput
  /** Growth per retry, a finite number >= 1. Default 2. */
  readonly factor?: number
  /** Upper bound on a backoff. Default: none (2^53-1 ms). */
  readonly maxDelay?: DurationInput
  /** Default `"none"`. */
  readonly jitter?: Jitter
}

/**
 * A validated retry policy.
 *
 * @category models
 * @since 0.1.0
 */
export interface Resolved {
  readonly maxRetries: number
  /** ms */
  readonly base: number
  readonly factor: number
  /** ms */
  readonly maxDelay: number
  readonly jitter: Jitter
}

/**
 * The policy used when none is given: no retries.
 *
 * @category models
 * @since 0.1.0
 */
export const none: Resolved = {
  maxRetries: 0,
  base: 1000,
  factor: 2,
  maxDelay: MAX_MS,
  jitter: "none",
}

const retryKeys: ReadonlySet<string> = new Set([
  "maxRetries",
  "base",
  "factor",
  "maxDelay",
  "jitter",
])

const bad = (field: string, value: unknown, rule: string) =>
  new InvalidRetryPolicy({ field, value, message: `${field} ${rule}, got ${show(value)}` })

const ms = (field: string, input: DurationInput) =>
  toMillisWith(input, (reason) => bad(field, input, reason))

/**
 * Validates a retry policy, filling in defaults. Fails with an {@link InvalidRetryPolicy} naming
 * the first bad field, or an `InvalidOption` naming a key it does not know.
 *
 * @category constructors
 * @since 0.1.0
 */
export const resolve = (
  policy: RetryPolicy | undefined,
): Resolved | InvalidRetryPolicy | InvalidOption => {
  if (policy === undefined) return none
  if (typeof policy !== "object" || policy === null)
    return bad("retry", policy, "must be an object")
  const unknown = unknownKey(policy, retryKeys, "retry.")
  if (unknown !== undefined) return unknown
  const maxRetries = policy.maxRetries ?? 0
  if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) {
    return bad("retry.maxRetries", maxRetries, "must be a non-negative integer")
  }
  const base = ms("retry.base", policy.base ?? none.base)
  if (typeof base !== "number") return base
  const factor = policy.factor ?? 2
  if (typeof factor !== "number" || !Number.isFinite(factor) || factor < 1) {
    return bad("retry.factor", factor, "must be a finite number >= 1")
  }
  const maxDelay = policy.maxDelay === undefined ? MAX_MS : ms("retry.maxDelay", policy.maxDelay)
  if (typeof maxDelay !== "number") return maxDelay
  const jitter = policy.jitter ?? "none"
  if (jitter !== "none" && jitter !== "full" && jitter !== "equal") {
    return bad("retry.jitter", jitter, 'must be "none", "full" or "equal"')
  }
  return maxRetries === 0 &&
    policy.base === undefined &&
    policy.factor === undefined &&
    policy.maxDelay === undefined &&
    policy.jitter === undefined
    ? none
    : { maxRetries, base, factor, maxDelay, jitter }
}

/**
 * The delay before retry `retry` (1-based), in whole ms. Draws one number from `random` when the
 * policy has jitter, none otherwise. O(1).
 *
 * **Example** (base 100 ms, factor 2, capped at 1 s)
 *
 * ```ts
 * import { Random, Retry } from "@tickwork/core"
 * const p = Retry.resolve({ maxRetries: 5, base: 100, maxDelay: 1000 }) as Retry.Resolved
 * [1, 2, 3, 4, 5].map((r) => Retry.backoff(p, r, Random.seeded(1))) // [100, 200, 400, 800, 1000]
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const backoff = (policy: Resolved, retry: number, random: Random): number => {
  const raw = policy.base * policy.factor ** (retry - 1)
  const capped = Math.floor(Math.min(policy.maxDelay, raw, MAX_MS))
  switch (policy.jitter) {
    case "none":
      return capped
    case "full":
      return Math.floor(random.next() * (capped + 1))
    case "equal": {
      const half = Math.floor(capped / 2)
      return capped - half + Math.floor(random.next() * (half + 1))
    }
  }
}
