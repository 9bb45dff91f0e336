/**
 * @internal
 * Cron expressions as tickwork reads them (SPEC §3): parsing in a time zone with typed errors,
 * the expression in words, and how daylight saving time moved a slot. Re-exported by
 * `Schedule`, where they are documented for users.
 */
import { Cron, DateTime, Option } from "effect"
import { InvalidCronExpression, InvalidOption, InvalidTimeZone, show } from "../Errors.ts"
import * as CronSpec from "./cron.ts"
import { describe, hitsVixieRule } from "./cronWords.ts"
import * as Zone from "./zone.ts"

/**
 * How a cron expression's day-of-month and day-of-week fields combine when both restrict:
 * - `"vixie"` (the default): Vixie cron's rule, which Effect's `Cron` also follows. When either
 *   field starts with `*` or `?` (a step over every day such as every second day, or `?`), a day
 *   must match both; otherwise it must match either. Every second day of the month with `sat`
 *   in day-of-week runs on Saturdays that are odd days of the month.
 * - `"either"`: a day matching either field runs, as croner, cron-parser and robfig/cron read
 *   it; the same expression runs on odd days and on Saturdays. For users moving from those.
 *
 * @category models
 * @since 0.4.0
 */
export type DayMatch = "vixie" | "either"

/**
 * A cron expression parsed by {@link parseCron}: the text as written, its zone, and the parsed
 * fields. Its slots follow tickwork's DST rules (see {@link parseCron}).
 *
 * @category models
 * @since 0.4.0
 */
export type ParsedCron = CronSpec.Parsed

/**
 * Parses a cron expression in an IANA zone, with typed errors for each part; `dayMatch` as in
 * {@link cron}. Pure.
 *
 * **Details**
 *
 * The slots of an expression are its matching local times in `timeZone`, as instants, in order
 * (SPEC §3):
 * - a local time that exists once runs at that instant;
 * - a local time skipped when clocks spring forward (a gap) runs shifted by the gap's length:
 *   at the instant it would have had with the offset before the gap (02:30 on a day whose
 *   02:00–03:00 is skipped runs at 03:30; in a two-hour gap, at 04:30). Every matching time in the
 *   gap runs, in order; one that lands on the instant of another slot runs once, with it;
 * - a local time that happens twice when clocks fall back runs once, at its first occurrence,
 *   unless the hour field matches every hour of the day (`*`, `0-23`, …): the expression then
 *   keeps running by real time through both occurrences (the cronie rule). The rule is decided by
 *   the set of matching hours, so equivalent expressions always give the same slots.
 *
 * @category constructors
 * @since 0.1.0
 */
export const parseCron = (
  expression: string,
  timeZone: string,
  options?: { readonly dayMatch?: DayMatch | undefined },
): ParsedCron | InvalidCronExpression | InvalidTimeZone | InvalidOption => {
  const dayMatch = options?.dayMatch
  if (dayMatch !== undefined && dayMatch !== "vixie" && dayMatch !== "either") {
    return new InvalidOption({
      field: "dayMatch",
      value: dayMatch,
      message: `dayMatch must be "vixie" or "either", got ${show(dayMatch)}`,
    })
  }
  if (typeof timeZone !== "string" || !Zone.isZone(timeZone)) {
    return new InvalidTimeZone({
      field: "timeZone",
      value: timeZone,
      message: `timeZone must be an IANA time zone name such as "Europe/Berlin", got ${show(timeZone)}`,
    })
  }
  const spec =
    typeof expression === "string"
      ? CronSpec.parse(expression, dayMatch === "either" ? { dayMatch: "either" } : undefined)
      : undefined
  if (spec === undefined || "reason" in spec) {
    return new InvalidCronExpression({
      field: "expression",
      value: expression,
      message: `expression ${show(expression)} is not a valid cron expression${
        spec === undefined
          ? ""
          : spec.field === "expression"
            ? `: it ${spec.reason}`
            : `: its ${spec.field} field ${show(spec.value)} ${spec.reason}`
      }`,
    })
  }
  return { _tag: "ParsedCron", expression, timeZone, spec }
}

