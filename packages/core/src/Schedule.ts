/**
 * Kinds of schedule (SPEC §3) as plain data, and the pure functions that turn them into slots.
 *
 * | kind | first slot | next slot after a run of slot `s` that ended at `f` |
 * |---|---|---|
 * | {@link once} `(delay)` | `now + delay` | none |
 * | {@link at} `(time)` | `time` | none |
 * | {@link fixedRate} `(period, { delay })` | `now + delay` | `s + period` on the grid, then the missed-run policy |
 * | {@link fixedDelay} `(period, { delay })` | `now + delay` | `f + period` |
 * | {@link cron} `(expression, { timeZone })` | first match after `now` | next match after `s`, then the missed-run policy |
 * | {@link custom} `(next)` | `next(undefined, now)` | `next(s, f)`, or none |
 *
 * A recurring task's next slot is computed only after its run has ended, so a task never
 * overlaps itself. Retries do not move the grid: `s` is always the grid slot the retries belong to.
 *
 * @since 0.1.0
 */
import { Cron, DateTime, Option, Result } from "effect"
import {
  InvalidCronExpression,
  InvalidOption,
  InvalidPeriod,
  InvalidTime,
  type ScheduleError,
  show,
} from "./Errors.ts"
import {
  type DayMatch,
  type DstNote,
  dstNote,
  isCronValue,
  type ParsedCron,
  parseCron,
} from "./internal/cronExpression.ts"
import * as MissedRun from "./MissedRun.ts"
import * as Options from "./Options.ts"
import { type DurationInput, MAX_MS, slotAfter, toDelay, toInstant, toMillisWith } from "./Time.ts"

export {
  type CronExplanation,
  type DayMatch,
  type DstNote,
  dstNote,
  explain,
  type ParsedCron,
  parseCron,
  VIXIE_NOTE,
} from "./internal/cronExpression.ts"

/**
 * Runs once, `delay` after it is scheduled.
 *
 * @category models
 * @since 0.1.0
 */
export interface Once {
  readonly _tag: "Once"
  readonly delay: DurationInput
}

/**
 * Runs once at an absolute instant (epoch ms). An instant in the past is due at once.
 *
 * @category models
 * @since 0.1.0
 */
export interface At {
  readonly _tag: "At"
  readonly time: number | Date | DateTime.DateTime
}

/**
 * Runs every `period` on a fixed grid from its first slot; never drifts.
 *
 * @category models
 * @since 0.1.0
 */
export interface FixedRate {
  readonly _tag: "FixedRate"
  readonly period: DurationInput
  readonly delay: DurationInput
}

/**
 * Runs `period` after the previous run ended.
 *
 * @category models
 * @since 0.1.0
 */
export interface FixedDelay {
  readonly _tag: "FixedDelay"
  readonly period: DurationInput
  readonly delay: DurationInput
}

/**
 * Runs on the matches of a cron expression (5 fields, or 6 with seconds first) in an IANA zone.
 *
 * @category models
 * @since 0.1.0
 */
export interface CronSchedule {
  readonly _tag: "Cron"
  /** The expression, or a `Cron` parsed by Effect (its own zone and DST policy then apply). */
  readonly expression: string | Cron.Cron
  readonly timeZone: string
  /** How the two day fields combine; absent means `"vixie"` (see {@link DayMatch}). */
  readonly dayMatch?: DayMatch
}

/**
 * The next slot of a custom schedule: called with `(undefined, now)` for the first slot and with
 * `(slot, finishedAt)` after each run. Returns an epoch-ms slot, or `undefined` for "no more".
 * It must be pure: the kernel may call it at any time and must get the same answer.
 *
 * @category models
 * @since 0.1.0
 */
export type NextSlot = (slot: number | undefined, finishedAt: number) => number | undefined

/**
 * A schedule defined by a function.
 *
 * @category models
 * @since 0.1.0
 */
export interface Custom {
  readonly _tag: "Custom"
  readonly next: NextSlot
}

/**
 * Any schedule.
 *
 * @category models
 * @since 0.1.0
 */
export type Schedule = Once | At | FixedRate | FixedDelay | CronSchedule | Custom

/**
 * Once, after `delay` (0 = due now).
 *
 * @category constructors
 * @since 0.1.0
 */
export const once = (delay: DurationInput): Once => ({ _tag: "Once", delay })

