/**
 * SPEC §2 Time: integer ms, typed rejection of bad inputs, Effect durations, past instants, long
 * delays, an injected clock.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Duration } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { Errors, Random, Schedule } from "../../src/index.ts"
import { err, lines, noop, ok, setup } from "../support.ts"

const DAY = 86_400_000

describe("§2 all instants and durations are integer milliseconds", () => {
  it("a fixed rate of 100 ms never drifts: the 10,000th slot is exactly 999,900", () => {
    const { driver } = setup()
    const slotsSeen: Array<number> = []
    driver.scheduleUnsafe({
      job: (r) => void slotsSeen.push(r.scheduledFor),
      schedule: Schedule.fixedRate("100 millis"),
    })
    driver.runUntil(999_900)
    expect(slotsSeen).toHaveLength(10_000)
    expect(slotsSeen.every((s, k) => s === k * 100 && Number.isSafeInteger(s))).toBe(true)
  })

  it("every time a job or record sees is a safe integer", () => {
    const { driver } = setup(7)
    driver.scheduleUnsafe({
      job: noop,
      schedule: Schedule.fixedDelay("1 second", { delay: "250 millis" }),
      retry: { maxRetries: 2, base: "10 millis", factor: 1.5, jitter: "full" },
    })
    const records = driver.tick(10_000)
    for (const r of records) {
      for (const t of [r.scheduledFor, r.startedAt, r.finishedAt, r.nextSlot ?? 0]) {
        expect(Number.isSafeInteger(t)).toBe(true)
      }
    }
  })
})

describe("§2 inputs that are not safe integers are rejected with a typed error", () => {
  it.each([
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["1.5", 1.5],
    ["2^53", 2 ** 53],
    ["-1 (negative)", -1],
  ])("a delay of %s is an InvalidDelay", (_name, delay) => {
    const { driver } = setup()
    const e = err(driver.schedule({ job: noop, schedule: Schedule.once(delay) }))
    expect(e._tag).toBe("InvalidDelay")
    expect(e.field).toBe("delay")
    expect(Object.is(e.value, delay)).toBe(true)
    expect(driver.stats().accepted).toBe(0)
  })

  it("a delay of 0 is allowed and due now", () => {
    const { driver } = setup(500)
    driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(0) })
    expect(driver.nextSlot()).toBe(500)
    expect(driver.runDue()).toBe(1)
  })

  it("an absolute time that is not a safe integer is an InvalidTime", () => {
    const { driver } = setup()
    for (const time of [Number.NaN, 1.5, 2 ** 53, new Date(Number.NaN)]) {
      expect(err(driver.schedule({ job: noop, schedule: Schedule.at(time) }))._tag).toBe(
        "InvalidTime",
      )
    }
  })
})

describe("§2 durations in Effect's form are converted to whole ms", () => {
  it('"5 seconds" is 5000 ms and Duration.millis(3) is 3 ms', () => {
    const { driver } = setup()
    const a = ok(driver.schedule({ job: noop, schedule: Schedule.once("5 seconds") }))
    const b = ok(driver.schedule({ job: noop, schedule: Schedule.once(Duration.millis(3)) }))
    expect(driver.info(a)?.scheduledFor).toBe(5000)
    expect(driver.info(b)?.scheduledFor).toBe(3)
  })

  it('a sub-millisecond part ("1.5 millis") is rejected, not rounded', () => {
    const { driver } = setup()
    for (const delay of ["1.5 millis", Duration.micros(1500n), "999 micros"] as const) {
      const e = err(driver.schedule({ job: noop, schedule: Schedule.once(delay) }))
      expect(e._tag).toBe("InvalidDelay")
      expect(e.message).toContain("sub-millisecond")
    }
    expect(
      err(driver.schedule({ job: noop, schedule: Schedule.fixedRate("2.5 millis") }))._tag,
    ).toBe("InvalidPeriod")
  })
})

describe("§2 an absolute time in the past is due immediately, and its lateness shows it", () => {
  it("at(50) scheduled at 100 runs on the next runDue with lateness 50", () => {
    const { driver } = setup(100)
    driver.scheduleUnsafe({ id: "late", job: noop, schedule: Schedule.at(50) })
    expect(driver.nextSlot()).toBe(50)
    const [r] = driver.tick(100)
    expect(r).toMatchObject({ id: "late", scheduledFor: 50, startedAt: 100 })
    expect((r?.startedAt ?? 0) - (r?.scheduledFor ?? 0)).toBe(50)
  })
})

describe("§2 delays beyond setTimeout's 2^31-1 ms work exactly", () => {
  it("a 30-day delay never fires early: nothing at slot-1, the run at its slot", () => {
    const { driver } = setup(1_000)
    driver.scheduleUnsafe({ id: "month", job: noop, schedule: Schedule.once("30 days") })
    const slot = 1_000 + 30 * DAY
    expect(slot - 1_000).toBeGreaterThan(2 ** 31 - 1)
    expect(driver.tick(slot - 1)).toEqual([])
    expect(driver.status("month")).toBe("scheduled")
    const records = driver.tick(slot)
    expect(records.map((r) => [r.scheduledFor, r.startedAt])).toEqual([[slot, slot]])
  })

  it("a delay of 2^40 ms is accepted and exact", () => {
    const { driver } = setup(3)
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(2 ** 40) })
    expect(driver.info(id)?.scheduledFor).toBe(2 ** 40 + 3)
    expect(driver.tick(2 ** 40 + 2)).toEqual([])
    expect(driver.tick(2 ** 40 + 3).map((r) => r.startedAt)).toEqual([2 ** 40 + 3])
  })

  it("a slot beyond 2^53-1 is an InvalidDelay (relative) or InvalidTime (absolute)", () => {
    const { driver } = setup(1_000)
    const max = Number.MAX_SAFE_INTEGER
    expect(err(driver.schedule({ job: noop, schedule: Schedule.once(max - 999) }))._tag).toBe(
      "InvalidDelay",
    )
    expect(ok(driver.schedule({ job: noop, schedule: Schedule.once(max - 1000) }))).toBeTypeOf(
      "string",
    )
    expect(
      err(driver.schedule({ job: noop, schedule: Schedule.fixedRate(10, { delay: max }) }))._tag,
    ).toBe("InvalidDelay")
    expect(err(driver.schedule({ job: noop, schedule: Schedule.at(2 ** 53) }))._tag).toBe(
      "InvalidTime",
    )
  })
})

describe("§2 the clock is injected; time moves only when the test moves it", () => {
  afterEach(() => {
    vi.restoreAllMocks()
    vi.useRealTimers()
  })

  it("runDue never moves a manual clock, however often it is called", () => {
    const { clock, driver } = setup(10)
    driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(5) })
    for (let i = 0; i < 3; i++) expect(driver.runDue()).toBe(0)
    expect(clock.now()).toBe(10)
    expect(driver.status("#0.1")).toBe("scheduled")
  })

  it("the manual clock refuses to move backwards (InvalidTime)", () => {
    const { clock } = setup(10)
    expect(() => clock.set(9)).toThrow(Errors.InvalidTime)
  })

  it("no hidden reads: the same scenario gives the same trace whatever the wall clock says", () => {
    const scenario = () => {
      const { driver } = setup(Date.parse("2026-03-01T00:00:00Z"), { random: Random.seeded(3) })
      let n = 0
      driver.scheduleUnsafe({
        job: () => {
          if (n++ % 2 === 0) throw new Error("odd")
        },
        schedule: Schedule.cron("*/10 * * * *", { timeZone: "Europe/Berlin" }),
        retry: { maxRetries: 1, base: "1 minute", jitter: "full" },
      })
      driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedDelay("7 minutes") })
      return lines(driver.tick(Date.parse("2026-03-01T03:00:00Z")))
    }
    vi.useFakeTimers({ now: new Date("1999-12-31T23:59:59Z") })
    const a = scenario()
    vi.setSystemTime(new Date("2042-06-15T12:00:00Z"))
    const b = scenario()
    expect(a.length).toBeGreaterThan(18)
    expect(b).toEqual(a)
  })

  it("the core never calls Date.now, Math.random or performance.now", () => {
    const forbidden = () => {
      throw new Error("hidden read")
    }
    vi.spyOn(Date, "now").mockImplementation(forbidden)
    vi.spyOn(Math, "random").mockImplementation(forbidden)
    vi.spyOn(performance, "now").mockImplementation(forbidden)
    const { driver } = setup(0)
    driver.scheduleUnsafe({
      job: failingOnce(),
      schedule: Schedule.cron("*/5 * * * * *"),
      retry: { maxRetries: 2, base: 100, jitter: "equal" },
    })
    driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(1000), missedRuns: "skip" })
    const records = driver.tick(60_000)
    expect(records.some((r) => r.outcome.kind === "failed")).toBe(true)
    // The spies themselves are never the cause of a failure.
    expect(
      records.every(
        (r) => r.outcome.kind !== "failed" || String(r.outcome.error) === "Error: once",
      ),
    ).toBe(true)
  })

  it("no source file of the core reads wall-clock time or global randomness, except the system clock", () => {
    const src = fileURLToPath(new URL("../../src/", import.meta.url))
    const files = readdirSync(src, { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".ts"),
    )
    const offenders: Array<string> = []
    for (const f of files) {
      const code = readFileSync(join(src, f), "utf8")
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/\/\/.*$/gm, "")
      for (const pattern of [/Date\.now\(/, /new Date\(\)/, /Math\.random\(/, /setTimeout\(/]) {
        if (pattern.test(code)) offenders.push(`${f}: ${pattern}`)
      }
      if (/performance\./.test(code) && f !== "Clock.ts") offenders.push(`${f}: performance`)
    }
    expect(offenders).toEqual([])
  })
})

const failingOnce = () => {
  let failed = false
  return () => {
    if (!failed) {
      failed = true
      throw new Error("once")
    }
  }
}
