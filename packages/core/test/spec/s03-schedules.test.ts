/**
 * SPEC §3 Kinds of schedule and missed-run policies, with SPEC's own examples.
 */
import { describe, expect, it } from "vitest"
import { MissedRun, Schedule } from "../../src/index.ts"
import { err, noop, setup, slots } from "../support.ts"

const MIN = 60_000
const HOUR = 60 * MIN

/** A job that moves the manual clock by `ms`: a run that takes that long. */
const taking =
  (clock: { advance: (ms: number) => void }, ms: number): (() => void) =>
  () =>
    clock.advance(ms)

describe("§3 first slots and next slots per kind", () => {
  it("once (after delay d): first slot now + d, no next slot", () => {
    const { driver } = setup(100)
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(25) })
    const records = driver.tick(1000)
    expect(records.map((r) => [r.scheduledFor, r.continuation, r.nextSlot])).toEqual([
      [125, "final", undefined],
    ])
    expect(driver.status(id)).toBe("done")
  })

  it("at (absolute t): first slot t, no next slot", () => {
    const { driver } = setup(100)
    driver.scheduleUnsafe({ job: noop, schedule: Schedule.at(640) })
    expect(driver.tick(1000).map((r) => [r.scheduledFor, r.state])).toEqual([[640, "done"]])
  })

  it("fixed rate: first slot now + delay, then s + period on the grid, whatever the run took", () => {
    const { clock, driver } = setup(100)
    driver.scheduleUnsafe({
      job: taking(clock, 3),
      schedule: Schedule.fixedRate(10, { delay: 5 }),
    })
    const records = driver.tick(150)
    expect(records.map((r) => r.scheduledFor)).toEqual([105, 115, 125, 135, 145])
    expect(records.map((r) => r.finishedAt - r.startedAt)).toEqual([3, 3, 3, 3, 3])
    expect(records.every((r) => r.nextSlot === r.scheduledFor + 10)).toBe(true)
  })

  it("fixed delay: first slot now + delay, then f + period (it drifts with the run time)", () => {
    const { clock, driver } = setup(100)
    driver.scheduleUnsafe({
      job: taking(clock, 3),
      schedule: Schedule.fixedDelay(10, { delay: 5 }),
    })
    const records = driver.tick(150)
    expect(records.map((r) => r.scheduledFor)).toEqual([105, 118, 131, 144])
    expect(records.every((r) => r.nextSlot === r.finishedAt + 10)).toBe(true)
  })

  it("custom: first slot next(undefined, now), then next(s, f) until it says no more", () => {
    const { clock, driver } = setup(100)
    const calls: Array<[number | undefined, number]> = []
    const id = driver.scheduleUnsafe({
      job: taking(clock, 2),
      // Fibonacci-ish gaps, three runs.
      schedule: Schedule.custom((s, f) => {
        calls.push([s, f])
        if (s === undefined) return f + 1
        return s < 120 ? s + (s - 90) : undefined
      }),
    })
    const records = driver.tick(1000)
    expect(records.map((r) => r.scheduledFor)).toEqual([101, 112, 134])
    expect(calls).toEqual([
      [undefined, 100],
      [101, 103],
      [112, 114],
      [134, 136],
    ])
    expect(driver.status(id)).toBe("done")
  })

  it("period must be a positive integer: 0, negative and fractional periods are rejected", () => {
    const { driver } = setup()
    for (const period of [0, -10, 1.5, Number.NaN]) {
      for (const schedule of [Schedule.fixedRate(period), Schedule.fixedDelay(period)]) {
        const e = err(driver.schedule({ job: noop, schedule }))
        expect(e).toMatchObject({ _tag: "InvalidPeriod", field: "period" })
      }
    }
    expect(driver.stats().accepted).toBe(0)
  })
})

