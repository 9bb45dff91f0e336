/**
 * SPEC §15 preview, explain and simulate: pure and deterministic looks ahead.
 */
import { describe, expect, it } from "vitest"
import { Driver, Errors, Schedule, Task } from "../../src/index.ts"
import { failing, noop, setup } from "../support.ts"

const iso = (ms: number) => new Date(ms).toISOString()

describe("§15 Schedule.preview(schedule, { from, count })", () => {
  it("lists the next slots of each kind, as if each run took no time", () => {
    const slots = (s: Schedule.Schedule, count = 3) => {
      const r = Schedule.preview(s, { from: 1000, count })
      if (!Array.isArray(r)) throw r
      return r.map((p) => p.slot)
    }
    expect(slots(Schedule.once(5))).toEqual([1005])
    expect(slots(Schedule.at(10))).toEqual([10])
    expect(slots(Schedule.fixedRate(10, { delay: 3 }))).toEqual([1003, 1013, 1023])
    expect(slots(Schedule.fixedDelay(7))).toEqual([1000, 1007, 1014])
    expect(
      slots(Schedule.custom((s, f) => (s === undefined ? f + 1 : s < 1500 ? s * 2 : undefined))),
    ).toEqual([1001, 2002])
    expect(slots(Schedule.cron("*/2 * * * * *"), 2)).toEqual([2000, 4000])
    expect(slots(Schedule.fixedRate(10), 0)).toEqual([])
  })

  it("a match in a spring-forward gap is shifted by the gap's length, and says so", () => {
    // 2026-03-08: New York skips 02:00–03:00. 02:30 runs at 03:30 EDT (07:30Z).
    const r = Schedule.preview(Schedule.cron("30 2 * * *", { timeZone: "America/New_York" }), {
      from: Date.parse("2026-03-07T12:00:00Z"),
      count: 3,
    })
    if (!Array.isArray(r)) throw r
    expect(r.map((p) => [iso(p.slot), p.dst])).toEqual([
      ["2026-03-08T07:30:00.000Z", { kind: "gap", shiftedBy: 3_600_000 }],
      ["2026-03-09T06:30:00.000Z", undefined],
      ["2026-03-10T06:30:00.000Z", undefined],
    ])
  })

  it("a fixed-hour match in a fall-back fold runs once, at the first occurrence", () => {
    // 2026-11-01: New York repeats 01:00–02:00 (EDT then EST).
    const r = Schedule.preview(Schedule.cron("30 1 * * *", { timeZone: "America/New_York" }), {
      from: Date.parse("2026-10-31T12:00:00Z"),
      count: 2,
    })
    if (!Array.isArray(r)) throw r
    expect(r.map((p) => [iso(p.slot), p.dst])).toEqual([
      ["2026-11-01T05:30:00.000Z", { kind: "fold", occurrence: "first" }],
      ["2026-11-02T06:30:00.000Z", undefined],
    ])
  })

  it("an hourly expression keeps its rhythm through both occurrences of the fold", () => {
    const r = Schedule.preview(Schedule.cron("30 * * * *", { timeZone: "America/New_York" }), {
      from: Date.parse("2026-11-01T04:00:00Z"),
      count: 4,
    })
    if (!Array.isArray(r)) throw r
    expect(r.map((p) => [iso(p.slot), p.dst?.kind === "fold" ? p.dst.occurrence : "-"])).toEqual([
      ["2026-11-01T04:30:00.000Z", "-"], // 00:30 EDT
      ["2026-11-01T05:30:00.000Z", "first"], // 01:30 EDT
      ["2026-11-01T06:30:00.000Z", "second"], // 01:30 EST
      ["2026-11-01T07:30:00.000Z", "-"], // 02:30 EST
    ])
  })

  it("is pure: the same call gives the same slots; bad input is a typed error", () => {
    const s = Schedule.cron("0 9 * * MON-FRI", { timeZone: "Europe/Berlin" })
    const a = Schedule.preview(s, { from: 0, count: 5 })
    expect(Schedule.preview(s, { from: 0, count: 5 })).toEqual(a)
    expect(Schedule.preview(s, { from: 0, count: -1 })).toBeInstanceOf(Errors.InvalidOption)
    expect(Schedule.preview(s, { from: 1.5, count: 1 })).toBeInstanceOf(Errors.InvalidTime)
    expect(Schedule.preview(Schedule.fixedRate(0), { from: 0, count: 1 })).toBeInstanceOf(
      Errors.InvalidPeriod,
    )
  })
})

