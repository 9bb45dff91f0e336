/**
 * @internal
 * A time zone's offsets and transitions, read from `Intl.DateTimeFormat` (the host's copy of the
 * time-zone database). Local wall times are "naive ms": the epoch ms the wall time would have in
 * UTC, so calendar arithmetic on them is plain `Date.UTC` arithmetic. A local time `L` exists at
 * the instant `L - offset` when `offset` is the zone's offset at that instant.
 *
 * Transitions are found by sampling the offset every three days and bisecting each change to the
 * second, and are cached per zone and UTC year (~120 `Intl` calls, ~0.7 ms, per zone and year).
 * Two transitions less than three days apart that return to the same offset would be missed; the
 * closest such pairs in the database from 1970 to 2040 are a week apart (Brazil in 2000, Gaza and
 * Hebron in 2040).
 */

/** One day, ms: the sampling step when looking for transitions. */
const DAY_MS = 86_400_000

/** The sampling step: transitions closer than this that return to the same offset are missed. */
const STEP_MS = 3 * DAY_MS

/** 400 Gregorian years, ms: the calendar repeats exactly after this. */
const CYCLE_MS = 146_097 * DAY_MS

/** A change of the zone's offset. `at` is the first instant (ms, whole second) with `after`. */
export interface Transition {
  readonly at: number
  /** Offset (ms) just before `at`. */
  readonly before: number
  /** Offset (ms) from `at` on. */
  readonly after: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()

const formatter = (zone: string): Intl.DateTimeFormat => {
  let f = formatters.get(zone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    })
    formatters.set(zone, f)
  }
  return f
}

/** Whether `zone` is a time-zone name the host knows. */
export const isZone = (zone: string): boolean => {
  try {
    formatter(zone)
    return true
  } catch {
    return false
  }
}

/** The naive ms of a wall time; right for every year, including 0–99 (which `Date.UTC` maps to 19xx). */
export const naive = (
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
): number =>
  year >= 100
    ? Date.UTC(year, month - 1, day, hour, minute, second)
    : Date.UTC(year + 400, month - 1, day, hour, minute, second) - CYCLE_MS

/** `format()` in en-US with an era: `3/29/2026 AD, 03:30:00`. Five times faster than `formatToParts`. */
const FORMATTED = /^(\d+)\/(\d+)\/(\d+) (\S+), (\d+):(\d+):(\d+)$/

/** The zone's offset from UTC at instant `t` (ms; positive east of Greenwich). */
export const offsetAt = (zone: string, t: number): number => {
  const whole = Math.floor(t / 1000) * 1000
  const m = FORMATTED.exec(formatter(zone).format(whole))
  // Stryker disable next-line StringLiteral,CallExpression: equivalent, en-US with an era always matches
  if (m === null) throw new Error(`unexpected local time format for ${zone} at ${whole}`)
  const year = Number(m[3])
  return (
    naive(
      m[4] === "BC" || m[4] === "B" ? 1 - year : year,
      Number(m[1]),
      Number(m[2]),
      Number(m[5]),
      Number(m[6]),
      Number(m[7]),
    ) - whole
  )
}

const cache = new Map<string, Map<number, ReadonlyArray<Transition>>>()

/** The zone's transitions whose `at` lies in UTC year `year`, in order. */
export const transitionsOfYear = (zone: string, year: number): ReadonlyArray<Transition> => {
  let byYear = cache.get(zone)
  if (byYear === undefined) {
    byYear = new Map()
    cache.set(zone, byYear)
  }
  const known = byYear.get(year)
  if (known !== undefined) return known
  const start = naive(year, 1, 1)
  const end = naive(year + 1, 1, 1)
  const out: Array<Transition> = []
  // Sampling starts one second early so that a transition exactly at `start` is seen.
  // Stryker disable next-line ArithmeticOperator: equivalent, no zone has a transition in a UTC year's first second
  let prev = start - 1000
  let prevOffset = offsetAt(zone, prev)
  while (prev < end) {
    const t = Math.min(prev + STEP_MS, end)
    const o = offsetAt(zone, t)
    if (o !== prevOffset) {
      // Bisect to the second: offset(lo) === prevOffset, offset(hi) !== prevOffset.
      let lo = prev
      let hi = t
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000
        if (offsetAt(zone, mid) === prevOffset) lo = mid
        else hi = mid
      }
      if (hi < end) out.push({ at: hi, before: prevOffset, after: offsetAt(zone, hi) })
    }
    prev = t
    prevOffset = o
  }
  // Stryker disable next-line CallExpression: equivalent, the cache only saves recomputing the same list
  byYear.set(year, out)
  return out
}

/** The UTC year of instant `t`. */
export const yearOf = (t: number): number => new Date(t).getUTCFullYear()

/** The last transition at or before `t`, looking back no further than the previous UTC year. */
export const transitionAtOrBefore = (zone: string, t: number): Transition | undefined => {
  const year = yearOf(t)
  for (const y of [year, year - 1]) {
    const list = transitionsOfYear(zone, y)
    for (let i = list.length - 1; i >= 0; i--) {
      const tr = list[i] as Transition
      if (tr.at <= t) return tr
    }
  }
  return undefined
}

/** The first transition after `t`, looking no further than the next UTC year. */
export const transitionAfter = (zone: string, t: number): Transition | undefined => {
  const year = yearOf(t)
  for (const y of [year, year + 1]) {
    for (const tr of transitionsOfYear(zone, y)) if (tr.at > t) return tr
  }
  return undefined
}

/** The start of UTC year `year`, ms. */
export const yearStart = (year: number): number => naive(year, 1, 1)
