/**
 * SPEC §4 Ordering: earlier slot, then higher priority, then first pushed (a global sequence
 * number given at every push, re-pushes of recurring tasks and retries included).
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Schedule, type Task } from "../../src/index.ts"
import { failing, noop, setup, slots } from "../support.ts"

describe("§4 among due runs", () => {
  it("the earlier slot runs first, whatever the scheduling order and priority", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({
      id: "late-high",
      job: noop,
      schedule: Schedule.at(20),
      priority: "high",
    })
    driver.scheduleUnsafe({ id: "mid", job: noop, schedule: Schedule.at(15) })
    driver.scheduleUnsafe({
      id: "early-low",
      job: noop,
      schedule: Schedule.at(10),
      priority: "low",
    })
    clock.set(30) // all three due at once
    expect(slots(driver.tick(30))).toEqual(["early-low@10", "mid@15", "late-high@20"])
  })

  it("equal slots: high before normal before low", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({ id: "low", job: noop, schedule: Schedule.at(5), priority: "low" })
    driver.scheduleUnsafe({ id: "normal", job: noop, schedule: Schedule.at(5) })
    driver.scheduleUnsafe({ id: "high", job: noop, schedule: Schedule.at(5), priority: "high" })
    expect(slots(driver.tick(5))).toEqual(["high@5", "normal@5", "low@5"])
  })

  it("equal slot and priority: first pushed, first run", () => {
    const { driver } = setup(0)
    const names = ["e", "b", "d", "a", "c"]
    for (const id of names) driver.scheduleUnsafe({ id, job: noop, schedule: Schedule.once(5) })
    expect(driver.tick(5).map((r) => r.id)).toEqual(names)
  })

  it("a recurring task's re-push gets a new sequence number when it is pushed", () => {
    // A (fixed rate) and B (at 10) are scheduled at 0, A first. A runs at 0 and is pushed again
    // for 10 *after* B was pushed: at 10, B runs before A.
    const { driver } = setup(0)
    driver.scheduleUnsafe({ id: "A", job: noop, schedule: Schedule.fixedRate(10) })
    driver.scheduleUnsafe({ id: "B", job: noop, schedule: Schedule.at(10) })
    expect(slots(driver.tick(10))).toEqual(["A@0", "B@10", "A@10"])
  })

  it("two recurring tasks keep the order of their previous runs' completions", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({ id: "P", job: noop, schedule: Schedule.fixedRate(10) })
    driver.scheduleUnsafe({ id: "Q", job: noop, schedule: Schedule.fixedRate(10) })
    expect(driver.tick(30).map((r) => r.id)).toEqual(["P", "Q", "P", "Q", "P", "Q", "P", "Q"])
  })

  it("a retry is pushed when the failure is reported: later than tasks pushed before it", () => {
    // R fails at 0 and is retried at 0 + 10. T (at 10) was pushed before the failure, S (at 10)
    // after it: at 10 the order is T, R's retry, S.
    const { driver } = setup(0)
    driver.scheduleUnsafe({ id: "T", job: noop, schedule: Schedule.at(10) })
    let attempt = 0
    driver.scheduleUnsafe({
      id: "R",
      job: () => {
        if (attempt++ === 0) throw new Error("first attempt fails")
      },
      schedule: Schedule.once(0),
      retry: { maxRetries: 1, base: 10 },
    })
    driver.runDue()
    driver.scheduleUnsafe({ id: "S", job: noop, schedule: Schedule.at(10) })
    const records = driver.tick(10)
    expect(records.map((r) => `${r.id}@${r.scheduledFor}#${r.attempt}`)).toEqual([
      "T@10#1",
      "R@10#2",
      "S@10#1",
    ])
  })

  it("priority still beats push order for retries and re-pushes", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({
      id: "retrying-low",
      job: failing(),
      schedule: Schedule.once(0),
      priority: "low",
      retry: { maxRetries: 1, base: 10 },
    })
    driver.runDue() // retry pushed for 10
    driver.scheduleUnsafe({ id: "high", job: noop, schedule: Schedule.at(10), priority: "high" })
    driver.scheduleUnsafe({ id: "normal", job: noop, schedule: Schedule.at(10) })
    expect(driver.tick(10).map((r) => r.id)).toEqual(["high", "normal", "retrying-low"])
  })

  it("the order is total and deterministic: random slots and priorities run sorted by (slot, rank, push)", () => {
    const rank: Record<Task.Priority, number> = { high: 0, normal: 1, low: 2 }
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            slot: fc.integer({ min: 0, max: 20 }),
            priority: fc.constantFrom<Task.Priority>("high", "normal", "low"),
          }),
          { maxLength: 60 },
        ),
        (tasks) => {
          const { driver } = setup(0)
          const ids = tasks.map((t, push) =>
            driver.scheduleUnsafe({
              id: `t${push}`,
              job: noop,
              schedule: Schedule.at(t.slot),
              priority: t.priority,
            }),
          )
          const expected = tasks
            .map((t, push) => ({ ...t, push, id: ids[push] }))
            .sort(
              (a, b) => a.slot - b.slot || rank[a.priority] - rank[b.priority] || a.push - b.push,
            )
            .map((t) => t.id)
          expect(driver.tick(20).map((r) => r.id)).toEqual(expected)
        },
      ),
      { numRuns: 200 },
    )
  })
})