/**
 * Once, at `time` (epoch ms or a `Date`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const at = (time: number | Date | DateTime.DateTime): At => ({ _tag: "At", time })

/**
 * Every `period` on a fixed grid, first after `delay` (default 0).
 *
 * **Example** (Every 2 seconds, first in 500 ms)
 *
 * ```ts
 * import { Schedule } from "@tickwork/core"
 * Schedule.fixedRate("2 seconds", { delay: 500 })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const fixedRate = (
  period: DurationInput,
  options?: { readonly delay?: DurationInput },
): FixedRate => ({ _tag: "FixedRate", period, delay: options?.delay ?? 0 })

/**
 * `period` after each run ends, first after `delay` (default 0).
 *
 * @category constructors
 * @since 0.1.0
 */
export const fixedDelay = (
  period: DurationInput,
  options?: { readonly delay?: DurationInput },
): FixedDelay => ({ _tag: "FixedDelay", period, delay: options?.delay ?? 0 })

/**
 * On a cron expression's matches in `timeZone` (an IANA name; default `"UTC"`). The expression
 * may also be a `Cron` already parsed by Effect: its own zone and DST policy then apply, and
 * `timeZone` defaults to its zone. `dayMatch` (default `"vixie"`) says how restricted
 * day-of-month and day-of-week fields combine: see {@link DayMatch}; `"either"` reads them as
 * croner and cron-parser do. It applies to a string expression only.
 *
 * **Example** (Weekdays at 09:00 in New York, DST included)
 *
 * ```ts
 * import { Cron } from "effect"
 * import { Schedule } from "@tickwork/core"
 * Schedule.cron("0 9 * * MON-FRI", { timeZone: "America/New_York" })
 * Schedule.cron(Cron.parseUnsafe("0 9 * * MON-FRI", "America/New_York"))
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const cron = (
  expression: string | Cron.Cron,
  options?: { readonly timeZone?: string; readonly dayMatch?: DayMatch },
): CronSchedule => ({
  _tag: "Cron",
  expression,
  timeZone:
    options?.timeZone ??
    (typeof expression === "string"
      ? "UTC"
      : Option.match(expression.tz, { onNone: () => "UTC", onSome: DateTime.zoneToString })),
  // Only when given, so a default schedule's data (and its stored form) has no such key.
  ...(options?.dayMatch === undefined ? {} : { dayMatch: options.dayMatch }),
})

/**
 * A schedule given by a function; see {@link NextSlot}.
 *
 * @category constructors
 * @since 0.1.0
 */
export const custom = (next: NextSlot): Custom => ({ _tag: "Custom", next })

/**
 * A validated schedule, ready for the kernel. `undefined` plans are one-shot.
 *
 * @category models
 * @since 0.1.0
 */
export type Plan =
  | { readonly kind: "fixed-rate"; readonly period: number; readonly grid: MissedRun.Grid }
  | { readonly kind: "fixed-delay"; readonly period: number }
  | {
      readonly kind: "cron"
      readonly cron: Cron.Cron | ParsedCron
      readonly grid: MissedRun.Grid
    }
  | { readonly kind: "custom"; readonly next: NextSlot }

/**
 * A schedule's first slot and, for recurring kinds, its plan.
 *
 * @category models
 * @since 0.1.0
 */
export interface Resolved {
  readonly first: number
  readonly plan: Plan | undefined
}

const toPeriod = (input: DurationInput): number | InvalidPeriod => {
  const ms = toMillisWith(
    input,
    (reason) =>
      new InvalidPeriod({
        field: "period",
        value: input,
        message: `period ${reason}, got ${show(input)}`,
      }),
  )
  // `ms` is a number or an InvalidPeriod, and an error object is never === 0.
  return ms === 0
    ? new InvalidPeriod({
        field: "period",
        value: input,
        message: `period must be positive (0 would run forever within one instant), got ${show(input)}`,
      })
    : ms
}

const customSlot = (
  next: NextSlot,
  slot: number | undefined,
  finishedAt: number,
): number | undefined | InvalidTime => {
  const value = next(slot, finishedAt)
  if (value === undefined || value === null) return undefined
  return toInstant(value as number, "next()")
}

/**
 * Validates a schedule and computes its first slot at `now`. Pure (a custom schedule's `next` is
 * called once). Fails with the typed error of the first bad field.
 *
 * @category constructors
 * @since 0.1.0
 */
