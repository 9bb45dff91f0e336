/**
 * Cron slots around every time-zone transition from 2000 to 2040 (SPEC §3), checked against a
 * brute-force oracle that walks real time a minute at a time and reads each instant's local wall
 * time from its own `Intl.DateTimeFormat`. The oracle states the DST rules directly:
 * - a local time that exists runs at its instant; at its second occurrence (clocks fell back)
 *   only when the hour field matches every hour;
 * - a local time the clocks skipped runs at the instant it would have had with the offset in
 *   force before the skip (shifted by the gap's length).
 */

import { Cron } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Schedule } from "../src/index.ts"
import * as CronSpec from "../src/internal/cron.ts"

const MINUTE = 60_000
const HOUR = 60 * MINUTE
/** Transitions from 2000 on fall on quarter hours of UTC: the oracle reads offsets that often. */
const BLOCK = 15 * MINUTE

const formatters = new Map<string, Intl.DateTimeFormat>()
/** The local wall time of instant `t` in `zone`, as naive ms (whole minutes). */
const wallTime = (zone: string, t: number): number => {
  let f = formatters.get(zone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
    })
    formatters.set(zone, f)
  }
  // "3/29/2026, 03:30"
  const [month, day, year, hour, minute] = (f.format(t).match(/\d+/g) ?? []).map(Number)
  return Date.UTC(year as number, (month as number) - 1, day, hour, minute)
}
const offset = (zone: string, t: number): number =>
  wallTime(zone, t) - Math.floor(t / MINUTE) * MINUTE

/**
 * The oracle: the slots in `(from, to]`, walking real time from 3 h before `from` so that a
 * fold's first occurrences and a gap's skipped times are all seen. Offsets are read once per
 * quarter hour (and checked constant within it); the minutes between are counted, not looked up.
 */
const oracle = (spec: CronSpec.Spec, zone: string, from: number, to: number): Array<number> => {
  const out = new Set<number>()
  const seen = new Set<number>()
  const start = Math.floor((from - 3 * HOUR) / BLOCK) * BLOCK
  let prevEnd: number | undefined // local wall time just after the previous block
  let prevOffset = 0
  const emitLocal = (localMinute: number, instantOf: (local: number) => number) => {
    for (const second of spec.seconds) {
      const local = localMinute + second * 1000
      if (CronSpec.matchesLocal(spec, local)) out.add(instantOf(local))
    }
  }
  for (let block = start; block <= to; block += BLOCK) {
    const o = offset(zone, block)
    expect(offset(zone, block + BLOCK - MINUTE), `${zone} changes offset inside a block`).toBe(o)
    const local = block + o
    if (prevEnd !== undefined && local > prevEnd) {
      // Clocks sprang forward: [prevEnd, local) never happens; it runs with the old offset.
      const before = prevOffset
      for (let m = prevEnd; m < local; m += MINUTE) emitLocal(m, (l) => l - before)
    }
    for (let i = 0; i < BLOCK / MINUTE; i++) {
      const m = local + i * MINUTE
      const again = seen.has(m)
      seen.add(m)
      if (!again || spec.everyHour) emitLocal(m, (l) => l - o)
    }
    prevEnd = local + BLOCK
    prevOffset = o
  }
  return [...out].filter((s) => s > from && s <= to).sort((a, b) => a - b)
}

/** The slots in `(from, to]` by stepping core's `next`. */
const stepped = (spec: CronSpec.Spec, zone: string, from: number, to: number): Array<number> => {
  const out: Array<number> = []
  for (let s = CronSpec.next(spec, zone, from); s !== undefined && s <= to; ) {
    out.push(s)
    s = CronSpec.next(spec, zone, s)
  }
  return out
}

/** Zones the issue names, with 30- and 45-minute offsets, 30-minute DST and gaps at midnight. */
const NAMED = [
  "Europe/Berlin",
  "America/New_York",
  "Australia/Lord_Howe",
  "Asia/Kathmandu",
  "Pacific/Chatham",
  "America/Santiago",
  "Asia/Tehran",
  "Africa/Casablanca",
  "America/Havana",
  "Asia/Beirut",
  "Antarctica/Troll",
  "Pacific/Apia",
  "Europe/Athens",
]

