/**
 * `tickwork explain`: the next slots of a cron expression in an IANA time zone, each with its
 * UTC instant, its local wall time and how daylight saving time moved it (SPEC §3, §15).
 *
 * The module has two layers: pure functions that parse the command line's strings
 * ({@link parseCount}, {@link parseFrom}), compute the slots ({@link explain}) and render them
 * ({@link toText}, {@link toJson}); and the {@link command} that reads the flags, the clock and
 * the console. Bad input is one of core's typed errors, whose message names the field and the
 * rejected value; the command shows that message and fails, so the process exits non-zero.
 *
 * @since 0.1.0
 */
import { Errors, Schedule } from "@tickwork/core"
import { Clock, Console, DateTime, Effect, Option } from "effect"
import { Argument, CliError, Command, Flag } from "effect/cli"
import { printable, printableJson } from "./internal/printable.ts"

/**
 * The most slots one call may list. A preview is for reading; a larger count is almost surely
 * a typo, and would keep the process busy for long.
 *
 * @category models
 * @since 0.1.0
 */
export const MAX_COUNT = 10_000

/**
 * How many slots to list when `--count` is not given.
 *
 * @category models
 * @since 0.1.0
 */
export const DEFAULT_COUNT = 10

/**
 * One slot of the explanation.
 *
 * @category models
 * @since 0.1.0
 */
export interface ExplainedSlot {
  /** The slot, epoch ms. */
  readonly slot: number
  /** The IANA zone the local fields are in. */
  readonly timeZone: string
  /** The zone's offset from UTC at the slot, ms (`+02:00` is 7 200 000). */
  readonly offset: number
  /** How DST moved the slot, or `undefined` when it did not. */
  readonly dst: Schedule.DstNote | undefined
}

/**
 * The JSON form of one slot, as `--json` prints it.
 *
 * @category models
 * @since 0.1.0
 */
export interface SlotJson {
  /** The slot, epoch ms. */
  readonly slot: number
  /** The slot as an ISO 8601 UTC instant, e.g. `"2026-03-29T01:30:00.000Z"`. */
  readonly utc: string
  /** The local wall time with its offset, e.g. `"2026-03-29T03:30:00+02:00"`. */
  readonly local: string
  /** The IANA zone of `local`. */
  readonly timeZone: string
  /** How DST moved the slot (core's `DstNote`), or `null`. */
  readonly dst: Schedule.DstNote | null
  /** {@link dstText} of `dst`, or `null`. */
  readonly note: string | null
}

/**
 * Parses `--count`: a whole number from 1 to {@link MAX_COUNT}, written in decimal digits.
 * Anything else is an `InvalidOption` naming the field `count` and the text as given.
 *
 * **Example** (Valid and invalid counts)
 *
 * ```ts
 * import { Explain } from "@tickwork/cli"
 * Explain.parseCount("3") // 3
 * Explain.parseCount("0") // InvalidOption: count must be a whole number from 1 to 10000, got "0"
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const parseCount = (text: string): number | Errors.InvalidOption => {
  const count = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN
  return Number.isSafeInteger(count) && count >= 1 && count <= MAX_COUNT
    ? count
    : new Errors.InvalidOption({
        field: "count",
        value: text,
        message: `count must be a whole number from 1 to ${MAX_COUNT}, got ${Errors.show(text)}`,
      })
}

/** `YYYY-MM-DDTHH:MM[:SS[.sss]]` then `Z` or `±HH:MM`. */
const ISO_INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/

/**
 * The epoch ms of an ISO 8601 instant (`2026-03-29T00:00:00Z`, `2026-03-29T02:00+02:00`), or
 * `undefined`. The zone designator is required: without it the instant would depend on the
 * machine's zone. Impossible dates (February 30, 24:00) are rejected, not rolled over.
 */