export const resolve = (schedule: Schedule, now: number): Resolved | ScheduleError => {
  switch (schedule?._tag) {
    case "Once": {
      const delay = toDelay(schedule.delay)
      if (typeof delay !== "number") return delay
      const first = slotAfter(now, delay, "delay", schedule.delay)
      return typeof first === "number" ? { first, plan: undefined } : first
    }
    case "At": {
      const first = toInstant(schedule.time)
      return typeof first === "number" ? { first, plan: undefined } : first
    }
    case "FixedRate":
    case "FixedDelay": {
      const period = toPeriod(schedule.period)
      if (typeof period !== "number") return period
      const delay = toDelay(schedule.delay)
      if (typeof delay !== "number") return delay
      const first = slotAfter(now, delay, "delay", schedule.delay)
      if (typeof first !== "number") return first
      return schedule._tag === "FixedRate"
        ? { first, plan: { kind: "fixed-rate", period, grid: MissedRun.periodic(first, period) } }
        : { first, plan: { kind: "fixed-delay", period } }
    }
    case "Cron": {
      const parsed = Cron.isCron(schedule.expression)
        ? schedule.expression
        : parseCron(schedule.expression, schedule.timeZone, { dayMatch: schedule.dayMatch })
      if (!isCronValue(parsed)) return parsed
      const grid = MissedRun.cron(parsed)
      const first = grid.after(now)
      if (first === undefined) {
        return new InvalidCronExpression({
          field: "expression",
          value: schedule.expression,
          message: `expression ${show(schedule.expression)} never matches a date`,
        })
      }
      return { first, plan: { kind: "cron", cron: parsed, grid } }
    }
    case "Custom": {
      if (typeof schedule.next !== "function") {
        return new InvalidOption({
          field: "schedule.next",
          value: schedule.next,
          message: `schedule.next must be a function, got ${show(schedule.next)}`,
        })
      }
      let first: number | undefined | InvalidTime
      try {
        first = customSlot(schedule.next, undefined, now)
      } catch (error) {
        return new InvalidTime({
          field: "next()",
          value: error,
          message: `a custom schedule's next(undefined, ${now}) threw: ${String(error)}`,
        })
      }
      if (first === undefined) {
        return new InvalidTime({
          field: "next()",
          value: first,
          message:
            "a custom schedule's next(undefined, now) must return a first slot, got undefined",
        })
      }
      return typeof first === "number"
        ? { first, plan: { kind: "custom", next: schedule.next } }
        : first
    }
    default:
      return new InvalidOption({
        field: "schedule",
        value: schedule,
        message: `schedule must be made by Schedule.once/at/fixedRate/fixedDelay/cron/custom, got ${show(schedule)}`,
      })
  }
}

/**
 * The next slot of a recurring plan after a run of grid slot `slot` that ended at `finishedAt`.
 * `undefined` means the schedule has ended; an {@link InvalidTime} means a custom `next` returned
 * something that is not a slot. Pure; O(1) except cron (~15 µs) and custom (the user's function).
 *
 * @category combinators
 * @since 0.1.0
 */
export const nextAfterRun = (
  plan: Plan,
  policy: MissedRun.MissedRunPolicy,
  slot: number,
  finishedAt: number,
): MissedRun.Next | undefined | InvalidTime => {
  switch (plan.kind) {
    case "fixed-rate":
    case "cron":
      return MissedRun.next(policy, plan.grid, slot, finishedAt)
    case "fixed-delay": {
      const s = finishedAt + plan.period
      return s > MAX_MS ? undefined : { slot: s, dropped: undefined }
    }
    case "custom": {
      let s: number | undefined | InvalidTime
      try {
        s = customSlot(plan.next, slot, finishedAt)
      } catch (error) {
        return new InvalidTime({
          field: "next()",
          value: error,
          message: `a custom schedule's next(${slot}, ${finishedAt}) threw: ${String(error)}`,
        })
      }
      // `undefined` (no more slots) and an InvalidTime both pass through as they are.
      return typeof s !== "number" ? s : { slot: s, dropped: undefined }
    }
  }
}

/**
 * One slot of a preview: the instant (epoch ms) and, for cron, how DST moved it.
 *
 * @category models
 * @since 0.2.0
 */
