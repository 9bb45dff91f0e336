/**
 * Each cron field's forms (SPEC §22.1) and the day rule (SPEC §22.2), field by field: the fire
 * times are written out by hand from the calendar (1 January 2026 is a Thursday, 1 February and
 * 1 March 2026 are Sundays), the errors are the exact messages a user reads, and `explain`'s
 * words are the sentences it promises.
 */
import { Cron } from "effect"
import { describe, expect, it } from "vitest"
import { MissedRun, Schedule } from "../src/index.ts"

const THU_2026 = "2026-01-01T00:00:00Z"

/** The next `count` slots strictly after `from`, as UTC `YYYY-MM-DDTHH:MM:SS`. */
const slots = (
  expression: string,
  from: string,
  count: number,
  options?: { readonly timeZone?: string; readonly dayMatch?: Schedule.DayMatch },
): Array<string> => {
  const r = Schedule.preview(Schedule.cron(expression, options), {
    from: Date.parse(from),
    count,
  })
  if (!Array.isArray(r)) throw new Error(r.message)
  return r.map((s) => new Date(s.slot).toISOString().slice(0, 19))
}

/** The days (`YYYY-MM-DD`) of the next `count` slots after 1 January 2026, 00:00 UTC. */
const days = (
  expression: string,
  count: number,
  options?: { readonly dayMatch?: Schedule.DayMatch },
): Array<string> => slots(expression, THU_2026, count, options).map((s) => s.slice(0, 10))

const message = (expression: string): string => {
  const r = Schedule.parseCron(expression, "UTC")
  if (r._tag === "ParsedCron") throw new Error(`${expression} parsed`)
  expect(r, expression).toMatchObject({
    _tag: "InvalidCronExpression",
    field: "expression",
    value: expression,
  })
  return r.message
}

describe("cron fields: values, ranges, steps and names (SPEC §22.1)", () => {
  it("a single value with a step runs from that value to the field's end", () => {
    expect(slots("5/15 * * * *", THU_2026, 5)).toEqual([
      "2026-01-01T00:05:00",
      "2026-01-01T00:20:00",
      "2026-01-01T00:35:00",
      "2026-01-01T00:50:00",
      "2026-01-01T01:05:00",
    ])
  })

  it("a range with a step stops at the range's end", () => {
    expect(slots("10-30/10 * * * *", THU_2026, 4)).toEqual([
      "2026-01-01T00:10:00",
      "2026-01-01T00:20:00",
      "2026-01-01T00:30:00",
      "2026-01-01T01:10:00",
    ])
  })

  it("the largest step a field allows: hours 0 and 23 with */23", () => {
    expect(slots("0 */23 * * *", THU_2026, 3)).toEqual([
      "2026-01-01T23:00:00",
      "2026-01-02T00:00:00",
      "2026-01-02T23:00:00",
    ])
  })

  it("weekday 7 is Sunday, alone and as a range's end", () => {
    expect(days("0 0 * * 7", 2)).toEqual(["2026-01-04", "2026-01-11"])
    expect(days("0 0 * * 0", 2)).toEqual(["2026-01-04", "2026-01-11"])
    expect(days("0 0 * * 5-7", 4)).toEqual(["2026-01-02", "2026-01-03", "2026-01-04", "2026-01-09"])
  })

  it("month and weekday names, in any case, also in ranges", () => {
    expect(days("0 0 1 jan-MAR *", 4)).toEqual([
      "2026-02-01",
      "2026-03-01",
      "2027-01-01",
      "2027-02-01",
    ])
    expect(days("0 0 * * mon-WED", 4)).toEqual([
      "2026-01-05",
      "2026-01-06",
      "2026-01-07",
      "2026-01-12",
    ])
  })

  it("spaces and tabs around and between fields are ignored, also around a macro", () => {
    expect(slots("  0   9\t* * *  ", THU_2026, 1)).toEqual(["2026-01-01T09:00:00"])
    expect(slots(" @DAILY ", THU_2026, 1)).toEqual(["2026-01-02T00:00:00"])
  })

  it("a seconds field: each matching second of each matching minute, in order", () => {
    expect(slots("30 */20 9 * * *", "2026-01-01T09:00:30Z", 4)).toEqual([
      "2026-01-01T09:20:30",
      "2026-01-01T09:40:30",
      "2026-01-02T09:00:30",
      "2026-01-02T09:20:30",
    ])
  })

  it("the first slot is strictly after a `from` that is not a whole second", () => {
    expect(slots("0 0 9 * * *", "2026-01-01T08:59:59.500Z", 1)).toEqual(["2026-01-01T09:00:00"])
    expect(slots("0 0 9 * * *", "2026-01-01T09:00:00.500Z", 1)).toEqual(["2026-01-02T09:00:00"])
  })
})

