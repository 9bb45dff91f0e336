/**
 * Missed-run policies for grid schedules (fixed rate and cron), SPEC §3.
 *
 * A grid schedule has a nominal sequence of slots. When a run ends at `now`, the grid slots after
 * the run's own slot that are already `<= now` are *missed* (a zero-length run at its own slot
 * misses nothing). The policy decides what happens to them, as one pure function,
 * {@link next}, over a {@link Grid}:
 *
 * ```text
 * grid:      0    10    20    30    40
 * run:       [slot 0 ...... ended at 35]
 * catch-up:            10,20,30 run back to back from 35, then 40   (nothing dropped)
 * coalesce:                     30 runs once (for 10, 20, 30), then 40  (10, 20 dropped)
 * skip:                               next is 40                     (10, 20, 30 dropped)
 * ```
 *
 * @since 0.1.0
 */
import { Cron, DateTime, Option } from "effect"
import * as CronSpec from "./internal/cron.ts"

/**
 * What to do with grid slots that passed while a run was late or running.
 * - `"catch-up"` (default, like Java's `scheduleAtFixedRate`): run every missed slot, in order.
 * - `"coalesce"`: run once for all of them, as the latest missed slot, then rejoin the grid. This
 *   also holds when a pending slot is taken late (the clock jumped): it runs once, as the latest
 *   grid slot that has passed.
 * - `"skip"`: drop them; the next slot is the first grid slot strictly after `now`.
 *
 * @category models
 * @since 0.1.0
 */
export type MissedRunPolicy = "catch-up" | "coalesce" | "skip"

/**
 * The policies, in documentation order.
 *
 * @category models
 * @since 0.1.0
 */
export const policies: ReadonlyArray<MissedRunPolicy> = ["catch-up", "coalesce", "skip"]

/**
 * A schedule's nominal slots.
 *
 * @category models
 * @since 0.1.0
 */
export interface Grid {
  /** The first grid slot strictly after `t`, or `undefined` when the grid has ended. */
  readonly after: (t: number) => number | undefined
  /** The latest grid slot at or before `t`, or `undefined` when there is none. */
  readonly atOrBefore: (t: number) => number | undefined
  /**
   * How many grid slots lie in `[from, to]` (both grid slots). A grid that counts one slot at a
   * time stops after `limit + 1`, so a result above `limit` means "more than `limit`".
   */
  readonly count: (from: number, to: number, limit: number) => number
  /** Whether {@link Grid.count} is exact for any range (arithmetic grids). */
  readonly countsExactly: boolean
}

/**
 * Grid slots that will not get a run of their own: `count` slots from `first` to `last`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Dropped {
  readonly first: number
  readonly last: number
  /** Exact for fixed-rate grids; for cron, at most {@link COUNT_LIMIT} (see `exact`). */
  readonly count: number
  /** `false` when counting stopped at {@link COUNT_LIMIT}. */
  readonly exact: boolean
}

/**
 * The decision for the next slot.
 *
 * @category models
 * @since 0.1.0
 */
export interface Next {
  /** The slot of the next run (`scheduledFor`). May be `<= now`: then it is due at once. */
  readonly slot: number
  /** Missed grid slots that are dropped (skip) or merged into this run (coalesce). */
  readonly dropped: Dropped | undefined
}

/**
 * The most missed cron slots counted one by one for {@link Dropped.count}. Counting a cron grid
 * costs ~15 µs a slot; beyond this the count is a lower bound. Fixed-rate counts are arithmetic.
 *
 * @category models
 * @since 0.1.0
 */
export const COUNT_LIMIT = 1024

/**
 * The slots `origin + k * period` for every integer k >= 0. Exact for any safe-integer inputs:
 * quotients are corrected after the floating division, so no slot is ever off by one.
 *
 * @category constructors
 * @since 0.1.0
 */
export const periodic = (origin: number, period: number): Grid => {
  // Largest k with origin + k * period <= t, for t >= origin.
  const steps = (t: number): number => {
    const d = t - origin
    let k = Math.floor(d / period)
    if (k * period > d) k--
    else if ((k + 1) * period <= d) k++
    return k
  }
  return {
    after: (t) => {
      const s = t < origin ? origin : origin + (steps(t) + 1) * period
      return s > Number.MAX_SAFE_INTEGER ? undefined : s
    },
    atOrBefore: (t) => (t < origin ? undefined : origin + steps(t) * period),
    count: (from, to) => (to < from ? 0 : steps(to) - steps(from) + 1),
    countsExactly: true,
  }
}

