/**
 * @internal
 * tickwork's cron: a parser, a calendar matcher on local wall times, and the stepping of slots
 * through a time zone's transitions (SPEC §3).
 *
 * Ground rules:
 * - A slot is an instant (epoch ms, whole second). The slots of an expression in a zone are the
 *   union, in instant order, of:
 *   1. every matching local time that exists once, at its instant;
 *   2. every matching local time inside a gap (clocks sprang forward), at `L - before`: the local
 *      time read with the offset in force before the gap, i.e. shifted by the gap's length;
 *   3. every matching local time that exists twice (clocks fell back): at its first instant, and
 *      also at its second when the expression matches every hour of the day ({@link Spec.everyHour}).
 *   Two of these that land on one instant are one slot.
 * - Nothing here depends on the host's zone or clock; offsets come from `Intl` via `zone.ts`.
 */
import * as Zone from "./zone.ts"

/** Which of a cron expression's six fields. */
export type FieldName = "second" | "minute" | "hour" | "day-of-month" | "month" | "day-of-week"

/** A bad expression: the field, the text of the bad part, and why. */
export interface ParseError {
  readonly field: FieldName | "expression"
  readonly value: string
  readonly reason: string
}

/** How day-of-month and day-of-week combine when both are restricted. */
export type DayMatch = "both" | "either"

/** The day-of-month field. */
export interface DaysOfMonth {
  /** Whether the field is `*` (or `?`): every day. */
  readonly any: boolean
  /** Whether the field's first part starts with `*` or `?` (the Vixie rule, {@link Spec.dayMatch}). */
  readonly star: boolean
  readonly days: ReadonlySet<number>
  /** `L` and `L-n`: days counted back from the month's last (0 is the last day itself). */
  readonly fromLast: ReadonlyArray<number>
  /** `nW`: the weekday (Monday–Friday) nearest day n, within the month. */
  readonly nearestWeekday: ReadonlyArray<number>
  /** `LW`: the month's last weekday (Monday–Friday). */
  readonly lastWeekday: boolean
}

/** The day-of-week field; 0 is Sunday (7 is read as 0). */
export interface DaysOfWeek {
  readonly any: boolean
  readonly star: boolean
  readonly days: ReadonlySet<number>
  /** `n#k`: the k-th (1–5) weekday n of the month. */
  readonly nth: ReadonlyArray<{ readonly weekday: number; readonly k: number }>
  /** `nL`: the month's last weekday n. */
  readonly last: ReadonlyArray<number>
}

/** A parsed expression. */
export interface Spec {
  /** Sorted allowed values of each time field. */
  readonly seconds: ReadonlyArray<number>
  readonly minutes: ReadonlyArray<number>
  readonly hours: ReadonlyArray<number>
  /** Allowed months, 1–12. */
  readonly months: ReadonlySet<number>
  readonly dom: DaysOfMonth
  readonly dow: DaysOfWeek
  /**
   * How a day must match when both day fields are restricted: `both` when either field starts
   * with `*` (Vixie cron, and Effect's `Cron`), else `either`; or as the caller chose.
   */
  readonly dayMatch: DayMatch
  /** Whether the hour field matches all 24 hours: repeated local times then run twice. */
  readonly everyHour: boolean
}

interface Range {
  readonly min: number
  readonly max: number
  readonly names?: Readonly<Record<string, number>>
}

const MONTHS: Record<string, number> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
}

const WEEKDAYS: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 }

const RANGES: Record<FieldName, Range> = {
  second: { min: 0, max: 59 },
  minute: { min: 0, max: 59 },
  hour: { min: 0, max: 23 },
  "day-of-month": { min: 1, max: 31 },
  month: { min: 1, max: 12, names: MONTHS },
  "day-of-week": { min: 0, max: 7, names: WEEKDAYS },
}

const DIGITS = /^\d+$/

const fail = (field: ParseError["field"], value: string, reason: string): ParseError => ({
  field,
  value,
  reason,
})

