/**
 * SPEC §8 Cancellation: return values, cooperative cancel of a running task, lazy deletion with
 * generations, compaction when dead entries pass half of the heap.
 */
import { describe, expect, it } from "vitest"
import { Schedule } from "../../src/index.ts"
import { failing, noop, setup } from "../support.ts"

describe("§8 cancel returns", () => {
  it("true for a scheduled task, false for unknown and final tasks", () => {
    const { driver } = setup()
    const a = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(10) })
    const done = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(0) })
    const failed = driver.scheduleUnsafe({ job: failing(), schedule: Schedule.once(0) })
    driver.runDue()
    expect(driver.cancel(a)).toBe(true)
    expect(driver.cancel(a)).toBe(false) // already cancelled
    expect(driver.cancel(done)).toBe(false)
    expect(driver.cancel(failed)).toBe(false)
    expect(driver.cancel("never-seen")).toBe(false)
    expect(driver.cancel("#99.1")).toBe(false)
    expect(driver.cancel("")).toBe(false)
    expect(driver.stats()).toMatchObject({ cancelled: 1, done: 1, failed: 1 })
  })

  it("true for a running task (from inside its own job)", () => {
    const { driver } = setup()
    let result: boolean | undefined
    driver.scheduleUnsafe({
      job: (run) => {
        result = driver.cancel(run.id)
      },
      schedule: Schedule.once(0),
    })
    driver.runDue()
    expect(result).toBe(true)
  })
})

describe("§8 a cancelled task never runs again", () => {
  it("a scheduled one-off never starts", () => {
    const { driver } = setup()
    let ran = false
    const id = driver.scheduleUnsafe({
      job: () => {
        ran = true
      },
      schedule: Schedule.once(10),
    })
    driver.cancel(id)
    expect(driver.tick(100)).toEqual([])
    expect(ran).toBe(false)
  })

  it("a recurring task cancelled between runs stops", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(10) })
    expect(driver.tick(25)).toHaveLength(3)
    driver.cancel(id)
    expect(driver.tick(100)).toEqual([])
    expect(driver.status(id)).toBe("cancelled")
  })

  it("a task waiting for a retry is cancelled with its retry", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      job: failing(),
      schedule: Schedule.once(0),
      retry: { maxRetries: 3, base: 10 },
    })
    driver.runDue()
    expect(driver.status(id)).toBe("scheduled")
    expect(driver.cancel(id)).toBe(true)
    expect(driver.tick(1000)).toEqual([])
  })
})

describe("§8 cooperative cancel of a running task", () => {
  it("the run finishes, its outcome is reported, and it is never rescheduled", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      id: "self",
      job: (run) => {
        driver.cancel(run.id)
      },
      schedule: Schedule.fixedRate(10),
    })
    const records = driver.tick(100)
    expect(records).toHaveLength(1)
    expect(records[0]).toMatchObject({
      id,
      outcome: { kind: "succeeded" },
      state: "cancelled",
      continuation: "final",
      nextSlot: undefined,
    })
    expect(driver.stats()).toMatchObject({ cancelled: 1, scheduled: 0, running: 0, inFlight: 0 })
  })

  it("a failure after cancelling is still reported, and not retried", () => {
    const { driver } = setup()
    const boom = new Error("after cancel")
    driver.scheduleUnsafe({
      job: (run) => {
        driver.cancel(run.id)
        throw boom
      },
      schedule: Schedule.once(0),
      retry: { maxRetries: 5, base: 1 },
    })
    const records = driver.tick(100)
    expect(records.map((r) => [r.outcome, r.state, r.continuation])).toEqual([
      [{ kind: "failed", error: boom }, "cancelled", "final"],
    ])
  })
})

describe("§8 lazy deletion and compaction", () => {
  it("a cancelled entry stays in the heap as a dead entry until it surfaces", () => {
    const { driver } = setup()
    const ids = Array.from({ length: 10 }, (_, k) =>
      driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(10 + k) }),
    )
    driver.cancel(ids[0] as string)
    expect(driver.stats()).toMatchObject({ heapEntries: 10, deadEntries: 1, scheduled: 9 })
    // The dead entry is the earliest: asking for the next slot drops it.
    expect(driver.nextSlot()).toBe(11)
    expect(driver.stats()).toMatchObject({ heapEntries: 9, deadEntries: 0 })
    driver.checkInvariants()
  })

  it("a dead entry that surfaces while running due work is dropped without running anything", () => {
    const { driver } = setup()
    const ran: Array<number> = []
    const ids = [5, 6, 7].map((slot) =>
      driver.scheduleUnsafe({ job: () => void ran.push(slot), schedule: Schedule.at(slot) }),
    )
    driver.cancel(ids[1] as string)
    expect(driver.runUntil(10)).toBe(2)
    expect(ran).toEqual([5, 7])
    expect(driver.stats()).toMatchObject({ heapEntries: 0, deadEntries: 0 })
  })

  it("the heap is compacted when dead entries exceed half of it, not before", () => {
    const { driver } = setup()
    const ids = Array.from({ length: 10 }, (_, k) =>
      driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(100 + k) }),
    )
    for (let k = 0; k < 5; k++) driver.cancel(ids[9 - k] as string)
    // 5 dead of 10 is half, not more than half.
    expect(driver.stats()).toMatchObject({ heapEntries: 10, deadEntries: 5 })
    driver.cancel(ids[4] as string)
    expect(driver.stats()).toMatchObject({ heapEntries: 4, deadEntries: 0, scheduled: 4 })
    driver.checkInvariants()
    expect(driver.tick(200).map((r) => r.scheduledFor)).toEqual([100, 101, 102, 103])
  })

  it("many cancels keep the heap proportional to the live tasks", () => {
    const { driver } = setup()
    const keep: Array<string> = []
    for (let k = 0; k < 10_000; k++) {
      const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(1000 + (k % 97)) })
      if (k % 100 === 0) keep.push(id)
      else driver.cancel(id)
      expect(driver.stats().heapEntries).toBeLessThanOrEqual(2 * driver.stats().scheduled + 1)
    }
    driver.checkInvariants()
    expect(driver.stats().scheduled).toBe(100)
    expect(driver.runUntil(2000)).toBe(100)
  })

  it("generations: an old entry of a reused id never runs the new task", () => {
    const { driver } = setup()
    const ran: Array<string> = []
    driver.scheduleUnsafe({ id: "job", job: () => void ran.push("old"), schedule: Schedule.at(10) })
    // Two more entries, so that one dead entry is not more than half and stays in the heap.
    driver.scheduleUnsafe({ id: "later1", job: noop, schedule: Schedule.at(50) })
    driver.scheduleUnsafe({ id: "later2", job: noop, schedule: Schedule.at(50) })
    driver.cancel("job")
    driver.scheduleUnsafe({ id: "job", job: () => void ran.push("new"), schedule: Schedule.at(20) })
    expect(driver.stats()).toMatchObject({ deadEntries: 1, heapEntries: 4, scheduled: 3 })
    const records = driver.tick(15)
    expect(records).toEqual([]) // the entry at 10 is dead: nothing runs there
    expect(driver.stats()).toMatchObject({ deadEntries: 0, heapEntries: 3 })
    expect(driver.tick(30).map((r) => [r.id, r.generation, r.scheduledFor])).toEqual([
      ["job", 2, 20],
    ])
    expect(ran).toEqual(["new"])
  })
})