describe("§15 explain(id)", () => {
  it("a scheduled task: its pending slot and the ones after it", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      job: noop,
      schedule: Schedule.fixedRate(10, { delay: 5 }),
      window: 3,
    })
    expect(driver.explain(id, 3)).toMatchObject({
      state: "scheduled",
      kind: "fixed-rate",
      pending: { slot: 5, scheduledFor: 5, attempt: 1 },
      window: 3,
      slots: [
        { slot: 5, dst: undefined },
        { slot: 15, dst: undefined },
        { slot: 25, dst: undefined },
      ],
      notes: ["window 3 ms: a slot not started within it is skipped"],
    })
  })

  it("a pending retry comes first; the schedule goes on after it", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      job: failing(),
      schedule: Schedule.fixedRate(10),
      retry: { maxRetries: 1, base: 4 },
    })
    driver.tick(0)
    const e = driver.explain(id, 2)
    expect(e).toMatchObject({ pending: { slot: 0, scheduledFor: 4, attempt: 2 } })
    expect(e?.slots.map((s) => s.slot)).toEqual([10, 20])
    expect(e?.notes[0]).toMatch(/retry 1 of slot 0 is due at 4/)
  })

  it("a paused task: the slots it would take if resumed now", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(10) })
    driver.pause(id)
    clock.set(33)
    const e = driver.explain(id, 2)
    expect(e).toMatchObject({ state: "paused", pausedReason: "manual", pending: undefined })
    expect(e?.slots.map((s) => s.slot)).toEqual([40, 50])
    expect(e?.notes[0]).toMatch(/paused by hand/)
    expect(driver.status(id)).toBe("paused") // explain changes nothing
    expect(driver.drainOccurrences().map((o) => o.kind)).toEqual(["paused"])
  })

  it("a task held by an open breaker: from the breaker's half-open time", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      job: failing(),
      schedule: Schedule.fixedRate(10),
      breaker: { failures: 1, coolDown: 95 },
    })
    driver.tick(0)
    const e = driver.explain(id, 2)
    expect(e).toMatchObject({ pausedReason: "breaker", breaker: { state: "open", halfOpenAt: 95 } })
    expect(e?.slots.map((s) => s.slot)).toEqual([100, 110])
    expect(e?.notes[0]).toMatch(/held by breaker .* until 95/)
  })

  it("a one-shot with a window: its deadline", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(10), window: 5 })
    expect(driver.explain(id)).toMatchObject({
      deadline: 15,
      slots: [{ slot: 10, dst: undefined }],
    })
  })

  it("cron slots carry their DST notes; final and unknown tasks have no explanation", () => {
    const { driver } = setup(Date.parse("2026-03-07T12:00:00Z"))
    const id = driver.scheduleUnsafe({
      job: noop,
      schedule: Schedule.cron("30 2 * * *", { timeZone: "America/New_York" }),
    })
    expect(driver.explain(id, 1)?.slots).toEqual([
      { slot: Date.parse("2026-03-08T07:30:00Z"), dst: { kind: "gap", shiftedBy: 3_600_000 } },
    ])
    const once = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(0) })
    driver.runDue()
    expect(driver.explain(once)).toBeUndefined()
    expect(driver.explain("nope")).toBeUndefined()
  })
})

describe("§15 simulate(tasks, { until, outcome? })", () => {
  it("plays SPEC §7's example without running jobs", () => {
    // One-off A (maxRetries 1) fails at 0 and succeeds at 1; fixed-rate R (period 10,
    // maxRetries 0) always fails. Advancing to 10: A@0 failed→retry, R@0 failed, A@1
    // succeeded (done), R@10 failed; R stays scheduled for 20.
    const sim = Driver.simulate(
      [
        { id: "A", schedule: Schedule.once(0), retry: { maxRetries: 1, base: 1 } },
        { id: "R", schedule: Schedule.fixedRate(10) },
      ],
      {
        until: 10,
        outcome: (run) =>
          run.id === "R" || run.attempt === 1 ? Task.failed("boom") : Task.succeeded,
      },
    )
    if ("_tag" in sim) throw sim
    expect(sim.runs.map((r) => `${r.id}@${r.scheduledFor} ${r.outcome.kind}→${r.state}`)).toEqual([
      "A@0 failed→scheduled",
      "R@0 failed→scheduled",
      "A@1 succeeded→done",
      "R@10 failed→scheduled",
    ])
    expect(sim.tasks.map((t) => [t.id, t.state, t.scheduledFor])).toEqual([
      ["A", "done", 1],
      ["R", "scheduled", 20],
    ])
  })

  it("defaults to success, is deterministic, and includes the other occurrences in its ledger", () => {
    const tasks: ReadonlyArray<Driver.SimulatedTask> = [
      { id: "r", schedule: Schedule.fixedRate(10), breaker: { failures: 2, coolDown: 25 } },
      {
        id: "ok",
        schedule: Schedule.fixedDelay(15),
        retry: { maxRetries: 1, base: 3, jitter: "full" },
      },
    ]
    const options: Driver.SimulateOptions = {
      until: 60,
      outcome: (run) => (run.id === "r" && run.runNumber <= 3 ? Task.failed("x") : Task.succeeded),
    }
    const a = Driver.simulate(tasks, options)
    expect(Driver.simulate(tasks, options)).toEqual(a)
    if ("_tag" in a) throw a
    expect(
      a.ledger.map((e) =>
        "outcome" in e
          ? `${e.kind} ${e.id}@${e.scheduledFor}`
          : e.kind === "breaker"
            ? `breaker ${e.from}->${e.to}@${e.at}`
            : `${e.kind}@${e.at}`,
      ),
    ).toEqual([
      "ran r@0",
      "ran ok@0",
      "ran r@10",
      "breaker closed->open@10",
      "paused@10",
      "ran ok@15",
      "ran ok@30",
      "breaker open->half-open@35",
      "skipped@35",
      "resumed@35",
      "ran r@40",
      "breaker half-open->open@40",
      "paused@40",
      "ran ok@45",
      "ran ok@60",
    ])
    expect(Driver.simulate([{ schedule: Schedule.once(0) }], { until: 5 })).toMatchObject({
      runs: [{ outcome: { kind: "succeeded" }, state: "done" }],
    })
  })

  it("a bad task or bound is a typed error", () => {
    expect(Driver.simulate([{ schedule: Schedule.fixedRate(0) }], { until: 5 })).toBeInstanceOf(
      Errors.InvalidPeriod,
    )
    expect(Driver.simulate([], { from: 10, until: 5 })).toBeInstanceOf(Errors.InvalidTime)
  })
})