const isError = (x: unknown): x is ParseError =>
  typeof x === "object" && x !== null && "reason" in x

/** One value of a field: a number or a name, within the field's range. */
const value = (field: FieldName, text: string): number | ParseError => {
  const range = RANGES[field]
  const named = range.names?.[text.toLowerCase()]
  if (named !== undefined) return named
  if (!DIGITS.test(text))
    return fail(field, text, `is not a number${range.names ? " or a name" : ""}`)
  const n = Number(text)
  return n < range.min || n > range.max
    ? fail(field, text, `is out of range ${range.min}–${range.max}`)
    : n
}

/** The plain parts of a field: `*`, `a`, `a-b`, each with an optional `/step`. */
const plainPart = (field: FieldName, part: string, into: Set<number>): ParseError | undefined => {
  const range = RANGES[field]
  const slash = part.indexOf("/")
  const base = slash === -1 ? part : part.slice(0, slash)
  let step = 1
  if (slash !== -1) {
    const text = part.slice(slash + 1)
    step = DIGITS.test(text) ? Number(text) : Number.NaN
    if (!(step >= 1 && step <= range.max))
      return fail(field, part, `has a step that is not a whole number from 1 to ${range.max}`)
  }
  let lo: number
  let hi: number
  if (base === "*" || base === "?") {
    lo = range.min
    hi = range.max
  } else {
    const dash = base.indexOf("-", 1)
    const left = value(field, dash === -1 ? base : base.slice(0, dash))
    if (isError(left)) return { ...left, value: part }
    lo = left
    if (dash === -1) hi = slash === -1 ? left : range.max
    else {
      const right = value(field, base.slice(dash + 1))
      if (isError(right)) return { ...right, value: part }
      hi = right
      if (lo > hi) return fail(field, part, "is a range whose start is after its end")
    }
  }
  for (let i = lo; i <= hi; i += step) into.add(field === "day-of-week" && i === 7 ? 0 : i)
  return undefined
}

interface FieldParse {
  readonly values: Set<number>
  /** The first part is `*` or `?` with no step (or step 1): the field does not restrict. */
  readonly any: boolean
  /** The first part starts with `*` or `?`. */
  readonly star: boolean
  readonly fromLast: Array<number>
  readonly nearestWeekday: Array<number>
  lastWeekday: boolean
  readonly nth: Array<{ readonly weekday: number; readonly k: number }>
  readonly last: Array<number>
}

