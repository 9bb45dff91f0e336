/**
 * `tickwork explain`, run in-process: the DST cases of SPEC §3 in Europe/Berlin and
 * America/New_York, the `--json` shape, the defaults, and each kind of bad input.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schedule } from "@tickwork/core"
import { Cause, Effect, Option } from "effect"
import { CliError } from "effect/cli"
import { TestClock } from "effect/testing"
import { Explain } from "../src/index.ts"
import { header, lines, type Outcome, tickwork } from "./support.ts"

const HOUR = 3_600_000

/** `explain <expression> --tz <zone> --count <n> --from <from>` */
const explain = (expression: string, timeZone: string, count: number, from: string) =>
  tickwork("explain", expression, "--tz", timeZone, "--count", String(count), "--from", from)

/** The core typed error a failed run carries as the cause of its `UserError`. */
const typedError = (outcome: Outcome): unknown => {
  expect(outcome.exit._tag).toBe("Failure")
  if (outcome.exit._tag !== "Failure") return undefined
  const error = Option.getOrUndefined(Cause.findErrorOption(outcome.exit.cause))
  expect(error).toBeInstanceOf(CliError.UserError)
  return (error as CliError.UserError).cause
}

describe("SPEC §3 DST in Europe/Berlin", () => {
  it.effect("2026-03-29 spring forward: 30 2 * * * runs at 03:30 local, shifted by the gap", () =>
    Effect.gen(function* () {
      const out = yield* explain("30 2 * * *", "Europe/Berlin", 3, "2026-03-28T00:00:00Z")
      expect(out.code).toBe(0)
      expect(lines(out)).toEqual([
        "2026-03-28T01:30:00Z  Sat 2026-03-28 02:30:00 +01:00",
        "2026-03-29T01:30:00Z  Sun 2026-03-29 03:30:00 +02:00  shifted +1h by the spring-forward gap",
        "2026-03-30T00:30:00Z  Mon 2026-03-30 02:30:00 +02:00",
      ])
    }),
  )

  it.effect("2026-10-25 fall back: 30 2 * * * runs once, at the first 02:30", () =>
    Effect.gen(function* () {
      const out = yield* explain("30 2 * * *", "Europe/Berlin", 3, "2026-10-24T00:00:00Z")
      expect(lines(out)).toEqual([
        "2026-10-24T00:30:00Z  Sat 2026-10-24 02:30:00 +02:00",
        "2026-10-25T00:30:00Z  Sun 2026-10-25 02:30:00 +02:00  first of the repeated hour",
        "2026-10-26T01:30:00Z  Mon 2026-10-26 02:30:00 +01:00",
      ])
      // The second 02:30 (01:30Z) is not a slot.
      expect(out.stdout).not.toContain("2026-10-25T01:30:00Z")
    }),
  )

  it.effect("2026-10-25 fall back: 0 * * * * keeps its hourly rhythm through both 02:00s", () =>
    Effect.gen(function* () {
      const out = yield* explain("0 * * * *", "Europe/Berlin", 4, "2026-10-24T23:30:00Z")
      expect(lines(out)).toEqual([
        "2026-10-25T00:00:00Z  Sun 2026-10-25 02:00:00 +02:00  first of the repeated hour",
        "2026-10-25T01:00:00Z  Sun 2026-10-25 02:00:00 +01:00  second of the repeated hour",
        "2026-10-25T02:00:00Z  Sun 2026-10-25 03:00:00 +01:00",
        "2026-10-25T03:00:00Z  Sun 2026-10-25 04:00:00 +01:00",
      ])
    }),
  )

  it.effect("equivalent hour fields (*, */1, 0-23) give the same slots", () =>
    Effect.gen(function* () {
      const outs = yield* Effect.forEach(["0 * * * *", "0 */1 * * *", "0 0-23 * * *"], (e) =>
        explain(e, "Europe/Berlin", 4, "2026-10-24T23:30:00Z"),
      )
      expect(outs.map((o) => o.stdout)).toEqual(outs.map(() => outs[0]?.stdout))
    }),
  )

  it.effect("2026-03-29 spring forward: 0 * * * * stays hourly in real time across the gap", () =>
    Effect.gen(function* () {
      const out = yield* tickwork(
        ...["explain", "0 * * * *", "--tz", "Europe/Berlin", "--count", "3"],
        ...["--from", "2026-03-28T23:30:00Z", "--json"],
      )
      const slots = JSON.parse(out.stdout) as Array<Explain.SlotJson>
      expect(slots.map((s) => s.local)).toEqual([
        "2026-03-29T01:00:00+01:00",
        "2026-03-29T03:00:00+02:00",
        "2026-03-29T04:00:00+02:00",
      ])
      expect(slots.map((s) => s.slot - (slots[0]?.slot ?? 0))).toEqual([0, HOUR, 2 * HOUR])
    }),
  )
})