describe("cron days and months: the calendar (SPEC §22.1)", () => {
  it("29 February runs only in leap years", () => {
    expect(slots("0 0 29 2 *", "2026-03-01T00:00:00Z", 2)).toEqual([
      "2028-02-29T00:00:00",
      "2032-02-29T00:00:00",
    ])
  })

  it("day 31 runs only in the months that have it", () => {
    expect(days("0 12 31 * *", 4)).toEqual(["2026-01-31", "2026-03-31", "2026-05-31", "2026-07-31"])
  })

  it("a month field with one month moves to the next year", () => {
    expect(slots("0 0 L 2 *", "2026-03-01T00:00:00Z", 2)).toEqual([
      "2027-02-28T00:00:00",
      "2028-02-29T00:00:00",
    ])
  })

  it("L listed with a day runs on both", () => {
    expect(days("0 0 1,L * *", 4)).toEqual(["2026-01-31", "2026-02-01", "2026-02-28", "2026-03-01"])
  })

  it("the special day forms in lower case and their edge values", () => {
    expect(days("0 0 l * *", 2)).toEqual(["2026-01-31", "2026-02-28"])
    expect(days("0 0 L-0 * *", 2)).toEqual(["2026-01-31", "2026-02-28"])
    // L-30 is day 1 of a 31-day month only (1 January is `from` itself, not after it).
    expect(days("0 0 L-30 * *", 2)).toEqual(["2026-03-01", "2026-05-01"])
    // 31 January 2026 and 28 February 2026 are Saturdays: the last weekday is the Friday before.
    expect(days("0 0 lw * *", 2)).toEqual(["2026-01-30", "2026-02-27"])
    // 15 January is a Thursday; 15 February a Sunday, so the Monday after.
    expect(days("0 0 15w * *", 2)).toEqual(["2026-01-15", "2026-02-16"])
    expect(days("0 0 * * 5l", 2)).toEqual(["2026-01-30", "2026-02-27"])
    expect(days("0 0 * * 7L", 2)).toEqual(["2026-01-25", "2026-02-22"])
    expect(days("0 0 * * fri#2", 2)).toEqual(["2026-01-09", "2026-02-13"])
    expect(days("0 0 * * 7#1", 2)).toEqual(["2026-01-04", "2026-02-01"])
    expect(days("0 0 ? * mon", 2)).toEqual(["2026-01-05", "2026-01-12"])
  })
})

describe("cron day-of-month and day-of-week together (SPEC §22.2)", () => {
  it("`*/1` in day-of-month does not restrict: with dayMatch either, only the weekday runs", () => {
    expect(days("0 0 */1 * sat", 2, { dayMatch: "either" })).toEqual(["2026-01-03", "2026-01-10"])
    expect(days("0 0 */1 * sat", 2)).toEqual(["2026-01-03", "2026-01-10"])
  })

  it("a stepped day-of-month with dayMatch either runs on its days and on the weekday", () => {
    expect(days("0 0 */2 * sat", 5, { dayMatch: "either" })).toEqual([
      "2026-01-03",
      "2026-01-05",
      "2026-01-07",
      "2026-01-09",
      "2026-01-10",
    ])
  })

  it("neither field starting with * reads either: 1, 15 and Saturdays", () => {
    expect(days("0 0 1,15 * sat", 4)).toEqual([
      "2026-01-03",
      "2026-01-10",
      "2026-01-15",
      "2026-01-17",
    ])
  })

  it("a day-of-week starting with * makes a day match both (Vixie)", () => {
    // */3 in day-of-week is Sunday, Wednesday and Saturday; 1 and 15 January 2026 are Thursdays,
    // 1 and 15 February and 1 March are Sundays.
    expect(days("0 0 1,15 * */3", 3)).toEqual(["2026-02-01", "2026-02-15", "2026-03-01"])
  })
})