/** `L`, `L-n`, `nW`, `LW` in day-of-month; `nL`, `n#k` in day-of-week. `false` if plain. */
const specialPart = (name: FieldName, part: string, into: FieldParse): ParseError | boolean => {
  const upper = part.toUpperCase()
  if (name === "day-of-month") {
    if (upper === "L") return into.fromLast.push(0) > 0
    if (upper === "LW") {
      into.lastWeekday = true
      return true
    }
    const back = /^L-(\d+)$/.exec(upper)
    if (back !== null) {
      const n = Number(back[1])
      if (n > 30) return fail(name, part, "counts back more than 30 days from the last")
      return into.fromLast.push(n) > 0
    }
    const near = /^(\d+)W$/.exec(upper)
    if (near !== null) {
      const day = value(name, near[1] as string)
      if (isError(day)) return { ...day, value: part }
      return into.nearestWeekday.push(day) > 0
    }
    if (/[LW]/.test(upper))
      return fail(name, part, "is not a day, a range, `L`, `L-n`, `nW` or `LW`")
    return false
  }
  if (name === "day-of-week") {
    const hash = /^([^#]+)#(.*)$/.exec(part)
    if (hash !== null) {
      const weekday = value(name, hash[1] as string)
      if (isError(weekday)) return { ...weekday, value: part }
      const k = DIGITS.test(hash[2] as string) ? Number(hash[2]) : Number.NaN
      if (!(k >= 1 && k <= 5))
        return fail(
          name,
          part,
          "has an occurrence after `#` that is not a whole number from 1 to 5",
        )
      return into.nth.push({ weekday: weekday % 7, k }) > 0
    }
    if (upper === "L") return fail(name, part, "is `L` alone; write `nL` (`5L`: the last Friday)")
    if (upper.length > 1 && upper.endsWith("L")) {
      const weekday = value(name, part.slice(0, -1))
      if (isError(weekday)) return { ...weekday, value: part }
      return into.last.push(weekday % 7) > 0
    }
    return false
  }
  return false
}

const field = (name: FieldName, text: string): FieldParse | ParseError => {
  const parts = text.split(",")
  const first = parts[0] as string
  const star = first.startsWith("*") || first.startsWith("?")
  const into: FieldParse = {
    values: new Set<number>(),
    any: star && (first.length === 1 || first.slice(2) === "1"),
    star,
    fromLast: [],
    nearestWeekday: [],
    lastWeekday: false,
    nth: [],
    last: [],
  }
  if (text.includes("?") && name !== "day-of-month" && name !== "day-of-week")
    return fail(name, text, "has `?`, which only the day-of-month and day-of-week fields allow")
  for (const part of parts) {
    if (part === "") return fail(name, text, "has an empty part")
    const special = specialPart(name, part, into)
    if (isError(special)) return special
    if (special) continue
    const error = plainPart(name, part, into.values)
    if (error !== undefined) return error
  }
  return into
}

/** The standard macros, as croner, cron-parser and Vixie cron read them. */
const MACROS: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
}

/** Set members in ascending order. */
export const sorted = (s: ReadonlySet<number>): ReadonlyArray<number> =>
  [...s].sort((a, b) => a - b)

/**
 * Parses a 5-field (`minute hour day-of-month month day-of-week`) or 6-field (seconds first)
 * expression. `dayMatch` overrides the Vixie rule when given.
 */
export const parse = (
  expression: string,
  options?: { readonly dayMatch?: DayMatch | undefined },
): Spec | ParseError => {
  const trimmed = expression.trim()
  if (trimmed.startsWith("@")) {
    const macro = MACROS[trimmed.toLowerCase()]
    if (macro === undefined)
      return fail(
        "expression",
        expression,
        `is not a known macro (${Object.keys(MACROS).join(", ")})`,
      )
    return parse(macro, options)
  }
  const parts = trimmed.split(/\s+/).filter((p) => p !== "")
  if (parts.length !== 5 && parts.length !== 6)
    return fail("expression", expression, `has ${parts.length} fields, expected 5 or 6`)
  const six = parts.length === 6 ? parts : ["0", ...parts]
  const names: ReadonlyArray<FieldName> = [
    "second",
    "minute",
    "hour",
    "day-of-month",
    "month",
    "day-of-week",
  ]
  const parsed: Array<FieldParse> = []
  for (let i = 0; i < 6; i++) {
    const r = field(names[i] as FieldName, six[i] as string)
    if (isError(r)) return r
    parsed.push(r)
  }
  const [s, mi, h, dom, mo, dow] = parsed as [
    FieldParse,
    FieldParse,
    FieldParse,
    FieldParse,
    FieldParse,
    FieldParse,
  ]
  return {
    seconds: sorted(s.values),
    minutes: sorted(mi.values),
    hours: sorted(h.values),
    months: mo.values,
    dom: {
      any: dom.any,
      star: dom.star,
      days: dom.values,
      fromLast: dom.fromLast,
      nearestWeekday: dom.nearestWeekday,
      lastWeekday: dom.lastWeekday,
    },
    dow: { any: dow.any, star: dow.star, days: dow.values, nth: dow.nth, last: dow.last },
    dayMatch: options?.dayMatch ?? (dom.star || dow.star ? "both" : "either"),
    everyHour: h.values.size === 24,
  }
}

/** Days in `month` (1–12) of `year`. */
export const daysInMonth = (year: number, month: number): number =>
  new Date(Zone.naive(year, month + 1, 1) - 86_400_000).getUTCDate()

/** Day of week (0 = Sunday) of a date. */
export const weekdayOf = (year: number, month: number, day: number): number =>
  new Date(Zone.naive(year, month, day)).getUTCDay()

/**
 * `nW`: the weekday (Monday–Friday) nearest day `n` of the month, never leaving the month
 * (Quartz): a Saturday moves to the Friday before, a Sunday to the Monday after; Saturday the 1st
 * moves to Monday the 3rd, and a Sunday that is the last day to the Friday before. `undefined`
 * when the month has no day `n`.
 */
export const nearestWeekday = (year: number, month: number, n: number): number | undefined => {
  const dim = daysInMonth(year, month)
  if (n > dim) return undefined
  const wd = weekdayOf(year, month, n)
  if (wd === 6) return n === 1 ? 3 : n - 1
  if (wd === 0) return n === dim ? n - 2 : n + 1
  return n
}

const inDaysOfMonth = (dom: DaysOfMonth, year: number, month: number, day: number): boolean => {
  if (dom.days.has(day)) return true
  if (dom.fromLast.length === 0 && dom.nearestWeekday.length === 0 && !dom.lastWeekday) return false
  const dim = daysInMonth(year, month)
  if (dom.fromLast.some((n) => day === dim - n)) return true
  if (dom.nearestWeekday.some((n) => nearestWeekday(year, month, n) === day)) return true
  return dom.lastWeekday && nearestWeekday(year, month, dim) === day
}

const inDaysOfWeek = (dow: DaysOfWeek, year: number, month: number, day: number): boolean => {
  const wd = weekdayOf(year, month, day)
  if (dow.days.has(wd)) return true
  if (dow.nth.some((x) => x.weekday === wd && Math.ceil(day / 7) === x.k)) return true
  return dow.last.some((w) => w === wd && day + 7 > daysInMonth(year, month))
}

/** Whether the date matches the day fields (the month is checked apart). */
export const dayMatches = (spec: Spec, year: number, month: number, day: number): boolean => {
  const { dom, dow } = spec
  if (dom.any && dow.any) return true
  if (dow.any) return inDaysOfMonth(dom, year, month, day)
  if (dom.any) return inDaysOfWeek(dow, year, month, day)
  return spec.dayMatch === "both"
    ? inDaysOfMonth(dom, year, month, day) && inDaysOfWeek(dow, year, month, day)
    : inDaysOfMonth(dom, year, month, day) || inDaysOfWeek(dow, year, month, day)
}

/** Whether a local wall time (naive ms) matches. */
export const matchesLocal = (spec: Spec, local: number): boolean => {
  const d = new Date(local)
  return (
    d.getUTCMilliseconds() === 0 &&
    spec.seconds.includes(d.getUTCSeconds()) &&
    spec.minutes.includes(d.getUTCMinutes()) &&
    spec.hours.includes(d.getUTCHours()) &&
    spec.months.has(d.getUTCMonth() + 1) &&
    dayMatches(spec, d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate())
  )
}

/** The calendar repeats every 400 years: a search that long without a match finds none. */
const SEARCH_YEARS = 400

const first = (values: ReadonlyArray<number>, atLeast: number): number | undefined => {
  for (const v of values) if (v >= atLeast) return v
  return undefined
}

const last = (values: ReadonlyArray<number>, atMost: number): number | undefined => {
  for (let i = values.length - 1; i >= 0; i--) if ((values[i] as number) <= atMost) return values[i]
  return undefined
}

/** The earliest matching time of day at or after `h:m:s`, as seconds of the day. */
const timeAtOrAfter = (spec: Spec, h: number, m: number, s: number): number | undefined => {
  for (let hour = first(spec.hours, h); hour !== undefined; hour = first(spec.hours, hour + 1)) {
    const m0 = hour === h ? m : 0
    for (let min = first(spec.minutes, m0); min !== undefined; min = first(spec.minutes, min + 1)) {
      const sec = first(spec.seconds, hour === h && min === m ? s : 0)
      if (sec !== undefined) return hour * 3600 + min * 60 + sec
    }
  }
  return undefined
}

/** The latest matching time of day at or before `h:m:s`, as seconds of the day. */
const timeAtOrBefore = (spec: Spec, h: number, m: number, s: number): number | undefined => {
  for (let hour = last(spec.hours, h); hour !== undefined; hour = last(spec.hours, hour - 1)) {
    const m0 = hour === h ? m : 59
    for (let min = last(spec.minutes, m0); min !== undefined; min = last(spec.minutes, min - 1)) {
      const sec = last(spec.seconds, hour === h && min === m ? s : 59)
      if (sec !== undefined) return hour * 3600 + min * 60 + sec
    }
  }
  return undefined
}

/** The earliest matching local time at or after `local` (naive ms), or `undefined` for none. */
export const nextLocal = (spec: Spec, local: number): number | undefined => {
  let t = Math.ceil(local / 1000) * 1000
  const d = new Date(t)
  let year = d.getUTCFullYear()
  let month = d.getUTCMonth() + 1
  let day = d.getUTCDate()
  let sod = d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds()
  const limit = year + SEARCH_YEARS
  while (year <= limit) {
    if (!spec.months.has(month)) {
      month++
      if (month > 12) {
        month = 1
        year++
      }
      day = 1
      sod = 0
      continue
    }
    if (day <= daysInMonth(year, month) && dayMatches(spec, year, month, day)) {
      const time = timeAtOrAfter(spec, Math.floor(sod / 3600), Math.floor(sod / 60) % 60, sod % 60)
      if (time !== undefined) {
        t = Zone.naive(year, month, day) + time * 1000
        return t
      }
    }
    day++
    sod = 0
    if (day > daysInMonth(year, month)) {
      day = 1
      month++
      if (month > 12) {
        month = 1
        year++
      }
    }
  }
  return undefined
}

/** The latest matching local time at or before `local` (naive ms), or `undefined` for none. */
export const prevLocal = (spec: Spec, local: number): number | undefined => {
  const d = new Date(Math.floor(local / 1000) * 1000)
  let year = d.getUTCFullYear()
  let month = d.getUTCMonth() + 1
  let day = d.getUTCDate()
  let sod = d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds()
  const limit = year - SEARCH_YEARS
  const lastSecond = 86_399
  while (year >= limit) {
    if (!spec.months.has(month)) {
      month--
      if (month < 1) {
        month = 12
        year--
      }
      day = daysInMonth(year, month)
      sod = lastSecond
      continue
    }
    if (dayMatches(spec, year, month, day)) {
      const time = timeAtOrBefore(spec, Math.floor(sod / 3600), Math.floor(sod / 60) % 60, sod % 60)
      if (time !== undefined) return Zone.naive(year, month, day) + time * 1000
    }
    day--
    sod = lastSecond
    if (day < 1) {
      month--
      if (month < 1) {
        month = 12
        year--
      }
      day = daysInMonth(year, month)
    }
  }
  return undefined
}

/** A stretch of instants with one offset, and the transition that opened it (if near). */
interface Stretch {
  /** First instant (ms), or `-Infinity` when no transition opened it within a year. */
  readonly start: number
  /** First instant after it (ms), exclusive; a year boundary when no transition is near. */
  readonly end: number
  readonly offset: number
  /** The offset before `start`; equal to `offset` when `start` is not a transition. */
  readonly before: number
}

const stretchAt = (zone: string, t: number): Stretch => {
  const opened = Zone.transitionAtOrBefore(zone, t)
  const closes = Zone.transitionAfter(zone, t)
  const offset = opened?.after ?? Zone.offsetAt(zone, t)
  return {
    start: opened?.at ?? Number.NEGATIVE_INFINITY,
    end: closes?.at ?? Zone.yearStart(Zone.yearOf(t) + 2),
    offset,
    before: opened?.before ?? offset,
  }
}

/**
 * The first local time of a stretch that counts as a real slot in it: local times that also
 * existed before the stretch (a fall-back fold) count there, unless the expression runs every hour.
 */
const realFrom = (spec: Spec, s: Stretch): number =>
  s.start + s.offset + (s.before > s.offset && !spec.everyHour ? s.before - s.offset : 0)

/** The first slot strictly after instant `t` in `zone`, or `undefined` when there is none. */
export const next = (spec: Spec, zone: string, t: number): number | undefined => {
  let lo = Math.floor(t / 1000) * 1000 + 1000
  for (;;) {
    const s = stretchAt(zone, lo)
    let best: number | undefined
    const real = nextLocal(spec, Math.max(lo + s.offset, realFrom(spec, s)))
    if (real !== undefined && real - s.offset < s.end) best = real - s.offset
    if (s.before < s.offset) {
      // A gap opened this stretch: its local times run shifted, at `L - before`.
      const gap = nextLocal(spec, Math.max(lo + s.before, s.start + s.before))
      if (gap !== undefined && gap < s.start + s.offset) {
        const slot = gap - s.before
        if (best === undefined || slot < best) best = slot
      }
    }
    if (best !== undefined) return best
    // No matching local time from here on within the calendar's cycle: there is none at all.
    if (real === undefined || s.end > Number.MAX_SAFE_INTEGER) return undefined
    lo = s.end
  }
}

/** The last slot at or before instant `t` in `zone`, or `undefined` when there is none. */
export const atOrBefore = (spec: Spec, zone: string, t: number): number | undefined => {
  let hi = Math.floor(t / 1000) * 1000
  for (;;) {
    const s = stretchAt(zone, hi)
    // With no transition found, the offset is known only back to the start of last year.
    const from = Number.isFinite(s.start) ? s.start : Zone.yearStart(Zone.yearOf(hi) - 1)
    let best: number | undefined
    const real = prevLocal(spec, hi + s.offset)
    if (real === undefined) return undefined
    if (real >= realFrom(spec, s) && real - s.offset >= from) best = real - s.offset
    if (s.before < s.offset) {
      const gap = prevLocal(spec, Math.min(hi + s.before, s.start + s.offset - 1000))
      if (gap !== undefined && gap >= s.start + s.before) {
        const slot = gap - s.before
        if (best === undefined || slot > best) best = slot
      }
    }
    if (best !== undefined) return best
    hi = from - 1000
  }
}

/** How DST moved a slot, as {@link next} produced it. */
export type Note =
  | { readonly kind: "gap"; readonly shiftedBy: number }
  | { readonly kind: "fold"; readonly occurrence: "first" | "second" }

/** How DST moved slot `slot` (ms) of `spec` in `zone`, or `undefined` when it did not. */
export const noteOf = (spec: Spec, zone: string, slot: number): Note | undefined => {
  const s = stretchAt(zone, slot)
  const local = slot + s.offset
  if (matchesLocal(spec, local)) {
    if (s.before > s.offset && local < s.start + s.before)
      return { kind: "fold", occurrence: "second" }
    const closes = Zone.transitionAfter(zone, slot)
    if (closes !== undefined && closes.after < closes.before && local >= closes.at + closes.after)
      return { kind: "fold", occurrence: "first" }
    return undefined
  }
  const gapLocal = slot + s.before
  return s.before < s.offset && gapLocal < s.start + s.offset && matchesLocal(spec, gapLocal)
    ? { kind: "gap", shiftedBy: s.offset - s.before }
    : undefined
}

/** An expression parsed in its zone, as {@link Spec} plus the text it came from. */
export interface Parsed {
  readonly _tag: "ParsedCron"
  /** The expression as written. */
  readonly expression: string
  /** The IANA zone its local times are in. */
  readonly timeZone: string
  readonly spec: Spec
}

/** Whether `x` is a {@link Parsed}. */
export const isParsed = (x: unknown): x is Parsed =>
  typeof x === "object" && x !== null && (x as { _tag?: unknown })._tag === "ParsedCron"