export interface PreviewSlot {
  readonly slot: number
  readonly dst: DstNote | undefined
}

/**
 * The next `count` slots of `schedule` from `from`, without scheduling it (SPEC §15): the first
 * slot as if scheduled at `from`, then each next slot as if every run took no time. Cron slots
 * carry their DST note. Pure and deterministic (a custom schedule's `next` is called). Fails with
 * the schedule's typed error, or an `InvalidOption` for a bad `count` (at most 100,000).
 *
 * **Example** (A spring-forward night in New York)
 *
 * ```ts
 * import { Schedule } from "@tickwork/core"
 * const slots = Schedule.preview(Schedule.cron("30 2 * * *", { timeZone: "America/New_York" }), {
 *   from: Date.parse("2026-03-07T12:00:00Z"),
 *   count: 2,
 * })
 * // 2026-03-08 02:30 does not exist: that slot runs at 03:30 EDT, shifted by one hour.
 * Array.isArray(slots) && slots[0]?.dst // { kind: "gap", shiftedBy: 3600000 }
 * ```
 *
 * @category combinators
 * @since 0.2.0
 */
export const preview = (
  schedule: Schedule,
  options: { readonly from: number | Date | DateTime.DateTime; readonly count: number },
): Array<PreviewSlot> | ScheduleError => {
  const from = toInstant(options?.from, "from")
  if (typeof from !== "number") return from
  const count = options.count
  if (!Number.isSafeInteger(count) || count < 0) {
    return new InvalidOption({
      field: "count",
      value: count,
      message: `count must be a non-negative integer, got ${show(count)}`,
    })
  }
  const bounded = Options.integer("count", count, 0, 0, Options.bounds.previewCount)
  if (typeof bounded !== "number") return bounded
  const resolved = resolve(schedule, from)
  if (!("first" in resolved)) return resolved
  const plan = resolved.plan
  const cron = plan?.kind === "cron" ? plan.cron : undefined
  const out: Array<PreviewSlot> = []
  let slot: number | undefined = resolved.first
  while (slot !== undefined && out.length < count) {
    out.push({ slot, dst: cron === undefined ? undefined : dstNote(cron, slot) })
    if (plan === undefined) break
    // A run that ends at its own slot misses no grid slot, so the policy is never consulted.
    // Stryker disable next-line StringLiteral: equivalent, no slot is missed, the policy is unread
    const next = nextAfterRun(plan, "catch-up", slot, slot)
    slot = next !== undefined && "slot" in next ? next.slot : undefined
  }
  return out
}

/**
 * A schedule as data that survives a restart (a durable store's rows): JSON-safe, named by the
 * same kinds as {@link Plan} and `TaskInfo.kind`. Times and periods are whole ms.
 *
 * | kind | fields | made from |
 * |---|---|---|
 * | `once` | `at`: the slot | {@link once}, {@link at} |
 * | `fixed-rate` | `first`: the grid's origin, `period` | {@link fixedRate} |
 * | `fixed-delay` | `period` | {@link fixedDelay} |
 * | `cron` | `expression`, `timeZone`, and `dayMatch: "either"` when chosen | {@link cron} with a string expression |
 *
 * A custom schedule's `next` is a function: it has no encoded form.
 *
 * @category models
 * @since 0.3.0
 */
export type Encoded =
  | { readonly kind: "once"; readonly at: number }
  | { readonly kind: "fixed-rate"; readonly first: number; readonly period: number }
  | { readonly kind: "fixed-delay"; readonly period: number }
  | {
      readonly kind: "cron"
      readonly expression: string
      readonly timeZone: string
      /** Present only when `"either"`; absent reads as `"vixie"` (rows written before it). */
      readonly dayMatch?: "either"
    }

/**
 * The encoded form of `schedule`, resolved as `resolved` (its first slot and plan). Fails with
 * an {@link InvalidOption} on `schedule` for a custom schedule or a cron schedule given as a
 * parsed `Cron` (only its text can be stored). Pure.
 *
 * **Example** (A fixed-rate schedule accepted at 100)
 *
 * ```ts
 * import { Result } from "effect"
 * import { Schedule } from "@tickwork/core"
 * const s = Schedule.fixedRate(10, { delay: 5 })
 * const r = Schedule.resolve(s, 100) as Schedule.Resolved
 * Result.getOrThrow(Schedule.encode(s, r)) // { kind: "fixed-rate", first: 105, period: 10 }
 * ```
 *
 * @category constructors
 * @since 0.3.0
 */
