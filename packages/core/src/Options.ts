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
 * An upper bound of a size-like option, and why it is there.
 *
 * @category models
 * @since 0.4.0
 */
export interface Bound {
  /** The largest value accepted. */
  readonly max: number
  /** Why nothing larger is: said in the error, so a user knows what to do instead. */
  readonly why: string
}

/**
 * The upper bound of every size-like option of every layer, decided here once: past it an
 * option is an `InvalidOption` naming the field and the value, before anything is allocated.
 * Each bound is far above any useful setting and far below what the process can hold, since
 * some of these sizes are allocated up front (arrays of `workers` slots, a stream buffer of
 * `streamCapacity` records): an unbounded value crashed the process (issue 28).
 *
 * | option                                      | at most    |
 * | ------------------------------------------- | ---------- |
 * | `workers` (runtime and durable)             | 10,000     |
 * | `claimBatch` (durable)                      | 10,000     |
 * | `limit`, the page size of task listings     | 10,000     |
 * | `ledgerPerTask` (runtime)                   | 10,000     |
 * | `ledgerCapacity` (runtime)                  | 10,000,000 |
 * | `streamCapacity` (runtime and durable)      | 1,000,000  |
 * | `retention.maxFinished` (kernel, runtime)   | 10,000,000 |
 * | `count` of `Schedule.preview`               | 100,000    |
 * | `maxConnections` (durable, PostgreSQL pool) | 1,000      |
 * | `maxResultBytes` (runtime, durable)         | 8,388,608  |
 *
 * @category models
 * @since 0.4.0
 */
export const bounds = {
  workers: {
    max: 10_000,
    why: "runs in flight at once; the pool keeps arrays of this many slots, and more concurrency belongs inside a handler",
  },
  claimBatch: {
    max: 10_000,
    why: "rows claimed in one transaction; a larger claim holds its lock longer and its leases run out before the runs start",
  },
  limit: {
    max: 10_000,
    why: "rows in one page; read further pages with `after`",
  },
  ledgerPerTask: {
    max: 10_000,
    why: "records of one task kept in memory; a longer history belongs in a durable store",
  },
  ledgerCapacity: {
    max: 10_000_000,
    why: "records kept in memory, ~250 bytes each (~2.5 GB at the bound); a longer history belongs in a durable store",
  },
  streamCapacity: {
    max: 1_000_000,
    why: "records buffered per stream subscriber, allocated when it subscribes",
  },
  maxFinished: {
    max: 10_000_000,
    why: "final tasks kept in memory; a longer history belongs in a durable store",
  },
  previewCount: {
    max: 100_000,
    why: "slots computed and returned in one array",
  },
  resultBytes: {
    max: 8_388_608,
    why: "bytes of one kept result, stored with its ledger entry and read back with it; a larger output belongs in your own storage, with its key as the result",
  },
  maxConnections: {
    max: 1_000,
    why: "connections one process may open; PostgreSQL serves 100 for all processes together by default",
  },
} as const satisfies Record<string, Bound>

/**
 * The default catch-up window of a layer's `catchUpWindow` (SPEC §3), ms: one day. A store
 * whose tasks may wait out a long outage (the durable store, whose tasks outlive a process)
 * skips a slot older than this when it comes back, instead of running a day's backlog; a task's
 * own `window` overrides it.
 *
 * @category models
 * @since 0.4.0
 */
export const defaultCatchUpWindow = 86_400_000

/**
 * A safe integer `>= min` (default 1), or `fallback` when absent; with `bound`, also at most
 * `bound.max` (the error then says the range and why).
 *
 * @category constructors
 * @since 0.3.0
 */
export const integer = (
  field: string,
  value: number | undefined,
  fallback: number,
  min = 1,
  bound?: Bound,
): number | InvalidOption => {
  const v = value ?? fallback
  if (bound === undefined) {
    return Number.isSafeInteger(v) && v >= min
      ? v
      : invalid(field, value, `must be an integer >= ${min}`)
  }
  return Number.isSafeInteger(v) && v >= min && v <= bound.max
    ? v
    : invalid(
        field,
        value,
        `must be an integer from ${min} to ${bound.max.toLocaleString("en-US")} (${bound.why})`,
      )
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
