/**
 * SPEC §11 The deterministic driver: runDue, runUntil, tick; jobs that move the clock; throwing
 * and promise-returning jobs. (The concurrent runtime is tested in its own package.)
 */
import { describe, expect, it } from "vitest"
import { Schedule, type Task } from "../../src/index.ts"
import { failing, noop, setup } from "../support.ts"

describe("§11 runDue", () => {
  it("runs every run due now, follow-ups and catch-up runs included, all starting now", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({ id: "grid", job: noop, schedule: Schedule.fixedRate(10) })
    driver.scheduleUnsafe({
      id: "retry",
      job: failing(),
      schedule: Schedule.at(5),
      retry: { maxRetries: 2, base: 0 },
    })
    driver.scheduleUnsafe({ id: "future", job: noop, schedule: Schedule.at(31) })
    clock.set(30)
    const starts: Array<number> = []
    const record = (r: Task.RunInfo) => void starts.push(r.startedAt)
    driver.scheduleUnsafe({ id: "probe", job: record, schedule: Schedule.at(30) })
    driver.scheduleUnsafe({ id: "probe-early", job: record, schedule: Schedule.at(1) })
    const count = driver.runDue()
    expect(count).toBe(9) // grid 0,10,20,30; retry attempts 1,2,3; both probes
    expect(starts).toEqual([30, 30])
    expect(clock.now()).toBe(30)
    expect(driver.status("future")).toBe("scheduled")
    expect(driver.nextSlot()).toBe(31)
  })

  it("each run starts at the current time (lateness = now - slot) and the count is returned", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({ id: "a", job: noop, schedule: Schedule.at(3) })
    driver.scheduleUnsafe({ id: "b", job: noop, schedule: Schedule.at(8) })
    clock.set(10)
    const records = driver.tick(10) // tick(now) is runDue that returns records
    expect(records.map((r) => [r.scheduledFor, r.startedAt, r.finishedAt])).toEqual([
      [3, 10, 10],
      [8, 10, 10],
    ])
  })
})

describe("§11 runUntil and tick", () => {
  it("step the clock to each due slot (lateness 0), then to end; runUntil returns the count", () => {
    const { clock, driver } = setup(0)
    const at: Array<[number, number]> = []
    driver.scheduleUnsafe({
      job: (r) => void at.push([r.scheduledFor, clock.now()]),
      schedule: Schedule.fixedRate(7, { delay: 2 }),
    })
    expect(driver.runUntil(29)).toBe(4)
    expect(at).toEqual([
      [2, 2],
      [9, 9],
      [16, 16],
      [23, 23],
    ])
    expect(clock.now()).toBe(29)
    expect(driver.runUntil(30)).toBe(1) // a slot equal to end runs
  })

  it("a failure is reported at its slot", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({
      job: failing(),
      schedule: Schedule.at(12),
      retry: { maxRetries: 1, base: 3 },
    })
    const records = driver.tick(100)
    expect(records.map((r) => [r.scheduledFor, r.startedAt, r.finishedAt])).toEqual([
      [12, 12, 12],
      [15, 15, 15],
    ])
  })

  it("tick returns the outcomes in run order; runs due after end wait", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({ id: "x", job: failing("no"), schedule: Schedule.at(4) })
    driver.scheduleUnsafe({ id: "y", job: noop, schedule: Schedule.at(2) })
    driver.scheduleUnsafe({ id: "z", job: noop, schedule: Schedule.at(11) })
    expect(driver.tick(10).map((r) => [r.id, r.outcome])).toEqual([
      ["y", { kind: "succeeded" }],
      ["x", { kind: "failed", error: "no" }],
    ])
    expect(driver.status("z")).toBe("scheduled")
  })

  it("runUntil(now) is runDue for a manual clock", () => {
    const { clock, driver } = setup(50)
    driver.scheduleUnsafe({ job: noop, schedule: Schedule.at(10) })
    expect(driver.runUntil(50)).toBe(1)
    expect(clock.now()).toBe(50)
  })

  it("a tick inside onRun collects its own records only", () => {
    const outer: Array<string> = []
    let nested: Array<string> = []
    const { driver } = setup(0, {
      onRun: (r) => {
        if (r.id === "first") nested = driver.tick(5).map((x) => x.id)
      },
    })
    driver.scheduleUnsafe({ id: "first", job: noop, schedule: Schedule.at(1) })
    driver.scheduleUnsafe({ id: "second", job: noop, schedule: Schedule.at(3) })
    outer.push(...driver.tick(10).map((r) => r.id))
    expect(nested).toEqual(["second"])
    expect(outer).toEqual(["first"])
  })
})