const UTC = Option.some<DateTime.TimeZone>(DateTime.zoneMakeNamedUnsafe("UTC"))

/**
 * An Effect `Cron` parsed without a zone, as the same cron in UTC: `Schedule.cron` reads it in UTC
 * (its `timeZone` says so), while Effect's own search would read it in the host's zone, so the
 * same task would fire at other instants on another machine. The copy keeps every field of the
 * parsed value (its day rule and lookup tables included), with only the zone set.
 */
const inUtc = (expression: Cron.Cron): Cron.Cron =>
  Option.isSome(expression.tz)
    ? expression
    : Object.assign(Object.create(Object.getPrototypeOf(expression)), expression, { tz: UTC })

/**
 * The matches of a parsed cron expression in its time zone: one parsed by
 * `Schedule.parseCron` (tickwork's DST rules, SPEC §3), or a `Cron` parsed by Effect (its own
 * DST policy).
 *
 * @category constructors
 * @since 0.1.0
 */
export const cron = (expression: Cron.Cron | CronSpec.Parsed): Grid => {
  if (CronSpec.isParsed(expression)) {
    const { spec, timeZone } = expression
    const after = (t: number) => CronSpec.next(spec, timeZone, t)
    return {
      after,
      atOrBefore: (t) => CronSpec.atOrBefore(spec, timeZone, t),
      count: (from, to, limit) => countBySteps(after, from, to, limit),
      countsExactly: false,
    }
  }
  const zoned = inUtc(expression)
  // effect's Cron throws when its search finds no match (e.g. "0 0 30 2 *"): that grid has ended.
  const after = (t: number): number | undefined => {
    try {
      return Cron.next(zoned, new Date(t)).getTime()
    } catch {
      return undefined
    }
  }
  return {
    after,
    atOrBefore: (t) => {
      try {
        return Cron.prev(zoned, new Date(t + 1)).getTime()
      } catch {
        return undefined
      }
    },
    count: (from, to, limit) => countBySteps(after, from, to, limit),
    countsExactly: false,
  }
}

/** Slots from `from` to `to` (both included), stepping `after`; stops past `limit`. */
const countBySteps = (
  after: (t: number) => number | undefined,
  from: number,
  to: number,
  limit: number,
): number => {
  let n = 0
  for (let s: number | undefined = from; s !== undefined && s <= to && n <= limit; s = after(s)) n++
  return n
}

/**
 * The next slot after a run of grid slot `slot` that ended at `now`, under `policy`.
 * Returns `undefined` when the grid has no further slot. Pure; O(1) for fixed-rate grids.
 *
 * **Example** (SPEC §3: due 0, period 10, the run ended at 35)
 *
 * ```ts
 * import { MissedRun } from "@tickwork/core"
 * const grid = MissedRun.periodic(0, 10)
 * MissedRun.next("catch-up", grid, 0, 35)?.slot // 10 (then 20, 30, each due at once)
 * MissedRun.next("coalesce", grid, 0, 35)?.slot // 30 (10 and 20 dropped)
 * MissedRun.next("skip", grid, 0, 35)?.slot     // 40 (10, 20 and 30 dropped)
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const next = (
  policy: MissedRunPolicy,
  grid: Grid,
  slot: number,
  now: number,
): Next | undefined => {
  const nominal = grid.after(slot)
  if (nominal === undefined) return undefined
  if (nominal > now || policy === "catch-up") return { slot: nominal, dropped: undefined }
  // At least one grid slot (nominal) is missed.
  const latest = grid.atOrBefore(now) as number
  if (policy === "coalesce") {
    if (latest === nominal) return { slot: latest, dropped: undefined }
    const last = droppedBefore(grid, nominal, latest)
    return { slot: latest, dropped: range(grid, nominal, last) }
  }
  const following = grid.after(now)
  return following === undefined
    ? undefined
    : { slot: following, dropped: range(grid, nominal, latest) }
}

const droppedBefore = (grid: Grid, from: number, latest: number): number =>
  grid.atOrBefore(latest - 1) ?? from

/**
 * The grid slots from `first` to `last` (both grid slots) as a {@link Dropped} range, counted
 * exactly for fixed-rate grids and up to {@link COUNT_LIMIT} for cron.
 *
 * @category constructors
 * @since 0.1.0
 */
export const range = (grid: Grid, first: number, last: number): Dropped => {
  const count = grid.count(first, last, COUNT_LIMIT)
  return grid.countsExactly || count <= COUNT_LIMIT
    ? { first, last, count, exact: true }
    : { first, last, count: COUNT_LIMIT, exact: false }
}