describe("SPEC §3 DST in America/New_York", () => {
  it.effect("2026-03-08 spring forward: 30 2 * * * runs at 03:30 EDT", () =>
    Effect.gen(function* () {
      const out = yield* explain("30 2 * * *", "America/New_York", 2, "2026-03-07T12:00:00Z")
      expect(lines(out)).toEqual([
        "2026-03-08T07:30:00Z  Sun 2026-03-08 03:30:00 -04:00  shifted +1h by the spring-forward gap",
        "2026-03-09T06:30:00Z  Mon 2026-03-09 02:30:00 -04:00",
      ])
    }),
  )

  it.effect("2026-11-01 fall back: 30 1 * * * runs once, at the first 01:30 (EDT)", () =>
    Effect.gen(function* () {
      const out = yield* explain("30 1 * * *", "America/New_York", 2, "2026-10-31T12:00:00Z")
      expect(lines(out)).toEqual([
        "2026-11-01T05:30:00Z  Sun 2026-11-01 01:30:00 -04:00  first of the repeated hour",
        "2026-11-02T06:30:00Z  Mon 2026-11-02 01:30:00 -05:00",
      ])
    }),
  )

  it.effect("2026-11-01 fall back: */30 * * * * runs through both 01:00–02:00 hours", () =>
    Effect.gen(function* () {
      const out = yield* explain("*/30 * * * *", "America/New_York", 6, "2026-11-01T04:40:00Z")
      expect(lines(out)).toEqual([
        "2026-11-01T05:00:00Z  Sun 2026-11-01 01:00:00 -04:00  first of the repeated hour",
        "2026-11-01T05:30:00Z  Sun 2026-11-01 01:30:00 -04:00  first of the repeated hour",
        "2026-11-01T06:00:00Z  Sun 2026-11-01 01:00:00 -05:00  second of the repeated hour",
        "2026-11-01T06:30:00Z  Sun 2026-11-01 01:30:00 -05:00  second of the repeated hour",
        "2026-11-01T07:00:00Z  Sun 2026-11-01 02:00:00 -05:00",
        "2026-11-01T07:30:00Z  Sun 2026-11-01 02:30:00 -05:00",
      ])
    }),
  )
})

describe("--json", () => {
  it.effect("prints an array of { slot, utc, local, timeZone, dst, note }", () =>
    Effect.gen(function* () {
      const out = yield* tickwork(
        ...["explain", "30 2 * * *", "--tz", "Europe/Berlin", "--count", "2"],
        ...["--from", "2026-03-28T12:00:00Z", "--json"],
      )
      expect(out.code).toBe(0)
      expect(JSON.parse(out.stdout)).toEqual([
        {
          slot: Date.parse("2026-03-29T01:30:00Z"),
          utc: "2026-03-29T01:30:00.000Z",
          local: "2026-03-29T03:30:00+02:00",
          timeZone: "Europe/Berlin",
          dst: { kind: "gap", shiftedBy: HOUR },
          note: "shifted +1h by the spring-forward gap",
        },
        {
          slot: Date.parse("2026-03-30T00:30:00Z"),
          utc: "2026-03-30T00:30:00.000Z",
          local: "2026-03-30T02:30:00+02:00",
          timeZone: "Europe/Berlin",
          dst: null,
          note: null,
        },
      ])
    }),
  )

  it.effect("marks both occurrences of a repeated hour", () =>
    Effect.gen(function* () {
      const out = yield* tickwork(
        ...["explain", "0 * * * *", "--tz", "Europe/Berlin", "--count", "2"],
        ...["--from", "2026-10-24T23:30:00Z", "--json"],
      )
      const slots = JSON.parse(out.stdout) as Array<Explain.SlotJson>
      expect(slots.map((s) => s.dst)).toEqual([
        { kind: "fold", occurrence: "first" },
        { kind: "fold", occurrence: "second" },
      ])
    }),
  )
})

describe("defaults", () => {
  it.effect("UTC, 10 slots, from now as Effect's Clock tells it", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2026-01-01T12:00:00Z"))
      const out = yield* tickwork("explain", "0 0 * * *")
      expect(out.code).toBe(0)
      expect(lines(out)).toHaveLength(10)
      expect(lines(out)[0]).toBe("2026-01-02T00:00:00Z  Fri 2026-01-02 00:00:00 +00:00")
      expect(lines(out)[9]).toBe("2026-01-11T00:00:00Z  Sun 2026-01-11 00:00:00 +00:00")
    }),
  )

  it.effect("6-field expressions have seconds first", () =>
    Effect.gen(function* () {
      const out = yield* explain("15 30 2 * * *", "Europe/Berlin", 1, "2026-03-28T12:00:00Z")
      expect(lines(out)).toEqual([
        "2026-03-29T01:30:15Z  Sun 2026-03-29 03:30:15 +02:00  shifted +1h by the spring-forward gap",
      ])
    }),
  )
})