const parseIsoInstant = (text: string): number | undefined => {
  const m = ISO_INSTANT.exec(text)
  if (m === null) return undefined
  const [year, month, day, hour, minute, second, fraction] = m.slice(1, 8).map((part, i) =>
    // The fraction is a decimal fraction of a second: ".5" is 500 ms, not 5.
    i === 6 ? Number((part ?? "0").padEnd(3, "0")) : Number(part ?? "0"),
  ) as [number, number, number, number, number, number, number]
  const local = Date.UTC(year, month - 1, day, hour, minute, second, fraction)
  const d = new Date(local)
  const valid =
    d.getUTCFullYear() === year &&
    d.getUTCMonth() === month - 1 &&
    d.getUTCDate() === day &&
    d.getUTCHours() === hour &&
    d.getUTCMinutes() === minute &&
    d.getUTCSeconds() === second
  if (!valid) return undefined
  if (m[8] !== undefined) return local
  const offsetHours = Number(m[10])
  const offsetMinutes = Number(m[11])
  if (offsetHours > 23 || offsetMinutes > 59) return undefined
  const offset = (offsetHours * 60 + offsetMinutes) * 60_000
  return m[9] === "-" ? local + offset : local - offset
}

/**
 * Parses `--from`: an ISO 8601 instant with `Z` or an offset. Anything else is an
 * `InvalidTime` naming the field `from` and the text as given.
 *
 * **Example** (Two ways to write one instant)
 *
 * ```ts
 * import { Explain } from "@tickwork/cli"
 * Explain.parseFrom("2026-03-29T00:00:00Z") // 1774742400000
 * Explain.parseFrom("2026-03-29T01:00+01:00") // 1774742400000
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const parseFrom = (text: string): number | Errors.InvalidTime => {
  const from = parseIsoInstant(text)
  return from !== undefined && Number.isSafeInteger(from)
    ? from
    : new Errors.InvalidTime({
        field: "from",
        value: text,
        message: `from must be an ISO 8601 instant with "Z" or an offset, such as "2026-03-29T00:00:00Z", got ${Errors.show(text)}`,
      })
}

/**
 * The next `count` slots of the cron `expression` in `timeZone` after `from` (epoch ms), with
 * their offsets and DST notes. Pure: it is core's `Schedule.preview` plus each slot's offset.
 * Fails with core's typed error: `InvalidCronExpression`, `InvalidTimeZone`, or an
 * `InvalidOption` for a bad count.
 *
 * **Example** (The spring-forward night in Berlin)
 *
 * ```ts
 * import { Explain } from "@tickwork/cli"
 * const slots = Explain.explain({
 *   expression: "30 2 * * *",
 *   timeZone: "Europe/Berlin",
 *   from: Date.parse("2026-03-28T12:00:00Z"),
 *   count: 1,
 * })
 * // 02:30 does not exist on 2026-03-29: the slot is 03:30 CEST, shifted by one hour.
 * Array.isArray(slots) && slots[0]?.dst // { kind: "gap", shiftedBy: 3600000 }
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const explain = (options: {
  readonly expression: string
  readonly timeZone: string
  readonly from: number
  readonly count: number
  /** How the day fields combine (core's `Schedule.DayMatch`); default `"vixie"`. */
  readonly dayMatch?: Schedule.DayMatch | undefined
}): Array<ExplainedSlot> | Errors.ScheduleError => {
  const { expression, timeZone, from, count, dayMatch } = options
  const schedule = Schedule.cron(expression, {
    timeZone,
    ...(dayMatch === undefined ? {} : { dayMatch }),
  })
  const slots = Schedule.preview(schedule, { from, count })
  if (!Array.isArray(slots)) return slots
  return slots.map(({ slot, dst }) => ({
    slot,
    timeZone,
    offset: DateTime.zonedOffset(DateTime.makeZonedUnsafe(slot, { timeZone })),
    dst,
  }))
}

const pad2 = (n: number): string => String(n).padStart(2, "0")