/** Every 20th zone of the host's database besides: a spread over all regions, in a fixed order. */
const SAMPLED = Intl.supportedValuesOf("timeZone").filter((_, i) => i % 20 === 0)

const YEAR_2000 = Date.UTC(2000, 0, 1)
const YEAR_2041 = Date.UTC(2041, 0, 1)
/** Sampling step; the closest transitions that return to their offset (1970–2040) are 7 days apart. */
const STEP = 3 * 24 * HOUR

/** A transition: its instant and the offsets either side. Found by samples, bisected. */
interface Change {
  readonly zone: string
  readonly at: number
  readonly before: number
  readonly after: number
}

const changesOf = (zone: string): Array<Change> => {
  const out: Array<Change> = []
  let t = YEAR_2000
  let o = offset(zone, t)
  while (t < YEAR_2041) {
    const u = t + STEP
    const p = offset(zone, u)
    if (p !== o) {
      let lo = t
      let hi = u
      while (hi - lo > MINUTE) {
        const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE
        if (offset(zone, mid) === o) lo = mid
        else hi = mid
      }
      out.push({ zone, at: hi, before: o, after: offset(zone, hi) })
    }
    t = u
    o = p
  }
  return out
}

const CHANGES = [...new Set([...NAMED, ...SAMPLED])].flatMap(changesOf)

const parse = (expression: string): CronSpec.Spec => {
  const spec = CronSpec.parse(expression)
  if ("reason" in spec) throw new Error(`${expression}: ${spec.reason}`)
  return spec
}

/** Checks an expression around one transition: same slots as the oracle, and `atOrBefore` agrees. */
const checkAround = (expression: string, c: Change) => {
  const spec = parse(expression)
  const from = c.at - 2 * HOUR
  const to = c.at + 3 * HOUR
  const expected = oracle(spec, c.zone, from, to)
  const label = `${expression} in ${c.zone} at ${new Date(c.at).toISOString()}`
  expect(stepped(spec, c.zone, from, to), label).toEqual(expected)
  let previous = CronSpec.atOrBefore(spec, c.zone, from)
  for (const s of expected) {
    expect(CronSpec.atOrBefore(spec, c.zone, s), label).toBe(s)
    expect(CronSpec.atOrBefore(spec, c.zone, s - 1), label).toBe(previous)
    previous = s
  }
}

/** The local hour just before a transition: expressions at that hour hit the gap or the fold. */
const hourBefore = (c: Change): number => new Date(c.at - MINUTE + c.before).getUTCHours()

/** A bound for slow machines, not an expectation: these take about 3 s on a quiet one. */
const SLOW = { timeout: 60_000 }