describe("§3 missed-run policy (fixed rate)", () => {
  it("catch-up is the default: SPEC's example, clock moved 9 → 35 then runDue runs 10, 20, 30 at 35", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({ id: "grid", job: noop, schedule: Schedule.fixedRate(10) })
    expect(driver.runDue()).toBe(1) // slot 0 at 0
    clock.set(9)
    expect(driver.runDue()).toBe(0)
    clock.set(35)
    const seen: Array<[number, number]> = []
    const onRun = driver.tick(35) // tick(now) = runDue with records: the clock does not move
    seen.push(...onRun.map((r): [number, number] => [r.scheduledFor, r.startedAt]))
    expect(seen).toEqual([
      [10, 35],
      [20, 35],
      [30, 35],
    ])
    expect(onRun.every((r) => r.dropped === undefined)).toBe(true)
    expect(driver.info("grid")?.scheduledFor).toBe(40)
  })

  it("catch-up through runDue returns the count of the back-to-back runs", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(10) })
    driver.runDue()
    clock.set(35)
    expect(driver.runDue()).toBe(3)
    expect(driver.nextSlot()).toBe(40)
  })

  it("coalesce: one run now for all missed slots, as the latest one, then the grid from there", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({
      id: "c",
      job: noop,
      schedule: Schedule.fixedRate(10),
      missedRuns: "coalesce",
    })
    driver.runDue()
    clock.set(35)
    const records = driver.tick(35)
    expect(records.map((r) => [r.scheduledFor, r.startedAt])).toEqual([[30, 35]])
    // Nothing is lost silently: the slots the run stands for are on its record.
    expect(records[0]?.merged).toEqual({ first: 10, last: 20, count: 2, exact: true })
    expect(driver.info("c")?.scheduledFor).toBe(40)
  })

  it("coalesce: a slot-0 run that ended at 35 merges 10 and 20 into the run of 30", () => {
    const { clock, driver } = setup(0)
    let first = true
    driver.scheduleUnsafe({
      job: () => {
        if (first) clock.advance(35)
        first = false
      },
      schedule: Schedule.fixedRate(10),
      missedRuns: "coalesce",
    })
    const records = driver.tick(35)
    expect(records.map((r) => [r.scheduledFor, r.startedAt])).toEqual([
      [0, 0],
      [30, 35],
    ])
    expect(records[0]?.nextSlot).toBe(30)
    expect(records[0]?.dropped).toEqual({ first: 10, last: 20, count: 2, exact: true })
    expect(records[1]?.nextSlot).toBe(40)
  })

  it("coalesce: a task that never ran before the clock jumped past several slots runs once", () => {
    // Reading: slots 0..30 all passed before anything ran; "run once now for all missed slots"
    // means one run, as 30, not a late run of 0 followed by a coalesced one.
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(10), missedRuns: "coalesce" })
    clock.set(35)
    const records = driver.tick(35)
    expect(records.map((r) => [r.scheduledFor, r.startedAt, r.nextSlot])).toEqual([[30, 35, 40]])
    expect(records[0]?.merged).toEqual({ first: 0, last: 20, count: 3, exact: true })
  })

  it("skip: due 0, period 10, run finished at 35 → next slot 40", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(10), missedRuns: "skip" })
    clock.set(35)
    const [r] = driver.tick(35)
    expect(r).toMatchObject({ scheduledFor: 0, startedAt: 35, finishedAt: 35, nextSlot: 40 })
    expect(r?.dropped).toEqual({ first: 10, last: 30, count: 3, exact: true })
  })

  it("skip: a run of slot 0 that finished at 20 → next slot 30 (the job itself took 20)", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({
      job: taking(clock, 20),
      schedule: Schedule.fixedRate(10),
      missedRuns: "skip",
    })
    const [r] = driver.tick(0)
    expect(r).toMatchObject({ scheduledFor: 0, startedAt: 0, finishedAt: 20, nextSlot: 30 })
  })

  it("a zero-length run at its own slot misses nothing, under every policy", () => {
    for (const missedRuns of MissedRun.policies) {
      const { driver } = setup(0)
      driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(10), missedRuns })
      const records = driver.tick(100)
      expect(records.map((r) => r.scheduledFor)).toEqual([
        0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100,
      ])
      expect(records.every((r) => r.dropped === undefined && r.startedAt === r.scheduledFor)).toBe(
        true,
      )
    }
  })

  it("a run that overruns several periods: catch-up runs every missed slot, coalesce one, skip none", () => {
    const run = (missedRuns: MissedRun.MissedRunPolicy) => {
      const { clock, driver } = setup(0)
      let first = true
      driver.scheduleUnsafe({
        job: () => {
          if (first) clock.advance(35)
          first = false
        },
        schedule: Schedule.fixedRate(10),
        missedRuns,
      })
      return driver.tick(60).map((r) => `${r.scheduledFor}@${r.startedAt}`)
    }
    expect(run("catch-up")).toEqual(["0@0", "10@35", "20@35", "30@35", "40@40", "50@50", "60@60"])
    expect(run("coalesce")).toEqual(["0@0", "30@35", "40@40", "50@50", "60@60"])
    expect(run("skip")).toEqual(["0@0", "40@40", "50@50", "60@60"])
  })
})