export const encode = (
  schedule: Schedule,
  resolved: Resolved,
): Result.Result<Encoded, InvalidOption> => {
  const plan = resolved.plan
  switch (plan?.kind) {
    case undefined:
      return Result.succeed({ kind: "once", at: resolved.first })
    case "fixed-rate":
      return Result.succeed({ kind: "fixed-rate", first: resolved.first, period: plan.period })
    case "fixed-delay":
      return Result.succeed({ kind: "fixed-delay", period: plan.period })
    case "cron": {
      const s = schedule as CronSchedule
      return typeof s.expression === "string"
        ? Result.succeed(encodedCron(s.expression, s.timeZone, s.dayMatch))
        : Result.fail(
            notEncodable(
              schedule,
              "a parsed Cron object cannot be stored; give the cron expression as a string",
            ),
          )
    }
    case "custom":
      return Result.fail(
        notEncodable(schedule, "a custom schedule's next() is a function and cannot be stored"),
      )
  }
}

const encodedCron = (
  expression: string,
  timeZone: string,
  dayMatch: DayMatch | undefined,
): Encoded => ({
  kind: "cron",
  expression,
  timeZone,
  ...(dayMatch === "either" ? { dayMatch } : {}),
})

const notEncodable = (schedule: unknown, why: string): InvalidOption =>
  new InvalidOption({ field: "schedule", value: schedule, message: `schedule: ${why}` })

/**
 * An encoded schedule read back: its data, checked, and its plan (`undefined` for `once`).
 *
 * @category models
 * @since 0.3.0
 */
export interface Decoded {
  readonly encoded: Encoded
  readonly plan: Plan | undefined
}

/**
 * Reads an encoded schedule (parsed JSON) back into its plan: a `fixed-rate` grid from its
 * stored origin, a cron expression parsed in its zone. Fails with an {@link InvalidOption} on
 * `schedule` for data that {@link encode} did not write. Pure; O(1) but for cron (parsing).
 *
 * @category constructors
 * @since 0.3.0
 */
export const decode = (data: unknown): Result.Result<Decoded, InvalidOption> => {
  const bad = (why: string) =>
    Result.fail(
      new InvalidOption({
        field: "schedule",
        value: data,
        message: `stored schedule ${show(data)} ${why}`,
      }),
    )
  if (typeof data !== "object" || data === null) return bad("is not an encoded schedule")
  const d = data as Record<string, unknown>
  const int = (k: string) => Number.isSafeInteger(d[k])
  switch (d.kind) {
    case "once":
      return int("at")
        ? Result.succeed({ encoded: { kind: "once", at: d.at as number }, plan: undefined })
        : bad("has no whole-ms `at`")
    case "fixed-rate":
    case "fixed-delay": {
      if (!int("period") || (d.period as number) <= 0) return bad("has no positive whole-ms period")
      const period = d.period as number
      if (d.kind === "fixed-delay")
        return Result.succeed({
          encoded: { kind: "fixed-delay", period },
          plan: { kind: "fixed-delay", period },
        })
      if (!int("first")) return bad("has no whole-ms `first`")
      const first = d.first as number
      return Result.succeed({
        encoded: { kind: "fixed-rate", first, period },
        plan: { kind: "fixed-rate", period, grid: MissedRun.periodic(first, period) },
      })
    }
    case "cron": {
      if (typeof d.expression !== "string" || typeof d.timeZone !== "string")
        return bad("has no cron expression and time zone")
      if (d.dayMatch !== undefined && d.dayMatch !== "vixie" && d.dayMatch !== "either")
        return bad('has a dayMatch that is neither "vixie" nor "either"')
      const dayMatch = d.dayMatch as DayMatch | undefined
      const parsed = parseCron(d.expression, d.timeZone, { dayMatch })
      if (!isCronValue(parsed)) return bad(`is invalid: ${parsed.message}`)
      return Result.succeed({
        encoded: encodedCron(d.expression, d.timeZone, dayMatch),
        plan: { kind: "cron", cron: parsed, grid: MissedRun.cron(parsed) },
      })
    }
    default:
      return bad("is of no known kind")
  }
}