describe("cron slots around every transition 2000–2040 (SPEC §3)", () => {
  it("finds transitions in every named zone", () => {
    expect(CHANGES.length).toBeGreaterThan(1000)
    // Kathmandu has had no transition since 1986: it is here for its +05:45 offset.
    for (const zone of NAMED.filter((z) => z !== "Asia/Kathmandu")) {
      expect(
        CHANGES.some((c) => c.zone === zone),
        zone,
      ).toBe(true)
    }
  })

  it("every transition, every half hour and at the transition's own hour", SLOW, () => {
    for (const c of CHANGES) {
      const h = hourBefore(c)
      checkAround("0,30 * * * *", c)
      checkAround(`*/20 ${h},${(h + 1) % 24} * * *`, c)
    }
  })

  it(
    "generated expressions (lists, ranges, steps, names, seconds) around sampled transitions",
    SLOW,
    () => {
      const minute = fc.oneof(
        fc.constantFrom("*", "0", "30", "*/15", "*/20", "10,35,40", "45", "5-50/15", "0-10"),
        fc.integer({ min: 0, max: 59 }).map(String),
      )
      const second = fc.option(fc.constantFrom("0", "*/30", "15,45", "59"), { nil: undefined })
      const hour = (h: number) =>
        fc.constantFrom(
          "*",
          `${h}`,
          `${h},${(h + 1) % 24}`,
          `${Math.max(0, h - 1)}-${Math.min(23, h + 1)}`,
          "*/2",
          "*/3",
          `${h}-23`,
          "0-23",
        )
      const dayOfMonth = fc.constantFrom(
        "*",
        "*",
        "*",
        "1-31",
        "*/2",
        "1,15,29-31",
        "L",
        "L-2",
        "15W",
        "LW",
        "?",
      )
      const month = fc.constantFrom("*", "*", "*", "jan-jun,jul-dec", "MAR,OCT,NOV,APR,SEP")
      const dayOfWeek = fc.constantFrom(
        "*",
        "*",
        "*",
        "MON-FRI",
        "sun,sat",
        "0-6",
        "1-7/2",
        "0L",
        "SUN#1,6#2",
        "?",
      )
      const changeAndExpression = fc.integer({ min: 0, max: CHANGES.length - 1 }).chain((i) => {
        const c = CHANGES[i] as Change
        return fc
          .tuple(second, minute, hour(hourBefore(c)), dayOfMonth, month, dayOfWeek)
          .map(([s, ...rest]) => ({
            c,
            expression: [...(s === undefined ? [] : [s]), ...rest].join(" "),
          }))
      })
      fc.assert(
        fc.property(changeAndExpression, ({ c, expression }) => checkAround(expression, c)),
        { numRuns: 300, seed: 23 },
      )
    },
  )

  it("standard fields match as Effect's Cron matches them (the oracle's own matcher)", SLOW, () => {
    const expressions = [
      "0 16 */2 * sat",
      "0 0 1,15 * MON",
      "*/7 3-5 * jan,mar 1-5",
      "30 0 9-17/2 */3 * sun-sat",
      "0 0 31 * *",
      "0 0 * * 7",
    ]
    for (const expression of expressions) {
      const spec = parse(expression)
      const effect = Cron.parseUnsafe(expression, "UTC")
      for (let t = Date.UTC(2024, 0, 1); t < Date.UTC(2026, 0, 1); t += 11 * HOUR + 17 * MINUTE) {
        const local = Math.floor(t / MINUTE) * MINUTE
        expect(
          CronSpec.matchesLocal(spec, local),
          `${expression} at ${new Date(local).toISOString()}`,
        ).toBe(Cron.match(effect, new Date(local)))
      }
    }
  })
})

describe("issue 23: every slot of a DST gap, every existing time", () => {
  const preview = (expression: string, timeZone: string, from: string, count: number) => {
    const slots = Schedule.preview(Schedule.cron(expression, { timeZone }), {
      from: Date.parse(from),
      count,
    })
    if (!Array.isArray(slots)) throw new Error(slots.message)
    return slots.map((s) => new Date(s.slot).toISOString())
  }

  it("Berlin: 02:00 and 02:30 on the spring-forward night both run, an hour later", () => {
    expect(preview("0,30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", 3)).toEqual([
      "2026-03-29T01:00:00.000Z",
      "2026-03-29T01:30:00.000Z",
      "2026-03-30T00:00:00.000Z",
    ])
  })

  it("Athens: 03:00, 03:20 and 03:40 in the gap all run", () => {
    expect(preview("*/20 3 * * *", "Europe/Athens", "2026-03-28T12:00:00Z", 4)).toEqual([
      "2026-03-29T01:00:00.000Z",
      "2026-03-29T01:20:00.000Z",
      "2026-03-29T01:40:00.000Z",
      "2026-03-30T00:00:00.000Z",
    ])
  })

  it("Lord Howe's 30-minute gap: 02:35 exists and runs; 02:10 runs shifted, with 02:40", () => {
    expect(preview("10,35,40 2 * * *", "Australia/Lord_Howe", "2026-10-03T12:00:00Z", 3)).toEqual([
      "2026-10-03T15:35:00.000Z",
      "2026-10-03T15:40:00.000Z",
      "2026-10-04T15:10:00.000Z",
    ])
  })

  it("Troll's two-hour gap: 02:30 runs at 04:30, shifted by the gap's length", () => {
    const slots = Schedule.preview(Schedule.cron("30 2 * * *", { timeZone: "Antarctica/Troll" }), {
      from: Date.parse("2026-03-28T12:00:00Z"),
      count: 1,
    })
    expect(slots).toEqual([
      { slot: Date.parse("2026-03-29T02:30:00Z"), dst: { kind: "gap", shiftedBy: 2 * HOUR } },
    ])
  })
})