/** `+02:00`, `-04:00`, `+05:45`; `+00:00` for UTC. */
const formatOffset = (offset: number): string => {
  const minutes = Math.abs(offset) / 60_000
  return `${offset < 0 ? "-" : "+"}${pad2(Math.floor(minutes / 60))}:${pad2(minutes % 60)}`
}

/** `1h`, `30m`, `1h30m`. */
const formatShift = (ms: number): string => {
  const minutes = Math.round(Math.abs(ms) / 60_000)
  const h = Math.floor(minutes / 60)
  const m = minutes % 60
  return `${h > 0 ? `${h}h` : ""}${m > 0 || h === 0 ? `${m}m` : ""}`
}

/**
 * A DST note in words: `shifted +1h by the spring-forward gap`, `first of the repeated hour`,
 * `second of the repeated hour`.
 *
 * @category getters
 * @since 0.1.0
 */
export const dstText = (dst: Schedule.DstNote): string =>
  dst.kind === "gap"
    ? `shifted ${dst.shiftedBy < 0 ? "-" : "+"}${formatShift(dst.shiftedBy)} by the spring-forward gap`
    : `${dst.occurrence} of the repeated hour`

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const

/** The slot's local wall time, read from a Date shifted by the offset. */
const localParts = (s: ExplainedSlot) => {
  const d = new Date(s.slot + s.offset)
  return {
    weekday: WEEKDAYS[d.getUTCDay()] as string,
    date: `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`,
    time: `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`,
    offset: formatOffset(s.offset),
  }
}

/**
 * One slot as a line: the UTC instant, the local weekday, date, time and offset, and the DST
 * note if any, separated by two spaces.
 *
 * **Example** (A slot shifted by the spring-forward gap)
 *
 * ```ts
 * import { Explain } from "@tickwork/cli"
 * Explain.toLine({
 *   slot: Date.parse("2026-03-29T01:30:00Z"),
 *   timeZone: "Europe/Berlin",
 *   offset: 7_200_000,
 *   dst: { kind: "gap", shiftedBy: 3_600_000 },
 * })
 * // "2026-03-29T01:30:00Z  Sun 2026-03-29 03:30:00 +02:00  shifted +1h by the spring-forward gap"
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const toLine = (s: ExplainedSlot): string => {
  const local = localParts(s)
  const utc = new Date(s.slot).toISOString().replace(/\.000Z$/, "Z")
  const columns = [utc, `${local.weekday} ${local.date} ${local.time} ${local.offset}`]
  return (s.dst === undefined ? columns : [...columns, dstText(s.dst)]).join("  ")
}

/**
 * All slots as text, one {@link toLine} per line.
 *
 * @category getters
 * @since 0.1.0
 */
export const toText = (slots: ReadonlyArray<ExplainedSlot>): string => slots.map(toLine).join("\n")

/**
 * One slot in its {@link SlotJson} form.
 *
 * @category getters
 * @since 0.1.0
 */
export const toSlotJson = (s: ExplainedSlot): SlotJson => {
  const local = localParts(s)
  return {
    slot: s.slot,
    utc: new Date(s.slot).toISOString(),
    local: `${local.date}T${local.time}${local.offset}`,
    timeZone: s.timeZone,
    dst: s.dst ?? null,
    note: s.dst === undefined ? null : dstText(s.dst),
  }
}

/**
 * All slots as a JSON array of {@link SlotJson}, indented by two spaces.
 *
 * @category getters
 * @since 0.1.0
 */
export const toJson = (slots: ReadonlyArray<ExplainedSlot>): string =>
  JSON.stringify(slots.map(toSlotJson), null, 2)

/**
 * The header of the text output: the expression in words, then each note, as `# ` lines.
 *
 * **Example** (The last Friday)
 *
 * ```ts
 * import { Schedule } from "@tickwork/core"
 * import { Explain } from "@tickwork/cli"
 * Explain.headerLines({ text: "at 09:00 on the last Friday of the month", notes: [] })
 * // ["# at 09:00 on the last Friday of the month"]
 * ```
 *
 * @category getters
 * @since 0.4.0
 */