describe("cron refusals name the field, the part and why (SPEC §22.1)", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ["60 * * * *", 'its minute field "60" is out of range 0–59'],
    ["60 0 * * * *", 'its second field "60" is out of range 0–59'],
    ["0 24 * * *", 'its hour field "24" is out of range 0–23'],
    ["0 0 0 * *", 'its day-of-month field "0" is out of range 1–31'],
    ["0 0 32 * *", 'its day-of-month field "32" is out of range 1–31'],
    ["0 0 * 0 *", 'its month field "0" is out of range 1–12'],
    ["0 0 * 13 *", 'its month field "13" is out of range 1–12'],
    ["0 0 * * 8", 'its day-of-week field "8" is out of range 0–7'],
    ["x * * * *", 'its minute field "x" is not a number'],
    ["0 0 * foo *", 'its month field "foo" is not a number or a name'],
    ["0 0 * jan-x *", 'its month field "jan-x" is not a number or a name'],
    ["0 0 * x-mar *", 'its month field "x-mar" is not a number or a name'],
    ["*/0 * * * *", 'its minute field "*/0" has a step that is not a whole number from 1 to 59'],
    ["*/60 * * * *", 'its minute field "*/60" has a step that is not a whole number from 1 to 59'],
    ["0 */24 * * *", 'its hour field "*/24" has a step that is not a whole number from 1 to 23'],
    ["*/x * * * *", 'its minute field "*/x" has a step that is not a whole number from 1 to 59'],
    ["30-10 * * * *", 'its minute field "30-10" is a range whose start is after its end'],
    ["1,,2 * * * *", 'its minute field "1,,2" has an empty part'],
    [
      "? * * * *",
      'its minute field "?" has `?`, which only the day-of-month and day-of-week fields allow',
    ],
    [
      "0 0 * ? *",
      'its month field "?" has `?`, which only the day-of-month and day-of-week fields allow',
    ],
    ["0 0 W * *", 'its day-of-month field "W" is not a day, a range, `L`, `L-n`, `nW` or `LW`'],
    ["0 0 0W * *", 'its day-of-month field "0W" is out of range 1–31'],
    [
      "0 0 * * 5#0",
      'its day-of-week field "5#0" has an occurrence after `#` that is not a whole number from 1 to 5',
    ],
    [
      "0 0 * * 5#x",
      'its day-of-week field "5#x" has an occurrence after `#` that is not a whole number from 1 to 5',
    ],
    ["0 0 * * x#1", 'its day-of-week field "x#1" is not a number or a name'],
    ["0 0 * * xL", 'its day-of-week field "xL" is not a number or a name'],
    ["0 0 * * l", 'its day-of-week field "l" is `L` alone; write `nL` (`5L`: the last Friday)'],
    ["0 0 * *", "it has 4 fields, expected 5 or 6"],
    ["0 0 0 * * * *", "it has 7 fields, expected 5 or 6"],
    [
      "@every",
      "it is not a known macro (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly)",
    ],
  ]
  it.each(cases)("%s", (expression, says) => {
    expect(message(expression)).toBe(
      `expression ${JSON.stringify(expression)} is not a valid cron expression: ${says}`,
    )
  })

  it("the boundary values of each field are accepted", () => {
    for (const expression of ["59 59 23 31 12 7", "0 0 0 1 1 0", "0 0 L-30 * *", "0 0 * * 5#5"])
      expect(Schedule.parseCron(expression, "UTC")._tag, expression).toBe("ParsedCron")
  })
})

