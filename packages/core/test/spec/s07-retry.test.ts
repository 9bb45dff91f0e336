/**
 * SPEC §7 Retry and failure policy.
 */
import { describe, expect, it } from "vitest"
import { Random, Schedule } from "../../src/index.ts"
import { failing, noop, setup } from "../support.ts"

describe("§7 SPEC's example", () => {
  it("A (one-off, 1 retry, base 1) and R (fixed rate 10, always fails), advanced to 10", () => {
    const { driver } = setup(0)
    let aCalls = 0
    driver.scheduleUnsafe({
      id: "A",
      job: () => {
        if (aCalls++ === 0) throw new Error("A fails once")
      },
      schedule: Schedule.once(0),
      retry: { maxRetries: 1, base: 1 },
    })
    driver.scheduleUnsafe({
      id: "R",
      job: failing(new Error("R always fails")),
      schedule: Schedule.fixedRate(10),
      retry: { maxRetries: 0 },
    })
    const records = driver.tick(10)
    expect(
      records.map(
        (r) => `${r.id}@${r.scheduledFor} ${r.outcome.kind}→${r.state}/${r.continuation}`,
      ),
    ).toEqual([
      "A@0 failed→scheduled/retry",
      "R@0 failed→scheduled/next",
      "A@1 succeeded→done/final",
      "R@10 failed→scheduled/next",
    ])
    expect(driver.status("A")).toBe("done")
    expect(driver.info("R")).toMatchObject({ state: "scheduled", scheduledFor: 20 })
  })
})

describe("§7 backoff", () => {
  it("retry r is due at failedAt + min(maxDelay, base * factor^(r-1)), and attempt increments", () => {
    const { driver } = setup(0)
    const id = driver.scheduleUnsafe({
      job: failing(),
      schedule: Schedule.once(0),
      retry: { maxRetries: 4, base: 10, factor: 3, maxDelay: 200 },
    })
    const records = driver.tick(10_000)
    // 10, 30, 90, then 270 capped to 200.
    expect(records.map((r) => [r.attempt, r.scheduledFor])).toEqual([
      [1, 0],
      [2, 10],
      [3, 40],
      [4, 130],
      [5, 330],
    ])
    expect(records.map((r) => r.continuation)).toEqual([
      "retry",
      "retry",
      "retry",
      "retry",
      "final",
    ])
    expect(driver.status(id)).toBe("failed")
  })

  it("the factor defaults to 2 and maxRetries to 0", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({
      job: failing(),
      schedule: Schedule.once(0),
      retry: { maxRetries: 3, base: 5 },
    })
    expect(driver.tick(1000).map((r) => r.scheduledFor)).toEqual([0, 5, 15, 35])
    const { driver: d2 } = setup(0)
    d2.scheduleUnsafe({ job: failing(), schedule: Schedule.once(0), retry: { base: 5 } })
    expect(d2.tick(1000).map((r) => r.state)).toEqual(["failed"])
  })

  it("failedAt is the clock when the failure is reported: a job that ran for 7 ms", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({
      job: () => {
        clock.advance(7)
        throw new Error("slow failure")
      },
      schedule: Schedule.once(0),
      retry: { maxRetries: 1, base: 10 },
    })
    const records = driver.tick(100)
    expect(records.map((r) => [r.scheduledFor, r.finishedAt, r.nextSlot])).toEqual([
      [0, 7, 17],
      [17, 24, undefined],
    ])
  })

  it("a stepping driver reports a zero-length failure at its slot", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({
      job: failing(),
      schedule: Schedule.once(30),
      retry: { maxRetries: 1, base: 4 },
    })
    const [first] = driver.tick(1000)
    expect(first).toMatchObject({ scheduledFor: 30, startedAt: 30, finishedAt: 30, nextSlot: 34 })
  })

  it("jitter draws from the injected seed: full in [0, b], equal in [ceil(b/2), b], reproducible", () => {
    const delays = (jitter: "full" | "equal", seed: number) => {
      const { driver } = setup(0, { random: Random.seeded(seed) })
      driver.scheduleUnsafe({
        job: failing(),
        schedule: Schedule.once(0),
        retry: { maxRetries: 6, base: 100, factor: 2, jitter },
      })
      return driver
        .tick(1_000_000)
        .filter((r) => r.continuation === "retry")
        .map((r) => (r.nextSlot as number) - r.finishedAt)
    }
    for (const seed of [1, 2, 3]) {
      const full = delays("full", seed)
      const equal = delays("equal", seed)
      expect(full).toHaveLength(6)
      full.forEach((d, k) => {
        expect(d).toBeGreaterThanOrEqual(0)
        expect(d).toBeLessThanOrEqual(100 * 2 ** k)
      })
      equal.forEach((d, k) => {
        expect(d).toBeGreaterThanOrEqual(Math.ceil((100 * 2 ** k) / 2))
        expect(d).toBeLessThanOrEqual(100 * 2 ** k)
      })
      expect(delays("full", seed)).toEqual(full)
    }
    expect(delays("full", 1)).not.toEqual(delays("full", 2))
  })
})