describe("§3 cron", () => {
  const at = (iso: string) => Date.parse(iso)
  /** "HH:MM weekday" of an instant in a zone, by the platform's own tz database. */
  const local = (t: number, timeZone: string) =>
    new Intl.DateTimeFormat("en-US", {
      timeZone,
      hour: "2-digit",
      minute: "2-digit",
      weekday: "short",
      day: "2-digit",
      hourCycle: "h23",
    }).format(t)

  it("the first slot is the first match strictly after now", () => {
    const nine = at("2026-01-05T09:00:00Z") // a Monday
    for (const [now, first] of [
      [nine - 1, nine],
      [nine, nine + 86_400_000],
      [nine + 1, nine + 86_400_000],
    ] as const) {
      const { driver } = setup(now)
      const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.cron("0 9 * * *") })
      expect(driver.info(id)?.scheduledFor).toBe(first)
    }
  })

  it("0 9 * * MON-FRI in America/New_York stays at 09:00 local across the 2026-03-08 DST change", () => {
    const zone = "America/New_York"
    const { driver } = setup(at("2026-03-02T00:00:00Z"))
    driver.scheduleUnsafe({
      job: noop,
      schedule: Schedule.cron("0 9 * * MON-FRI", { timeZone: zone }),
    })
    const records = driver.tick(at("2026-03-14T00:00:00Z"))
    expect(records).toHaveLength(10) // two working weeks
    for (const r of records)
      expect(local(r.scheduledFor, zone)).toMatch(/^\d\d (Mon|Tue|Wed|Thu|Fri), 09:00$/)
    // 09:00 EST is 14:00Z before the change; 09:00 EDT is 13:00Z after it.
    expect(records[4]?.scheduledFor).toBe(at("2026-03-06T14:00:00Z"))
    expect(records[5]?.scheduledFor).toBe(at("2026-03-09T13:00:00Z"))
  })

  it("a 02:30 job on the spring-forward day runs once, right after the gap (03:30 EDT)", () => {
    // On 2026-03-08 New York jumps from 02:00 EST to 03:00 EDT: 02:30 does not exist. A demanding
    // user wants the day's run neither skipped nor doubled. The wall time is resolved like
    // Temporal's "compatible" disambiguation: moved forward by the length of the gap.
    const zone = "America/New_York"
    const { driver } = setup(at("2026-03-06T12:00:00Z"))
    driver.scheduleUnsafe({ job: noop, schedule: Schedule.cron("30 2 * * *", { timeZone: zone }) })
    const slotsSeen = driver.tick(at("2026-03-10T12:00:00Z")).map((r) => r.scheduledFor)
    expect(slotsSeen).toEqual([
      at("2026-03-07T07:30:00Z"), // 02:30 EST
      at("2026-03-08T07:30:00Z"), // 03:30 EDT, the only run on the 8th
      at("2026-03-09T06:30:00Z"), // 02:30 EDT
      at("2026-03-10T06:30:00Z"),
    ])
    expect(local(slotsSeen[1] as number, zone)).toBe("08 Sun, 03:30")
  })

  it("a 01:30 job on the fall-back day runs once, at the first 01:30 (EDT)", () => {
    const zone = "America/New_York"
    const { driver } = setup(at("2026-10-31T12:00:00Z"))
    driver.scheduleUnsafe({ job: noop, schedule: Schedule.cron("30 1 * * *", { timeZone: zone }) })
    expect(driver.tick(at("2026-11-02T12:00:00Z")).map((r) => r.scheduledFor)).toEqual([
      at("2026-11-01T05:30:00Z"),
      at("2026-11-02T06:30:00Z"),
    ])
  })

  it("an hourly cron keeps firing every real hour through the fall-back hour", () => {
    const zone = "America/New_York"
    const { driver } = setup(at("2026-11-01T03:30:00Z"))
    driver.scheduleUnsafe({ job: noop, schedule: Schedule.cron("0 * * * *", { timeZone: zone }) })
    const seen = driver.tick(at("2026-11-01T08:30:00Z")).map((r) => r.scheduledFor)
    expect(seen).toEqual([4, 5, 6, 7, 8].map((h) => at(`2026-11-01T0${h}:00:00Z`)))
  })

  // Every spelling of "every hour" is the same set of hours, so the fall-back rule must give
  // them the same slots: the rule follows the matching hours, not the text of the hour field.
  describe.each([
    {
      // 01:00 local repeats: 01:00 EDT (05:00Z), then 01:00 EST (06:00Z).
      zone: "America/New_York",
      from: "2026-11-01T03:30:00Z",
      until: "2026-11-01T08:30:00Z",
      hourly: ["04", "05", "06", "07", "08"].map((h) => `2026-11-01T${h}:00:00Z`),
      fixed: "0 1 * * *",
      once: "2026-11-01T05:00:00Z",
    },
    {
      // 02:00 local repeats: 02:00 CEST (00:00Z), then 02:00 CET (01:00Z).
      zone: "Europe/Berlin",
      from: "2026-10-24T22:30:00Z",
      until: "2026-10-25T03:30:00Z",
      hourly: [
        "2026-10-24T23:00:00Z",
        ...["00", "01", "02", "03"].map((h) => `2026-10-25T${h}:00:00Z`),
      ],
      fixed: "0 2 * * *",
      once: "2026-10-25T00:00:00Z",
    },
  ])("through the fall-back day in $zone", ({ zone, from, until, hourly, fixed, once }) => {
    const slotsOf = (expression: string) => {
      const { driver } = setup(at(from))
      driver.scheduleUnsafe({ job: noop, schedule: Schedule.cron(expression, { timeZone: zone }) })
      return driver.tick(at(until)).map((r) => r.scheduledFor)
    }

    it("equivalent every-hour expressions give the same slots, both occurrences of the hour", () => {
      for (const expression of [
        "0 * * * *",
        "0 */1 * * *",
        "0 0-23 * * *",
        "0 0-12,13-23 * * *",
        "0 0 0-23 * * *",
      ]) {
        expect(slotsOf(expression), expression).toEqual(hourly.map(at))
      }
    })

    it("a fixed hour in the repeated hour still runs once, at its first occurrence", () => {
      expect(slotsOf(fixed)).toEqual([at(once)])
    })
  })

  it("an invalid expression and an invalid zone are different errors", () => {
    const { driver } = setup()
    expect(
      err(driver.schedule({ job: noop, schedule: Schedule.cron("0 9 * * FUNDAY") })),
    ).toMatchObject({ _tag: "InvalidCronExpression", field: "expression", value: "0 9 * * FUNDAY" })
    expect(
      err(
        driver.schedule({
          job: noop,
          schedule: Schedule.cron("0 9 * * *", { timeZone: "Atlantis/Capital" }),
        }),
      ),
    ).toMatchObject({ _tag: "InvalidTimeZone", field: "timeZone", value: "Atlantis/Capital" })
  })

  it("supports a seconds field (six fields)", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({ job: noop, schedule: Schedule.cron("*/15 * * * * *") })
    expect(driver.tick(60_000).map((r) => r.scheduledFor)).toEqual([15_000, 30_000, 45_000, 60_000])
  })

  // Reading: SPEC's table gives cron's next slot as "first match after max(s, f)", and its
  // missed-run paragraph applies the policies to cron as well. Both hold if the table describes
  // the case where no match was missed; when matches passed during a run, the policy decides
  // (catch-up runs them, so the next slot can be <= f).
  it("the next slot is the first match after max(s, f) when nothing is missed", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({ job: taking(clock, 20 * 1000), schedule: Schedule.cron("* * * * *") })
    const records = driver.tick(3 * MIN)
    expect(records.map((r) => r.scheduledFor)).toEqual([MIN, 2 * MIN, 3 * MIN])
    expect(records.map((r) => r.nextSlot)).toEqual([2 * MIN, 3 * MIN, 4 * MIN])
  })

  it("missed matches follow the policy: catch-up runs them, coalesce once as the latest, skip only the late one", () => {
    // skip, like Tokio's MissedTickBehavior::Skip: the pending match that became late still runs
    // (once, late); the matches after it that also passed are dropped.
    // Hourly; the clock is moved from the first run at 01:00 to 04:30 before running due work.
    const run = (missedRuns: MissedRun.MissedRunPolicy) => {
      const { clock, driver } = setup(0)
      driver.scheduleUnsafe({ job: noop, schedule: Schedule.cron("0 * * * *"), missedRuns })
      driver.runUntil(HOUR)
      clock.set(4.5 * HOUR)
      const records = driver.tick(4.5 * HOUR)
      return {
        runs: records.map((r) => r.scheduledFor / HOUR),
        next: (driver.nextSlot() ?? 0) / HOUR,
      }
    }
    expect(run("catch-up")).toEqual({ runs: [2, 3, 4], next: 5 })
    expect(run("coalesce")).toEqual({ runs: [4], next: 5 })
    expect(run("skip")).toEqual({ runs: [2], next: 5 })
  })

  it("skip drops the matches missed while a long run was going on", () => {
    // A run of 01:00 that takes 2.5 hours: matches 02:00, 03:00 pass during it.
    const run = (missedRuns: MissedRun.MissedRunPolicy) => {
      const { clock, driver } = setup(0)
      let first = true
      driver.scheduleUnsafe({
        id: "long",
        job: () => {
          if (first) clock.advance(2.5 * HOUR)
          first = false
        },
        schedule: Schedule.cron("0 * * * *"),
        missedRuns,
      })
      return slots(driver.tick(5 * HOUR)).map((s) => Number(s.split("@")[1]) / HOUR)
    }
    expect(run("catch-up")).toEqual([1, 2, 3, 4, 5])
    expect(run("coalesce")).toEqual([1, 3, 4, 5])
    expect(run("skip")).toEqual([1, 4, 5])
  })
})