describe("the last slot at or before an instant (coalesce and skip, SPEC §3.4)", () => {
  const latest = (expression: string, at: string, timeZone = "UTC"): string | undefined => {
    const parsed = Schedule.parseCron(expression, timeZone)
    if (parsed._tag !== "ParsedCron") throw new Error(parsed.message)
    const t = MissedRun.cron(parsed).atOrBefore(Date.parse(at))
    return t === undefined ? undefined : new Date(t).toISOString().slice(0, 19)
  }

  it("an instant that is a slot is its own latest slot; a millisecond before, the one before", () => {
    expect(latest("0 9 * * *", "2026-01-02T09:00:00Z")).toBe("2026-01-02T09:00:00")
    expect(latest("0 9 * * *", "2026-01-02T08:59:59.999Z")).toBe("2026-01-01T09:00:00")
  })

  it("steps back over minutes, seconds, hours, months and years", () => {
    expect(latest("0,30 * * * *", "2026-01-02T10:15:00Z")).toBe("2026-01-02T10:00:00")
    expect(latest("0,30 * * * *", "2026-01-02T10:45:00Z")).toBe("2026-01-02T10:30:00")
    expect(latest("45 * * * *", "2026-01-02T10:05:00Z")).toBe("2026-01-02T09:45:00")
    expect(latest("30 45 * * * *", "2026-01-02T10:45:10Z")).toBe("2026-01-02T09:45:30")
    expect(latest("30 45 * * * *", "2026-01-02T10:45:40Z")).toBe("2026-01-02T10:45:30")
    expect(latest("30 */20 9 * * *", "2026-01-02T09:25:00Z")).toBe("2026-01-02T09:20:30")
    expect(latest("30 */20 9 * * *", "2026-01-02T08:00:00Z")).toBe("2026-01-01T09:40:30")
    expect(latest("0 12 31 * *", "2026-05-01T00:00:00Z")).toBe("2026-03-31T12:00:00")
    expect(latest("0 0 29 2 *", "2031-01-01T00:00:00Z")).toBe("2028-02-29T00:00:00")
    expect(latest("0 0 1 1 *", "2026-01-01T00:00:00Z")).toBe("2026-01-01T00:00:00")
    expect(latest("0 0 1 1 *", "2025-12-31T23:59:59Z")).toBe("2025-01-01T00:00:00")
  })

  it("New York: a fold's second occurrence is not a slot unless every hour matches", () => {
    // 1 November 2026, 02:00 EDT falls back to 01:00 EST (06:00 UTC): 01:30 is 05:30 and 06:30 UTC.
    expect(latest("30 1 * * *", "2026-11-01T07:00:00Z", "America/New_York")).toBe(
      "2026-11-01T05:30:00",
    )
    expect(latest("30 * * * *", "2026-11-01T06:45:00Z", "America/New_York")).toBe(
      "2026-11-01T06:30:00",
    )
  })

  it("New York: a gap's local time is a slot at its shifted instant", () => {
    // 8 March 2026, 02:00 EST springs to 03:00 EDT (07:00 UTC): 02:30 runs at 03:30 EDT.
    expect(latest("30 2 * * *", "2026-03-08T08:00:00Z", "America/New_York")).toBe(
      "2026-03-08T07:30:00",
    )
    expect(latest("30 2 * * *", "2026-03-08T07:29:59Z", "America/New_York")).toBe(
      "2026-03-07T07:30:00",
    )
  })
})

describe("explain: the words for each field (SPEC §22.2)", () => {
  const text = (expression: string) => {
    const e = Schedule.explain(expression, "UTC")
    if (!("text" in e)) throw new Error(e.message)
    return e.text
  }

  it("times: up to four listed, with seconds when they are not just 0", () => {
    expect(text("0 0 9 * * *")).toBe("at 09:00")
    expect(text("5 0 9 * * *")).toBe("at 09:00:05")
    expect(text("15,45 0 9 * * *")).toBe("at 09:00:15 and 09:00:45")
    expect(text("0,15,30,45 9 * * *")).toBe("at 09:00, 09:15, 09:30 and 09:45")
    expect(text("0,12,24,36,48 9 * * *")).toBe("every 12 minutes of hour 9")
  })

  it("fields field by field: an even step, a list, or every", () => {
    expect(text("5,10 * * * * *")).toBe("at second 5 and 10 of every minute of every hour")
    expect(text("*/20 * * * * *")).toBe("every 20 seconds")
    expect(text("*/15 */2 * * *")).toBe("every 15 minutes of every 2 hours")
    expect(text("0,30 * * * *")).toBe("every 30 minutes")
    // Evenly spaced only when the values fill the field: 0 and 20 leave out 40.
    expect(text("0,20 * * * *")).toBe("at minute 0 and 20 of every hour")
    expect(text("0,20,50 * * * *")).toBe("at minute 0, 20 and 50 of every hour")
  })

  it("days and months", () => {
    expect(text("0 0 1,15 * *")).toBe("at 00:00 on day 1 and 15 of the month")
    expect(text("0 0 L-1 * *")).toBe("at 00:00 on the day 1 day before the last day of the month")
    expect(text("0 0 1,L * *")).toBe("at 00:00 on day 1 of the month and the last day of the month")
    expect(text("0 0 * * mon,tue,fri")).toBe("at 00:00 on Monday, Tuesday and Friday")
    expect(text("0 0 * * 1#1,7#5")).toBe(
      "at 00:00 on the first Monday of the month and the fifth Sunday of the month",
    )
    expect(text("0 0 * * 7L")).toBe("at 00:00 on the last Sunday of the month")
    expect(text("0 0 * 1,4,7,10 *")).toBe("at 00:00 in January, April, July and October")
    expect(text("0 0 * 1-12 *")).toBe("at 00:00")
  })

  it("the Vixie note also when only day-of-week starts with *", () => {
    const e = Schedule.explain("0 16 1,15 * */3", "UTC")
    expect(e).toEqual({
      text: "at 16:00 on day 1 and 15 of the month, if it is also Sunday, Wednesday and Saturday",
      notes: [Schedule.VIXIE_NOTE],
    })
    const any = Schedule.explain("0 16 */1 * sat", "UTC")
    expect(any).toEqual({ text: "at 16:00 on Saturday", notes: [] })
  })
})