/** @internal A cron value `Schedule.cron` accepts: Effect's `Cron` or a {@link ParsedCron}. */
export const isCronValue = (x: unknown): x is Cron.Cron | ParsedCron =>
  Cron.isCron(x) || CronSpec.isParsed(x)

/**
 * A cron expression in words, with notes on how it may surprise (from {@link explain}).
 *
 * @category models
 * @since 0.4.0
 */
export interface CronExplanation {
  /** What the expression means, e.g. `at 09:00 on the last Friday of the month`. */
  readonly text: string
  /** Rules that decide its slots and differ between cron implementations; may be empty. */
  readonly notes: ReadonlyArray<string>
}

/**
 * The Vixie-rule note: both day fields restrict and one starts with `*` or `?`.
 *
 * @category models
 * @since 0.4.0
 */
export const VIXIE_NOTE =
  "day-of-month and day-of-week both restrict and one starts with `*` or `?`: a day must match both (Vixie cron, Effect); croner, cron-parser and robfig/cron run on days that match either"

/**
 * A cron expression in words, and notes on rules that decide its slots: the Vixie rule for
 * restricted day fields (not with `dayMatch: "either"`, see {@link DayMatch}). Pure. Fails as
 * {@link parseCron} does.
 *
 * **Example** (The last Friday)
 *
 * ```ts
 * import { Schedule } from "@tickwork/core"
 * const e = Schedule.explain("0 9 * * 5L", "UTC")
 * "text" in e && e.text // "at 09:00 on the last Friday of the month"
 * ```
 *
 * @category getters
 * @since 0.4.0
 */
export const explain = (
  expression: string,
  timeZone: string,
  options?: { readonly dayMatch?: DayMatch | undefined },
): CronExplanation | InvalidCronExpression | InvalidTimeZone | InvalidOption => {
  const parsed = parseCron(expression, timeZone, options)
  if (!CronSpec.isParsed(parsed)) return parsed
  return {
    text: describe(parsed.spec),
    notes: hitsVixieRule(parsed.spec) ? [VIXIE_NOTE] : [],
  }
}

/**
 * How daylight saving time moved a cron slot (SPEC §3), in the slot's time zone:
 * - `gap`: the matching local time does not exist (clocks sprang forward); the slot is shifted
 *   by the gap's length (`shiftedBy`, ms): 02:30 on a day without 02:00–03:00 runs at 03:30;
 * - `fold`: the local time happens twice (clocks fell back); `occurrence` says which one this is.
 *
 * @category models
 * @since 0.2.0
 */
export type DstNote =
  | { readonly kind: "gap"; readonly shiftedBy: number }
  | { readonly kind: "fold"; readonly occurrence: "first" | "second" }

/** Hours either side of a slot that surely lie on the other side of a DST change at the slot. */
const DST_PROBE_MS = 3 * 60 * 60 * 1000

const offsetAt = (zone: DateTime.TimeZone, t: number): number =>
  DateTime.zonedOffset(DateTime.makeZonedUnsafe(t, { timeZone: zone }))

/**
 * How DST moved the cron slot `slot` in the expression's zone, or `undefined` when it did not.
 * Pure.
 *
 * @category getters
 * @since 0.2.0
 */
export const dstNote = (expression: Cron.Cron | ParsedCron, slot: number): DstNote | undefined => {
  if (CronSpec.isParsed(expression))
    return CronSpec.noteOf(expression.spec, expression.timeZone, slot)
  if (Option.isNone(expression.tz)) return undefined
  const zone = expression.tz.value
  const here = offsetAt(zone, slot)
  const before = offsetAt(zone, slot - DST_PROBE_MS)
  if (!Cron.match(expression, new Date(slot))) {
    // The slot's own local time does not match: it stands for a local time in a gap.
    return here > before ? { kind: "gap", shiftedBy: here - before } : undefined
  }
  const local = slot + here
  for (const other of [before, offsetAt(zone, slot + DST_PROBE_MS)]) {
    if (other === here) continue
    const twin = local - other
    if (twin !== slot && offsetAt(zone, twin) === other)
      return { kind: "fold", occurrence: slot < twin ? "first" : "second" }
  }
  return undefined
}