export const headerLines = (words: Schedule.CronExplanation): Array<string> => [
  `# ${words.text}`,
  ...words.notes.map((note) => `# note: ${note}`),
]

/**
 * Wraps a typed error so that the CLI shows its message (it names the field and the value) on
 * stderr and the process exits with code 1; the typed error stays reachable as `cause`.
 *
 * @category errors
 * @since 0.1.0
 */
export const toUserError = (error: Errors.ScheduleError): CliError.UserError =>
  new CliError.UserError({ cause: error, userMessage: printable(error.message, true) })

/**
 * The `explain` subcommand:
 * `explain <expression> [--tz <zone>] [--count <n>] [--from <instant>] [--day-match <rule>] [--json]`.
 * `--day-match either` reads restricted day fields as croner and cron-parser do (a day matching
 * either runs); the default, `vixie`, is Vixie cron's rule. The zone defaults to UTC, the count to {@link DEFAULT_COUNT}, `--from` to now (read from
 * Effect's `Clock`, so a `TestClock` controls it). Prints through Effect's `Console`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const command = Command.make(
  "explain",
  {
    expression: Argument.String("expression").pipe(
      Argument.withDescription(
        'A cron expression: 5 fields, or 6 with seconds first, e.g. "30 2 * * *"',
      ),
    ),
    timeZone: Flag.String("tz").pipe(
      Flag.withMetavar("zone"),
      Flag.withDescription(
        'The IANA time zone the expression is read in, e.g. "Europe/Berlin" (default: UTC)',
      ),
      Flag.withDefault("UTC"),
    ),
    count: Flag.String("count").pipe(
      Flag.withMetavar("n"),
      Flag.withDescription(`How many slots to list, 1 to ${MAX_COUNT} (default: ${DEFAULT_COUNT})`),
      Flag.withDefault(String(DEFAULT_COUNT)),
    ),
    from: Flag.String("from").pipe(
      Flag.withMetavar("instant"),
      Flag.withDescription(
        'List the slots after this ISO 8601 instant, e.g. "2026-03-29T00:00:00Z" (default: now)',
      ),
      Flag.optional,
    ),
    dayMatch: Flag.String("day-match").pipe(
      Flag.withMetavar("rule"),
      Flag.withDescription(
        'How day-of-month and day-of-week combine when both restrict: "vixie" (a field starting with * must match too) or "either" (croner, cron-parser) (default: vixie)',
      ),
      Flag.withDefault("vixie"),
    ),
    json: Flag.Boolean("json").pipe(
      Flag.withDescription("Print a JSON array instead of lines"),
      Flag.withDefault(false),
    ),
  },
  (input) =>
    Effect.gen(function* () {
      const from = Option.isSome(input.from)
        ? parseFrom(input.from.value)
        : yield* Clock.currentTimeMillis
      if (typeof from !== "number") return yield* toUserError(from)
      const count = parseCount(input.count)
      if (typeof count !== "number") return yield* toUserError(count)
      const dayMatch = input.dayMatch as Schedule.DayMatch
      const slots = explain({
        expression: input.expression,
        timeZone: input.timeZone,
        from,
        count,
        dayMatch,
      })
      if (!Array.isArray(slots)) return yield* toUserError(slots)
      if (input.json) return yield* Console.log(printableJson(toJson(slots)))
      const words = Schedule.explain(input.expression, input.timeZone, { dayMatch })
      const text = [...("text" in words ? headerLines(words) : []), toText(slots)].join("\n")
      yield* Console.log(printable(text, true))
    }),
).pipe(
  Command.withDescription(
    "List the next slots of a cron expression in a time zone: the UTC instant, the local time, and how daylight saving time moved each one.",
  ),
)