describe("cron forms read exactly, no more (SPEC §22.1)", () => {
  it("L-n with two digits; a weekday name before L; values listed out of order", () => {
    // 31 − 15 = 16 January, 28 − 15 = 13 February.
    expect(days("0 0 L-15 * *", 2)).toEqual(["2026-01-16", "2026-02-13"])
    expect(days("0 0 * * friL", 2)).toEqual(["2026-01-30", "2026-02-27"])
    expect(slots("30,0 * * * *", "2026-01-01T00:40:00Z", 2)).toEqual([
      "2026-01-01T01:00:00",
      "2026-01-01T01:30:00",
    ])
  })

  it("`?/2` in day-of-month starts with `?`: the Vixie rule reads it with the weekday", () => {
    // Odd days that are Saturdays: 3, 17 and 31 January 2026.
    expect(days("0 0 ?/2 * sat", 3)).toEqual(["2026-01-03", "2026-01-17", "2026-01-31"])
  })

  it("dayMatch either with one day field `*`: only the other field's days run", () => {
    expect(days("0 0 1 * *", 2, { dayMatch: "either" })).toEqual(["2026-02-01", "2026-03-01"])
    expect(days("0 0 * * sat", 2, { dayMatch: "either" })).toEqual(["2026-01-03", "2026-01-10"])
  })

  const refused: ReadonlyArray<readonly [string, string]> = [
    [
      "0 0 xL-3 * *",
      'its day-of-month field "xL-3" is not a day, a range, `L`, `L-n`, `nW` or `LW`',
    ],
    [
      "0 0 L-3x * *",
      'its day-of-month field "L-3x" is not a day, a range, `L`, `L-n`, `nW` or `LW`',
    ],
    [
      "0 0 x15W * *",
      'its day-of-month field "x15W" is not a day, a range, `L`, `L-n`, `nW` or `LW`',
    ],
    [
      "0 0 15Wx * *",
      'its day-of-month field "15Wx" is not a day, a range, `L`, `L-n`, `nW` or `LW`',
    ],
    [
      "0 0 * * 5#10",
      'its day-of-week field "5#10" has an occurrence after `#` that is not a whole number from 1 to 5',
    ],
    ["5#2 * * * *", 'its minute field "5#2" is not a number'],
    ["0 5L * * *", 'its hour field "5L" is not a number'],
    ["0 0 * 5L *", 'its month field "5L" is not a number or a name'],
  ]
  it.each(refused)("%s is refused", (expression, says) => {
    expect(message(expression)).toBe(
      `expression ${JSON.stringify(expression)} is not a valid cron expression: ${says}`,
    )
  })

  it("a missing time zone is an InvalidTimeZone, not the host's zone", () => {
    expect(Schedule.parseCron("0 9 * * *", undefined as never)).toMatchObject({
      _tag: "InvalidTimeZone",
      field: "timeZone",
      value: undefined,
    })
  })
})

describe("explain: a time of more than four combinations (SPEC §22.2)", () => {
  it("is said field by field", () => {
    const e = Schedule.explain("0,20,40 0,30 9 * * *", "UTC")
    expect("text" in e && e.text).toBe("every 20 seconds of every 30 minutes of hour 9")
  })
})

