/**
 * SPEC §10 Re-entrancy: jobs schedule, cancel (themselves too) and query while running; a task
 * a job schedules with a slot <= now runs in the same advance of time, in §4 order.
 */
import { describe, expect, it } from "vitest"
import { Schedule, type Task } from "../../src/index.ts"
import { err, noop, setup, slots } from "../support.ts"

describe("§10 a job schedules more work", () => {
  it("a task due now runs in the same runDue, in order (a high one before normal peers)", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({
      id: "A",
      job: () => {
        driver.scheduleUnsafe({
          id: "C-high",
          job: noop,
          schedule: Schedule.once(0),
          priority: "high",
        })
        driver.scheduleUnsafe({ id: "D-normal", job: noop, schedule: Schedule.once(0) })
      },
      schedule: Schedule.once(0),
    })
    driver.scheduleUnsafe({ id: "B", job: noop, schedule: Schedule.once(0) })
    const order: Array<string> = []
    const seen = driver.tick(0)
    order.push(...seen.map((r) => r.id))
    // C (high) outranks B at the same slot; D was pushed after B.
    expect(order).toEqual(["A", "C-high", "B", "D-normal"])
    expect(driver.runDue()).toBe(0)
  })

  it("runDue counts the runs of tasks its jobs scheduled", () => {
    const { driver } = setup(0)
    let depth = 0
    const spawn: (run: Task.RunInfo) => void = () => {
      if (depth++ < 4) driver.scheduleUnsafe({ job: spawn, schedule: Schedule.once(0) })
    }
    driver.scheduleUnsafe({ job: spawn, schedule: Schedule.once(0) })
    expect(driver.runDue()).toBe(5)
  })

  it("in runUntil, a task scheduled for now runs at this instant, before later slots", () => {
    const { clock, driver } = setup(0)
    driver.scheduleUnsafe({
      id: "at10",
      job: () => {
        driver.scheduleUnsafe({ id: "spawned", job: noop, schedule: Schedule.once(0) })
        driver.scheduleUnsafe({ id: "past", job: noop, schedule: Schedule.at(3) })
      },
      schedule: Schedule.at(10),
    })
    driver.scheduleUnsafe({ id: "at11", job: noop, schedule: Schedule.at(11) })
    const records = driver.tick(20)
    // "past" (slot 3) is earlier than "spawned" (slot 10): both run at 10, before at11.
    expect(records.map((r) => `${r.id}@${r.scheduledFor}/${r.startedAt}`)).toEqual([
      "at10@10/10",
      "past@3/10",
      "spawned@10/10",
      "at11@11/11",
    ])
    expect(clock.now()).toBe(20)
  })

  it("a task scheduled for later waits for its slot", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({
      job: () => {
        driver.scheduleUnsafe({ id: "later", job: noop, schedule: Schedule.once(5) })
      },
      schedule: Schedule.once(0),
    })
    expect(driver.runDue()).toBe(1)
    expect(driver.status("later")).toBe("scheduled")
    expect(slots(driver.tick(5))).toEqual(["later@5"])
  })
})

describe("§10 a job cancels", () => {
  it("itself: true, the run is reported, the task never runs again", () => {
    const { driver } = setup(0)
    const results: Array<boolean> = []
    driver.scheduleUnsafe({
      id: "quitter",
      job: (run) => {
        if (run.runNumber === 2) results.push(driver.cancel(run.id))
      },
      schedule: Schedule.fixedRate(10),
    })
    const records = driver.tick(100)
    expect(results).toEqual([true])
    expect(records.map((r) => r.state)).toEqual(["scheduled", "cancelled"])
  })

  it("another task due at the same instant, which then never runs", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({
      id: "first",
      job: () => void driver.cancel("second"),
      schedule: Schedule.once(0),
    })
    driver.scheduleUnsafe({ id: "second", job: noop, schedule: Schedule.once(0) })
    expect(driver.tick(0).map((r) => r.id)).toEqual(["first"])
    expect(driver.status("second")).toBe("cancelled")
  })

  it("and reuses its own id for a fresh task, which runs", () => {
    const { driver } = setup(0)
    driver.scheduleUnsafe({
      id: "phoenix",
      job: (run) => {
        if (run.generation === 1) {
          driver.cancel(run.id)
          driver.scheduleUnsafe({ id: "phoenix", job: noop, schedule: Schedule.once(0) })
        }
      },
      schedule: Schedule.once(0),
    })
    const records = driver.tick(0)
    expect(records.map((r) => [r.id, r.generation, r.state])).toEqual([
      ["phoenix", 1, "cancelled"],
      ["phoenix", 2, "done"],
    ])
  })
})

describe("§10 a job queries", () => {
  it("its own status and info, and others'", () => {
    const { driver } = setup(0)
    const seen: Array<unknown> = []
    driver.scheduleUnsafe({ id: "other", job: noop, schedule: Schedule.once(50) })
    driver.scheduleUnsafe({
      id: "asker",
      job: (run) => {
        seen.push(driver.status(run.id), driver.info(run.id)?.runNumber, driver.status("other"))
        seen.push(driver.status("nobody"), driver.stats().running, driver.nextSlot())
      },
      schedule: Schedule.once(0),
    })
    driver.runDue()
    expect(seen).toEqual(["running", 1, "scheduled", "unknown", 1, 50])
  })

  it("a duplicate id scheduled from a job is an error value, not an exception", () => {
    const { driver } = setup(0)
    let result: unknown
    driver.scheduleUnsafe({
      id: "dup",
      job: () => {
        result = err(driver.schedule({ id: "dup", job: noop, schedule: Schedule.once(0) }))._tag
      },
      schedule: Schedule.once(0),
    })
    expect(driver.tick(0).map((r) => r.outcome.kind)).toEqual(["succeeded"])
    expect(result).toBe("DuplicateTaskId")
  })
})
