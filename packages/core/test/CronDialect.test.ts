/**
 * The cron dialect users bring from croner, cron-parser and Quartz (issue 23): macros, `L`,
 * `L-n`, `nL`, `n#k`, `?`, `nW`, `LW`. Day predicates are checked against a brute force that
 * lists a month's days with `Date` and picks by hand (the last Friday is the last of the list of
 * Fridays), over every month from 2024 to 2031.
 */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { Schedule } from "../src/index.ts"
import * as CronSpec from "../src/internal/cron.ts"

const DAY = 86_400_000

/** Every day of a month: its day number and weekday (0 = Sunday). */
const daysOf = (year: number, month: number) => {
  const out: Array<{ day: number; weekday: number }> = []
  for (let t = Date.UTC(year, month - 1, 1); new Date(t).getUTCMonth() === month - 1; t += DAY)
    out.push({ day: new Date(t).getUTCDate(), weekday: new Date(t).getUTCDay() })
  return out
}
const isWeekday = (w: number) => w >= 1 && w <= 5

/** The days of a month an expression's day field picks, by brute force. */
const bruteDays: Record<string, (year: number, month: number) => Array<number>> = {
  "0 0 L * *": (y, m) => [daysOf(y, m).length],
  "0 0 L-3 * *": (y, m) => [daysOf(y, m).length - 3],
  "0 0 * * 5L": (y, m) => [
    daysOf(y, m)
      .filter((d) => d.weekday === 5)
      .at(-1)?.day as number,
  ],
  "0 0 * * 5#3": (y, m) => [daysOf(y, m).filter((d) => d.weekday === 5)[2]?.day as number],
  "0 0 ? * MON#5": (y, m) =>
    daysOf(y, m)
      .filter((d) => d.weekday === 1)
      .slice(4, 5)
      .map((d) => d.day),
  "0 0 LW * *": (y, m) => [
    daysOf(y, m)
      .filter((d) => isWeekday(d.weekday))
      .at(-1)?.day as number,
  ],
  // Nearest weekday to the 15th / the 1st / the 31st within the month: the closest weekday by
  // distance, the earlier one on a tie (a Saturday goes back to Friday).
  ...Object.fromEntries(
    [1, 15, 31].map((n) => [
      `0 0 ${n}W * *`,
      (y: number, m: number) => {
        const days = daysOf(y, m)
        if (n > days.length) return []
        const best = days
          .filter((d) => isWeekday(d.weekday))
          .sort((a, b) => Math.abs(a.day - n) - Math.abs(b.day - n) || a.day - b.day)[0]
        return [best?.day as number]
      },
    ]),
  ),
}