describe("the DST note of each previewed slot (SPEC §22.3, §22.4)", () => {
  const noted = (expression: string, timeZone: string, from: string, count: number) => {
    const r = Schedule.preview(Schedule.cron(expression, { timeZone }), {
      from: Date.parse(from),
      count,
    })
    if (!Array.isArray(r)) throw new Error(r.message)
    return r.map((s) => [new Date(s.slot).toISOString().slice(0, 19), s.dst])
  }
  const GAP = { kind: "gap", shiftedBy: 3_600_000 }

  it("New York's spring gap: 02:30 is shifted, 03:30 at the same instant exists and has none", () => {
    // 8 March 2026: 02:00 EST springs to 03:00 EDT at 07:00 UTC; 03:30 EDT is 07:30 UTC.
    expect(noted("30 2 * * *", "America/New_York", "2026-03-08T00:00:00Z", 1)).toEqual([
      ["2026-03-08T07:30:00", GAP],
    ])
    expect(noted("30 3 * * *", "America/New_York", "2026-03-08T00:00:00Z", 1)).toEqual([
      ["2026-03-08T07:30:00", undefined],
    ])
    expect(noted("30 2 * * *", "America/New_York", "2026-03-08T08:00:00Z", 1)).toEqual([
      ["2026-03-09T06:30:00", undefined],
    ])
  })

  it("New York's fall-back fold: the first occurrence, and the second only for every hour", () => {
    // 1 November 2026: 02:00 EDT falls back to 01:00 EST at 06:00 UTC; 01:30 is 05:30 and 06:30.
    expect(noted("30 1 * * *", "America/New_York", "2026-11-01T04:00:00Z", 2)).toEqual([
      ["2026-11-01T05:30:00", { kind: "fold", occurrence: "first" }],
      ["2026-11-02T06:30:00", undefined],
    ])
    expect(noted("30 * * * *", "America/New_York", "2026-11-01T04:00:00Z", 4)).toEqual([
      ["2026-11-01T04:30:00", undefined],
      ["2026-11-01T05:30:00", { kind: "fold", occurrence: "first" }],
      ["2026-11-01T06:30:00", { kind: "fold", occurrence: "second" }],
      ["2026-11-01T07:30:00", undefined],
    ])
  })

  it("the note reads the slot's month and day: Berlin's gap on 29 March, L-2 of March", () => {
    expect(noted("30 2 L-2 3 *", "Europe/Berlin", "2026-03-28T12:00:00Z", 1)).toEqual([
      ["2026-03-29T01:30:00", GAP],
    ])
  })

  it("an Effect Cron: a slot just after a gap that exists is not noted", () => {
    // Berlin, 29 March 2026: 03:00 CEST (01:00 UTC) exists; the three hours before were +1 h.
    const cron = Cron.parseUnsafe("0 3 * * *", "Europe/Berlin")
    expect(Schedule.dstNote(cron, Date.parse("2026-03-29T01:00:00Z"))).toBeUndefined()
    expect(Schedule.dstNote(cron, Date.parse("2026-03-29T12:00:00Z"))).toBeUndefined()
  })
})

describe("cron edges: a one-value range, the year's turn, L-31", () => {
  it("a range from a value to itself is that value", () => {
    expect(days("0 0 * * 5-5", 2)).toEqual(["2026-01-02", "2026-01-09"])
  })

  it("a daily slot crosses New Year's Eve, forwards and backwards", () => {
    expect(slots("0 12 * * *", "2026-12-31T13:00:00Z", 1)).toEqual(["2027-01-01T12:00:00"])
    const parsed = Schedule.parseCron("0 12 * * *", "UTC")
    if (parsed._tag !== "ParsedCron") throw new Error(parsed.message)
    const t = MissedRun.cron(parsed).atOrBefore(Date.parse("2027-01-01T06:00:00Z"))
    expect(t).toBe(Date.parse("2026-12-31T12:00:00Z"))
  })

  it("L-31 is refused with its reason", () => {
    expect(message("0 0 L-31 * *")).toBe(
      'expression "0 0 L-31 * *" is not a valid cron expression: its day-of-month field "L-31" counts back more than 30 days from the last',
    )
  })
})