describe("bad input: the typed error's message on stderr, exit code 1", () => {
  const rejects = (
    args: ReadonlyArray<string>,
    expected: { readonly _tag: string; readonly field: string; readonly value: string },
    message: string,
  ) =>
    Effect.gen(function* () {
      const out = yield* tickwork("explain", ...args)
      expect(out.code).toBe(1)
      expect(out.stdout).toBe("")
      const error = typedError(out) as { readonly message: string }
      expect(error).toMatchObject(expected)
      // The whole message, which names the field and the value, is what the user sees.
      expect(error.message).toContain(message)
      expect(out.stderr).toBe(`\nERROR\n  ${error.message}`)
    })

  it.effect("an invalid expression", () =>
    rejects(
      ["61 * * * *"],
      { _tag: "InvalidCronExpression", field: "expression", value: "61 * * * *" },
      'expression "61 * * * *" is not a valid cron expression',
    ),
  )

  it.effect("an expression that never matches", () =>
    rejects(
      ["0 0 30 2 *"],
      { _tag: "InvalidCronExpression", field: "expression", value: "0 0 30 2 *" },
      'expression "0 0 30 2 *" never matches a date',
    ),
  )

  it.effect("an unknown time zone", () =>
    rejects(
      ["0 * * * *", "--tz", "Mars/Olympus"],
      { _tag: "InvalidTimeZone", field: "timeZone", value: "Mars/Olympus" },
      'timeZone must be an IANA time zone name such as "Europe/Berlin", got "Mars/Olympus"',
    ),
  )

  it.effect.each(["0", "-1", "1.5", "ten", "", "10001", "99999999999999999999"])(
    "a count that is not a whole number from 1 to 10000: %j",
    (count) =>
      rejects(
        ["0 * * * *", "--count", count],
        { _tag: "InvalidOption", field: "count", value: count },
        `count must be a whole number from 1 to 10000, got ${JSON.stringify(count)}`,
      ),
  )

  it.effect.each([
    "yesterday",
    "2026-03-01T00:00", // no zone: it would depend on the machine's zone
    "2026-03-01",
    "2026-02-30T00:00:00Z",
    "2026-03-01T24:00:00Z",
    "2026-03-01T00:00:00+25:00",
    "1774742400000",
  ])("a --from that is not an ISO 8601 instant: %j", (from) =>
    rejects(
      ["0 * * * *", "--from", from],
      { _tag: "InvalidTime", field: "from", value: from },
      `from must be an ISO 8601 instant with "Z" or an offset, such as "2026-03-29T00:00:00Z", got ${JSON.stringify(from)}`,
    ),
  )

  it.effect("a missing expression prints help and the CLI's error", () =>
    Effect.gen(function* () {
      const out = yield* tickwork("explain", "--tz", "Europe/Berlin")
      expect(out.code).toBe(1)
      expect(out.stderr).toContain("Missing required argument: expression")
      expect(out.stdout).toContain("USAGE\n  tickwork explain [flags] <expression>")
    }),
  )
})