describe("the dialect (issue 23)", () => {
  it("L, L-n, nL, n#k, ?, nW, LW pick the days a brute force picks, 2024–2031", () => {
    for (const [expression, brute] of Object.entries(bruteDays)) {
      const spec = CronSpec.parse(expression)
      if ("reason" in spec) throw new Error(spec.reason)
      for (let year = 2024; year <= 2031; year++) {
        for (let month = 1; month <= 12; month++) {
          const picked = daysOf(year, month)
            .filter((d) => CronSpec.dayMatches(spec, year, month, d.day))
            .map((d) => d.day)
          expect(picked, `${expression} in ${year}-${month}`).toEqual(
            brute(year, month).sort((a, b) => a - b),
          )
        }
      }
    }
  })

  it("macros are their five-field expressions", () => {
    const first = (expression: string) => {
      const r = Schedule.preview(Schedule.cron(expression), {
        from: Date.parse("2026-01-07T12:34:00Z"), // a Wednesday
        count: 1,
      })
      return Array.isArray(r) ? new Date(r[0]?.slot as number).toISOString() : r._tag
    }
    expect(first("@yearly")).toBe("2027-01-01T00:00:00.000Z")
    expect(first("@annually")).toBe("2027-01-01T00:00:00.000Z")
    expect(first("@monthly")).toBe("2026-02-01T00:00:00.000Z")
    expect(first("@weekly")).toBe("2026-01-11T00:00:00.000Z")
    expect(first("@daily")).toBe("2026-01-08T00:00:00.000Z")
    expect(first("@midnight")).toBe("2026-01-08T00:00:00.000Z")
    expect(first("@HOURLY")).toBe("2026-01-07T13:00:00.000Z")
  })

  it("a pasted `0 0 L * *` runs on the last day of each month", () => {
    const r = Schedule.preview(Schedule.cron("0 0 L * *"), {
      from: Date.UTC(2028, 0, 15),
      count: 3,
    })
    expect(Array.isArray(r) && r.map((s) => new Date(s.slot).toISOString().slice(0, 10))).toEqual([
      "2028-01-31",
      "2028-02-29",
      "2028-03-31",
    ])
  })

  it("bad forms are InvalidCronExpression errors naming the cron field and the part", () => {
    const cases: Array<[string, string]> = [
      ["@fortnightly", "not a known macro"],
      ["0 0 * * L", 'day-of-week field "L"'],
      ["0 0 * * 5#6", 'day-of-week field "5#6"'],
      ["0 0 * * 8L", 'day-of-week field "8L"'],
      ["0 0 L-31 * *", 'day-of-month field "L-31"'],
      ["0 0 32W * *", 'day-of-month field "32W"'],
      ["0 0 5L * *", 'day-of-month field "5L"'],
      ["0 L * * *", 'hour field "L"'],
      ["0 ? * * *", 'hour field "?"'],
      ["0 0 1#2 * *", 'day-of-month field "1#2"'],
    ]
    for (const [expression, says] of cases) {
      const r = Schedule.resolve(Schedule.cron(expression), 0)
      expect(r, expression).toMatchObject({
        _tag: "InvalidCronExpression",
        field: "expression",
        value: expression,
      })
      expect((r as { message: string }).message, expression).toContain(says)
    }
  })
})

describe("explain (issue 23)", () => {
  const text = (expression: string) => {
    const e = Schedule.explain(expression, "Europe/Berlin")
    if (!("text" in e)) throw new Error(e.message)
    return e
  }

  it("says in words what each new form means", () => {
    expect(text("0 9 * * 5L").text).toBe("at 09:00 on the last Friday of the month")
    expect(text("0 9 ? * FRI#3").text).toBe("at 09:00 on the third Friday of the month")
    expect(text("0 0 L * *").text).toBe("at 00:00 on the last day of the month")
    expect(text("0 0 L-2 * *").text).toBe(
      "at 00:00 on the day 2 days before the last day of the month",
    )
    expect(text("0 0 15W * *").text).toBe("at 00:00 on the weekday nearest day 15 of the month")
    expect(text("0 0 LW * *").text).toBe("at 00:00 on the last weekday of the month")
    expect(text("@weekly").text).toBe("at 00:00 on Sunday")
    expect(text("@yearly").text).toBe("at 00:00 on day 1 of the month in January")
    expect(text("0,30 2 * * *").text).toBe("at 02:00 and 02:30")
    expect(text("*/3 * * * * *").text).toBe("every 3 seconds")
    expect(text("*/15 * * * *").text).toBe("every 15 minutes")
    expect(text("*/15 9-11 * * *").text).toBe("every 15 minutes of hour 9, 10 and 11")
    expect(text("0 */2 * * *").text).toBe("at minute 0 of every 2 hours")
    expect(text("* * * * *").text).toBe("every minute")
    // 0, 7, …, 56 then 0 again: not evenly spaced across the hour, so listed.
    expect(text("*/7 * * * *").text).toBe(
      "at minute 0, 7, 14, 21, 28, 35, 42, 49 and 56 of every hour",
    )
  })

  it("notes the Vixie rule only when both day fields restrict and one starts with *", () => {
    expect(text("0 16 */2 * sat").notes).toEqual([Schedule.VIXIE_NOTE])
    expect(text("0 16 */2 * sat").text).toContain(", if it is also Saturday")
    expect(text("0 16 1,15 * sat").notes).toEqual([])
    expect(text("0 16 1,15 * sat").text).toContain(", or on Saturday")
    expect(text("0 16 */2 * *").notes).toEqual([])
    expect(text("0 16 * * sat").notes).toEqual([])
  })

  it("the Vixie rule: `0 16 */2 * sat` from 2023-05-02 runs on 13 and 27 May (both must match)", () => {
    const r = Schedule.preview(Schedule.cron("0 16 */2 * sat"), {
      from: Date.parse("2023-05-02T00:00:00Z"),
      count: 2,
    })
    expect(Array.isArray(r) && r.map((s) => new Date(s.slot).toISOString().slice(0, 10))).toEqual([
      "2023-05-13",
      "2023-05-27",
    ])
  })
})