describe("§3 coalesce and §4 order together", () => {
  it("a late coalescing slot moved to the latest passed slot does not jump ahead of earlier runs", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({
      id: "c",
      job: noop,
      schedule: Schedule.fixedRate(10, { delay: 10 }),
      missedRuns: "coalesce",
    })
    driver.scheduleUnsafe({ id: "x", job: noop, schedule: Schedule.at(25) })
    clock.set(35)
    expect(slots(driver.tick(35))).toEqual(["x@25", "c@30"])
  })

  it("a late coalescing slot merged twice before it runs records every merged slot", () => {
    // b holds the clock from 0 to 35: c's slot 0 is late and moves to 30 (0, 10, 20 merged). d's
    // slot 25 is earlier, so it runs first and holds the clock to 62: c's slot 30 is late again
    // and moves to 60 (30, 40, 50 merged). The one run of c stands for all six, 0 to 50.
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({
      id: "b",
      job: taking(clock, 35),
      schedule: Schedule.once(0),
      priority: "high",
    })
    driver.scheduleUnsafe({
      id: "c",
      job: noop,
      schedule: Schedule.fixedRate(10),
      missedRuns: "coalesce",
    })
    driver.scheduleUnsafe({ id: "d", job: taking(clock, 27), schedule: Schedule.once(25) })
    const records = driver.tick(62)
    expect(slots(records)).toEqual(["b@0", "d@25", "c@60"])
    const c = records.find((r) => r.id === "c")
    expect(c).toMatchObject({ scheduledFor: 60, startedAt: 62 })
    expect(c?.merged).toEqual({ first: 0, last: 50, count: 6, exact: true })
  })
})