describe("parsers", () => {
  it("parseFrom reads Z, offsets and fractions of a second", () => {
    const t = Date.parse("2026-03-29T00:00:00Z")
    expect(Explain.parseFrom("2026-03-29T00:00:00Z")).toBe(t)
    expect(Explain.parseFrom("2026-03-29T00:00Z")).toBe(t)
    expect(Explain.parseFrom("2026-03-29t00:00:00z")).toBe(t)
    expect(Explain.parseFrom("2026-03-29T01:00:00+01:00")).toBe(t)
    expect(Explain.parseFrom("2026-03-28T19:15:00-04:45")).toBe(t)
    expect(Explain.parseFrom("2026-03-29T00:00:00.5Z")).toBe(t + 500)
    expect(Explain.parseFrom("2026-03-29T00:00:00.123Z")).toBe(t + 123)
  })

  it("parseCount accepts 1 to MAX_COUNT", () => {
    expect(Explain.parseCount("1")).toBe(1)
    expect(Explain.parseCount("010")).toBe(10)
    expect(Explain.parseCount(String(Explain.MAX_COUNT))).toBe(Explain.MAX_COUNT)
    expect(Explain.parseCount(String(Explain.MAX_COUNT + 1))).toMatchObject({
      _tag: "InvalidOption",
    })
  })

  it("dstText names gaps of any length", () => {
    expect(Explain.dstText({ kind: "gap", shiftedBy: HOUR })).toBe(
      "shifted +1h by the spring-forward gap",
    )
    expect(Explain.dstText({ kind: "gap", shiftedBy: HOUR / 2 })).toBe(
      "shifted +30m by the spring-forward gap",
    )
    expect(Explain.dstText({ kind: "gap", shiftedBy: HOUR + HOUR / 2 })).toBe(
      "shifted +1h30m by the spring-forward gap",
    )
    expect(Explain.dstText({ kind: "fold", occurrence: "second" })).toBe(
      "second of the repeated hour",
    )
  })

  it("a half-hour DST change (Australia/Lord_Howe) shifts by 30 minutes", () => {
    const slots = Explain.explain({
      expression: "15 2 * * *",
      timeZone: "Australia/Lord_Howe",
      from: Date.parse("2026-10-03T00:00:00Z"),
      count: 1,
    })
    expect(Array.isArray(slots) && slots.map(Explain.toLine)).toEqual([
      "2026-10-03T15:45:00Z  Sun 2026-10-04 02:45:00 +11:00  shifted +30m by the spring-forward gap",
    ])
  })
})

describe("issue 23: the expression in words", () => {
  it.effect("each new form is shown with its meaning", () =>
    Effect.gen(function* () {
      const cases: Array<[string, string]> = [
        ["0 9 * * 5L", "# at 09:00 on the last Friday of the month"],
        ["0 9 ? * 5#3", "# at 09:00 on the third Friday of the month"],
        ["0 0 L * *", "# at 00:00 on the last day of the month"],
        ["0 0 L-2 * *", "# at 00:00 on the day 2 days before the last day of the month"],
        ["0 0 15W * *", "# at 00:00 on the weekday nearest day 15 of the month"],
        ["0 0 LW * *", "# at 00:00 on the last weekday of the month"],
        ["@monthly", "# at 00:00 on day 1 of the month"],
        ["@hourly", "# at minute 0 of every hour"],
      ]
      for (const [expression, words] of cases) {
        const out = yield* explain(expression, "Europe/Berlin", 2, "2026-01-01T00:00:00Z")
        expect(out.code, expression).toBe(0)
        expect(header(out), expression).toEqual([words])
        expect(lines(out), expression).toHaveLength(2)
      }
    }),
  )

  it.effect("the Vixie rule gets a note; its slots are the days matching both fields", () =>
    Effect.gen(function* () {
      const out = yield* explain("0 16 */2 * sat", "UTC", 2, "2023-05-02T00:00:00Z")
      expect(header(out)).toEqual([
        "# at 16:00 on day 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29 and 31 of the month, if it is also Saturday",
        `# note: ${Schedule.VIXIE_NOTE}`,
      ])
      expect(lines(out).map((l) => l.slice(0, 10))).toEqual(["2023-05-13", "2023-05-27"])
    }),
  )

  it.effect("--day-match either: days matching either field, said in words, no Vixie note", () =>
    Effect.gen(function* () {
      const out = yield* tickwork(
        ...["explain", "0 16 */2 * sat", "--tz", "UTC", "--count", "4"],
        ...["--from", "2023-05-02T00:00:00Z", "--day-match", "either"],
      )
      expect(out.code).toBe(0)
      expect(header(out)).toEqual([
        "# at 16:00 on day 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29 and 31 of the month, or on Saturday",
      ])
      expect(lines(out).map((l) => l.slice(0, 10))).toEqual([
        "2023-05-03",
        "2023-05-05",
        "2023-05-06",
        "2023-05-07",
      ])
    }),
  )

  it.effect("a --day-match that is neither vixie nor either is a typed error", () =>
    Effect.gen(function* () {
      const out = yield* tickwork("explain", "0 16 */2 * sat", "--day-match", "both")
      expect(out.code).toBe(1)
      expect(out.stdout).toBe("")
      expect(typedError(out)).toMatchObject({
        _tag: "InvalidOption",
        field: "dayMatch",
        value: "both",
      })
      expect(out.stderr).toContain('dayMatch must be "vixie" or "either", got "both"')
    }),
  )

  it.effect("--json stays a bare array of slots", () =>
    Effect.gen(function* () {
      const out = yield* tickwork(
        "explain",
        "0 9 * * 5L",
        "--count",
        "1",
        "--from",
        "2026-01-01T00:00:00Z",
        "--json",
      )
      expect(JSON.parse(out.stdout)).toHaveLength(1)
    }),
  )
})