describe("dayMatch: the either-field reading, opt-in (issue 23)", () => {
  const days = (schedule: Schedule.Schedule, count: number) => {
    const r = Schedule.preview(schedule, { from: Date.parse("2023-05-02T00:00:00Z"), count })
    if (!Array.isArray(r)) throw new Error(r.message)
    return r.map((s) => new Date(s.slot).toISOString().slice(0, 10))
  }

  it('`0 16 */2 * sat` from 2023-05-02 runs on 3, 5, 6 and 7 May with dayMatch "either"', () => {
    expect(days(Schedule.cron("0 16 */2 * sat", { dayMatch: "either" }), 4)).toEqual([
      "2023-05-03",
      "2023-05-05",
      "2023-05-06",
      "2023-05-07",
    ])
    expect(days(Schedule.cron("0 16 */2 * sat", { dayMatch: "vixie" }), 2)).toEqual([
      "2023-05-13",
      "2023-05-27",
    ])
    expect(days(Schedule.cron("0 16 */2 * sat"), 2)).toEqual(["2023-05-13", "2023-05-27"])
  })

  it("changes nothing when a day field does not start with * (both readings are either)", () => {
    const a = days(Schedule.cron("0 16 1,15 * sat", { dayMatch: "either" }), 6)
    expect(a).toEqual(days(Schedule.cron("0 16 1,15 * sat"), 6))
  })

  it("explain says `or on` and drops the Vixie note", () => {
    const e = Schedule.explain("0 16 */2 * sat", "UTC", { dayMatch: "either" })
    if (!("text" in e)) throw new Error(e.message)
    expect(e.text).toMatch(/^at 16:00 on day 1, 3, .* and 31 of the month, or on Saturday$/)
    expect(e.notes).toEqual([])
  })

  it("a bad dayMatch is an InvalidOption naming the field and the value", () => {
    for (const r of [
      Schedule.resolve(Schedule.cron("0 0 * * *", { dayMatch: "any" as never }), 0),
      Schedule.explain("0 0 * * *", "UTC", { dayMatch: "both" as never }),
    ]) {
      expect(r).toMatchObject({ _tag: "InvalidOption", field: "dayMatch" })
      expect((r as { message: string }).message).toMatch(
        /dayMatch must be "vixie" or "either", got "(any|both)"/,
      )
    }
  })

  it('is stored only when "either", and decodes back to the same slots', () => {
    const either = Schedule.cron("0 16 */2 * sat", { dayMatch: "either" })
    const r = Schedule.resolve(either, Date.parse("2023-05-02T00:00:00Z")) as Schedule.Resolved
    const encoded = Result.getOrThrow(Schedule.encode(either, r))
    expect(encoded).toEqual({
      kind: "cron",
      expression: "0 16 */2 * sat",
      timeZone: "UTC",
      dayMatch: "either",
    })
    const decoded = Result.getOrThrow(Schedule.decode(JSON.parse(JSON.stringify(encoded))))
    expect(decoded.encoded).toEqual(encoded)
    const plan = decoded.plan as Schedule.Plan
    const next = Schedule.nextAfterRun(plan, "catch-up", r.first, r.first)
    expect(next && "slot" in next && new Date(next.slot).toISOString()).toBe(
      "2023-05-05T16:00:00.000Z",
    )
    const plain = Schedule.cron("0 16 */2 * sat", { dayMatch: "vixie" })
    const rp = Schedule.resolve(plain, 0) as Schedule.Resolved
    expect(Result.getOrThrow(Schedule.encode(plain, rp))).toEqual({
      kind: "cron",
      expression: "0 16 */2 * sat",
      timeZone: "UTC",
    })
    const bad = Schedule.decode({ ...encoded, dayMatch: "sometimes" })
    expect(Result.isFailure(bad) && bad.failure.message).toContain("dayMatch")
  })
})