describe("§7 exhausted retries", () => {
  it("a one-off task ends failed with its last error", () => {
    const { driver } = setup(0)
    let n = 0
    const id = driver.scheduleUnsafe({
      job: () => {
        throw new Error(`failure ${++n}`)
      },
      schedule: Schedule.once(0),
      retry: { maxRetries: 2, base: 1 },
    })
    driver.runUntil(100)
    expect(driver.status(id)).toBe("failed")
    const last = driver.info(id)?.lastFailure
    expect(last?.kind).toBe("failed")
    expect(String(last?.kind === "failed" ? last.error : "")).toBe("Error: failure 3")
  })

  it("a recurring task records the failure and continues with its next slot; attempt resets", () => {
    const { driver } = setup(0)
    let n = 0
    const id = driver.scheduleUnsafe({
      job: () => {
        if (n++ < 3) throw new Error("first slot fails three times")
      },
      schedule: Schedule.fixedRate(100),
      retry: { maxRetries: 2, base: 30 },
    })
    const records = driver.tick(200)
    // Retries do not move the grid: slot 0 fails at 0, 30 and 90 (30 + 60), then slot 100.
    expect(records.map((r) => [r.scheduledFor, r.attempt, r.outcome.kind])).toEqual([
      [0, 1, "failed"],
      [30, 2, "failed"],
      [90, 3, "failed"],
      [100, 1, "succeeded"],
      [200, 1, "succeeded"],
    ])
    expect(records[2]).toMatchObject({ continuation: "next", nextSlot: 100, state: "scheduled" })
    expect(driver.info(id)).toMatchObject({ consecutiveFailures: 0, state: "scheduled" })
  })

  it("a retry that lands after the next grid slot: the missed slot follows the missed-run policy", () => {
    const run = (missedRuns: "catch-up" | "skip") => {
      const { driver } = setup(0)
      let n = 0
      driver.scheduleUnsafe({
        job: () => {
          if (n++ < 2) throw new Error("fails twice")
        },
        schedule: Schedule.fixedRate(100),
        retry: { maxRetries: 1, base: 150 },
        missedRuns,
      })
      return driver.tick(250).map((r) => `${r.scheduledFor}@${r.startedAt}#${r.attempt}`)
    }
    // Slot 0 fails at 0, its retry at 150 fails too: slot 100 has passed by then.
    expect(run("catch-up")).toEqual(["0@0#1", "150@150#2", "100@150#1", "200@200#1"])
    expect(run("skip")).toEqual(["0@0#1", "150@150#2", "200@200#1"])
  })

  it("pauseAfterConsecutiveFailures: n failed slots in a row pause the task (reason failures)", () => {
    const { driver } = setup(0)
    const id = driver.scheduleUnsafe({
      job: failing(),
      schedule: Schedule.fixedRate(10),
      retry: { maxRetries: 1, base: 1 },
      pauseAfterConsecutiveFailures: 3,
    })
    const records = driver.tick(1000)
    // Three slots (0, 10, 20), each failing twice (attempt and retry): six runs, then paused.
    expect(records.map((r) => `${r.scheduledFor}#${r.attempt}`)).toEqual([
      "0#1",
      "1#2",
      "10#1",
      "11#2",
      "20#1",
      "21#2",
    ])
    expect(records.at(-1)).toMatchObject({
      state: "paused",
      continuation: "next",
      nextSlot: 30,
      pausedReason: "failures",
    })
    expect(driver.status(id)).toBe("paused")
    expect(driver.info(id)).toMatchObject({ consecutiveFailures: 3, pausedReason: "failures" })
  })

  it("a success resets the count of consecutive failures", () => {
    const { driver } = setup(0)
    const pattern = [false, true, false, false, false] // fail, ok, fail, fail, fail
    let n = 0
    const id = driver.scheduleUnsafe({
      job: () => {
        if (!pattern[n++]) throw new Error("fail")
      },
      schedule: Schedule.fixedRate(10),
      pauseAfterConsecutiveFailures: 2,
    })
    const records = driver.tick(1000)
    expect(records.map((r) => r.scheduledFor)).toEqual([0, 10, 20, 30])
    expect(records.map((r) => r.state)).toEqual(["scheduled", "scheduled", "scheduled", "paused"])
    expect(driver.status(id)).toBe("paused")
  })

  it("without a failure policy a failing recurring task never stops", () => {
    const { driver } = setup(0)
    const id = driver.scheduleUnsafe({ job: failing(), schedule: Schedule.fixedRate(10) })
    expect(driver.runUntil(10_000)).toBe(1001)
    expect(driver.info(id)).toMatchObject({ state: "scheduled", consecutiveFailures: 1001 })
  })

  it("a succeeding task with retries configured runs once per slot", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({
      job: noop,
      schedule: Schedule.fixedRate(10),
      retry: { maxRetries: 5, base: 1 },
    })
    expect(driver.tick(30).map((r) => r.attempt)).toEqual([1, 1, 1, 1])
  })
})