describe("§11 a job may move the manual clock to simulate a long run", () => {
  it("the run finishes when the job says; fixed delay counts from there", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({ job: () => clock.advance(40), schedule: Schedule.fixedDelay(10) })
    const records = driver.tick(99)
    expect(records.map((r) => [r.scheduledFor, r.startedAt, r.finishedAt])).toEqual([
      [0, 0, 40],
      [50, 50, 90],
    ])
    expect(clock.now()).toBe(99)
    expect(driver.nextSlot()).toBe(100)
  })

  it("a job that moves the clock past end: runUntil stops at slots <= end and leaves the clock", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({ job: () => clock.set(500), schedule: Schedule.at(5) })
    driver.scheduleUnsafe({ id: "at50", job: noop, schedule: Schedule.at(50) })
    driver.scheduleUnsafe({ id: "at200", job: noop, schedule: Schedule.at(200) })
    const records = driver.tick(100)
    expect(records.map((r) => [r.scheduledFor, r.startedAt])).toEqual([
      [5, 5],
      [50, 500],
    ])
    expect(clock.now()).toBe(500)
    expect(driver.status("at200")).toBe("scheduled")
    expect(driver.runDue()).toBe(1)
  })

  it("a job that moves the clock backwards fails (InvalidTime) and the clock stays", () => {
    const { clock, driver } = setup(10)
    driver.scheduleUnsafe({ job: () => clock.set(5), schedule: Schedule.once(0) })
    const [r] = driver.tick(10)
    expect(r?.outcome).toMatchObject({ kind: "failed", error: { _tag: "InvalidTime" } })
    expect(clock.now()).toBe(10)
  })
})

describe("§11 nothing a job does escapes the driver", () => {
  it("a throwing job becomes an outcome; the call returns normally and later runs continue", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({ job: failing(new RangeError("r")), schedule: Schedule.fixedRate(10) })
    driver.scheduleUnsafe({ id: "next", job: noop, schedule: Schedule.at(5) })
    expect(() => driver.runUntil(20)).not.toThrow()
    expect(driver.status("next")).toBe("done")
    expect(driver.runDue()).toBe(0)
  })

  it("a job returning a promise is a failed outcome (the driver runs synchronous jobs only)", async () => {
    const { driver } = setup(0)
    let settled = false
    driver.scheduleUnsafe({
      id: "async",
      job: (async () => {
        settled = true
      }) as never,
      schedule: Schedule.once(0),
    })
    driver.scheduleUnsafe({
      id: "rejecting",
      job: (() => Promise.reject(new Error("rejected later"))) as never,
      schedule: Schedule.once(0),
      retry: { maxRetries: 1, base: 1 },
    })
    const records = driver.tick(0)
    expect(records.map((r) => [r.id, r.outcome.kind, r.state])).toEqual([
      ["async", "failed", "failed"],
      ["rejecting", "failed", "scheduled"],
    ])
    const error = records[0]?.outcome.kind === "failed" ? records[0].outcome.error : undefined
    expect(error).toBeInstanceOf(TypeError)
    expect(String(error)).toContain("synchronous")
    // The rejection is absorbed: no unhandled rejection reaches the process.
    await new Promise((resolve) => setImmediate(resolve))
    expect(settled).toBe(true)
  })

  it("a thenable that is not a promise is treated the same way", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({
      // biome-ignore lint/suspicious/noThenProperty: the point is a hand-made thenable
      job: (() => ({ then: () => {} })) as never,
      schedule: Schedule.once(0),
    })
    expect(driver.tick(0)[0]?.outcome.kind).toBe("failed")
  })

  it("a job returning a plain value succeeds", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({ job: (() => 42) as never, schedule: Schedule.once(0) })
    expect(driver.tick(0)[0]?.outcome.kind).toBe("succeeded")
  })
})
