/**
 * SPEC §6 Running and outcomes.
 */
import { describe, expect, it } from "vitest"
import { Schedule, type Task } from "../../src/index.ts"
import { noop, setup } from "../support.ts"

describe("§6 a run starts only when its slot is reached", () => {
  it("never before its slot, with runDue, runUntil and tick", () => {
    const { clock, driver } = setup(0)
    const starts: Array<[number, number]> = []
    for (const slot of [3, 7, 7, 12]) {
      driver.scheduleUnsafe({
        job: (run) => void starts.push([run.scheduledFor, clock.now()]),
        schedule: Schedule.at(slot),
      })
    }
    for (const t of [0, 2, 6]) {
      clock.set(t)
      driver.runDue()
    }
    driver.runUntil(10)
    driver.tick(11)
    expect(starts).toEqual([
      [3, 6], // due at 3, found by runDue at 6: late, never early
      [7, 7],
      [7, 7],
    ])
    driver.tick(12)
    expect(starts.every(([slot, at]) => at >= slot)).toBe(true)
    expect(starts).toHaveLength(4)
  })
})

describe("§6 outcomes", () => {
  it("every run reports its outcome; failures stop neither the scheduler nor other tasks", () => {
    const { driver } = setup()
    const boom = new Error("boom")
    driver.scheduleUnsafe({
      id: "bad",
      job: () => {
        throw boom
      },
      schedule: Schedule.fixedRate(10),
    })
    driver.scheduleUnsafe({ id: "good", job: noop, schedule: Schedule.fixedRate(10) })
    const records = driver.tick(20)
    expect(records.map((r) => `${r.id}:${r.outcome.kind}`)).toEqual([
      "bad:failed",
      "good:succeeded",
      "bad:failed",
      "good:succeeded",
      "bad:failed",
      "good:succeeded",
    ])
    expect(
      records
        .filter((r) => r.id === "bad")
        .every((r) => r.outcome.kind === "failed" && r.outcome.error === boom),
    ).toBe(true)
  })

  it("anything a job throws becomes a failed outcome carrying it", () => {
    const { driver } = setup()
    const thrown: Array<unknown> = [
      "a string",
      42,
      undefined,
      null,
      { code: "E" },
      new TypeError("t"),
    ]
    for (const value of thrown) {
      driver.scheduleUnsafe({
        job: () => {
          throw value
        },
        schedule: Schedule.once(0),
      })
    }
    const records = driver.tick(0)
    expect(records.map((r) => r.outcome)).toEqual(
      thrown.map((error) => ({ kind: "failed", error })),
    )
  })

  it("outcomes are counted: done and failed tasks show in stats", () => {
    const { driver } = setup()
    driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(0) })
    driver.scheduleUnsafe({
      job: () => {
        throw new Error("x")
      },
      schedule: Schedule.once(0),
    })
    driver.runDue()
    expect(driver.stats()).toMatchObject({ done: 1, failed: 1, scheduled: 0, running: 0 })
  })

  it("the job receives its run info: id, scheduledFor, startedAt, attempt, runNumber", () => {
    const { clock, driver } = setup(0)
    const infos: Array<ReturnType<typeof pick>> = []
    let calls = 0
    driver.scheduleUnsafe({
      id: "info",
      job: (run) => {
        infos.push(pick(run))
        if (calls++ === 0) throw new Error("retry me")
      },
      schedule: Schedule.fixedRate(100, { delay: 10 }),
      retry: { maxRetries: 1, base: 5 },
    })
    clock.set(12)
    driver.runDue() // slot 10, started late at 12, fails
    driver.runUntil(110)
    expect(infos).toEqual([
      { id: "info", scheduledFor: 10, startedAt: 12, attempt: 1, runNumber: 1 },
      { id: "info", scheduledFor: 17, startedAt: 17, attempt: 2, runNumber: 2 },
      { id: "info", scheduledFor: 110, startedAt: 110, attempt: 1, runNumber: 3 },
    ])
  })
})

const pick = (r: Task.RunInfo) => ({
  id: r.id,
  scheduledFor: r.scheduledFor,
  startedAt: r.startedAt,
  attempt: r.attempt,
  runNumber: r.runNumber,
})

describe("§6 a recurring task never overlaps itself", () => {
  it("a run that takes 25 ms on a 10 ms grid: each run starts after the previous one finished", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({ job: () => clock.advance(25), schedule: Schedule.fixedRate(10) })
    const records = driver.tick(100)
    // Catch-up: every grid slot up to 100 runs, back to back, each later than its slot.
    expect(records.map((r) => r.scheduledFor)).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100])
    for (let k = 1; k < records.length; k++) {
      expect(records[k]?.startedAt).toBe(records[k - 1]?.finishedAt)
    }
  })

  it("the slots that pass while it runs are missed slots and follow its policy", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({
      job: () => clock.advance(25),
      schedule: Schedule.fixedRate(10),
      missedRuns: "skip",
    })
    const records = driver.tick(100)
    expect(records.map((r) => `${r.scheduledFor}@${r.startedAt}`)).toEqual([
      "0@0",
      "30@30",
      "60@60",
      "90@90",
    ])
    expect(records[0]?.dropped).toEqual({ first: 10, last: 20, count: 2, exact: true })
  })
})
