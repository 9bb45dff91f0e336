/**
 * SPEC §9 Ids: caller-supplied or generated, duplicates of live ids rejected, reuse after a
 * final state with a new generation, status and bounded retention.
 */
import { describe, expect, it } from "vitest"
import { Schedule } from "../../src/index.ts"
import { err, lines, noop, observe, ok, setup } from "../support.ts"

describe("§9 generated ids", () => {
  it("look like #<row>.<generation> and are distinct", () => {
    const { driver } = setup()
    const ids = Array.from({ length: 5 }, () =>
      driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(1) }),
    )
    expect(ids).toEqual(["#0.1", "#1.1", "#2.1", "#3.1", "#4.1"])
  })

  it("are never handed out twice, even when retention recycles rows", () => {
    const { driver } = setup(0, { retention: { maxFinished: 0 } })
    const seen = new Set<string>()
    for (let k = 0; k < 200; k++) {
      const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(0) })
      expect(id).toMatch(/^#\d+\.\d+$/)
      expect(seen.has(id)).toBe(false)
      seen.add(id)
      driver.runDue()
      expect(driver.status(id)).toBe("unknown") // retention 0: forgotten when final
    }
    driver.checkInvariants()
  })

  it("a generated id from an earlier generation of the same row is unknown, not the new task", () => {
    const { driver } = setup(0, { retention: { maxFinished: 0 } })
    const first = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(0) })
    driver.runDue()
    const second = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(10) })
    expect(second).not.toBe(first)
    expect(driver.status(first)).toBe("unknown")
    expect(driver.cancel(first)).toBe(false)
    expect(driver.status(second)).toBe("scheduled")
  })
})

describe("§9 a live id cannot be scheduled again", () => {
  const script = (driver: ReturnType<typeof setup>["driver"]) => {
    driver.scheduleUnsafe({ id: "a", job: noop, schedule: Schedule.fixedRate(10) })
    driver.scheduleUnsafe({ id: "b", job: noop, schedule: Schedule.once(15) })
  }

  it("DuplicateTaskId, and nothing changes (stats, ids, the later trace)", () => {
    const { driver } = setup()
    const { driver: control } = setup()
    script(driver)
    script(control)
    const before = observe(driver)
    const e = err(
      driver.schedule({ id: "a", job: noop, schedule: Schedule.once(1), priority: "high" }),
    )
    expect(e).toMatchObject({ _tag: "DuplicateTaskId", field: "id", value: "a" })
    expect(e.message).toContain('"a"')
    expect(e.message).toContain("scheduled")
    expect(observe(driver)).toEqual(before)
    driver.checkInvariants()
    expect(lines(driver.tick(40))).toEqual(lines(control.tick(40)))
  })

  it("also while the task is running (from inside its own job)", () => {
    const { driver } = setup()
    let inside: unknown
    driver.scheduleUnsafe({
      id: "me",
      job: () => {
        inside = err(driver.schedule({ id: "me", job: noop, schedule: Schedule.once(0) }))
      },
      schedule: Schedule.once(0),
    })
    driver.runDue()
    expect(inside).toMatchObject({
      _tag: "DuplicateTaskId",
      message: expect.stringContaining("running"),
    })
    expect(driver.stats().accepted).toBe(1)
  })
})

describe("§9 an id whose task is final may be scheduled again", () => {
  it.each(["done", "failed", "cancelled"] as const)("after %s: a new generation", (final) => {
    const { driver } = setup()
    driver.scheduleUnsafe({
      id: "x",
      job: () => {
        if (final === "failed") throw new Error("x")
      },
      schedule: Schedule.once(final === "cancelled" ? 100 : 0),
    })
    if (final === "cancelled") driver.cancel("x")
    driver.runDue()
    expect(driver.info("x")).toMatchObject({ state: final, generation: 1 })
    expect(ok(driver.schedule({ id: "x", job: noop, schedule: Schedule.once(5) }))).toBe("x")
    expect(driver.info("x")).toMatchObject({ state: "scheduled", generation: 2, scheduledFor: 5 })
    const records = driver.tick(200)
    expect(records.map((r) => [r.id, r.generation, r.scheduledFor])).toEqual([["x", 2, 5]])
    expect(driver.stats()).toMatchObject({ accepted: 2, removed: 1, done: 1 })
    driver.checkInvariants()
  })
})

describe("§9 status", () => {
  it("returns each state, or unknown", () => {
    const { driver } = setup()
    expect(driver.status("nobody")).toBe("unknown")
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(5) })
    expect(driver.status(id)).toBe("scheduled")
    driver.runUntil(5)
    expect(driver.status(id)).toBe("done")
  })
})

describe("§9 retention of final tasks", () => {
  it("by count: only the newest maxFinished final tasks stay queryable", () => {
    const { driver } = setup(0, { retention: { maxFinished: 2 } })
    const ids = ["t1", "t2", "t3", "t4"].map((id, k) =>
      driver.scheduleUnsafe({ id, job: noop, schedule: Schedule.once(k) }),
    )
    driver.scheduleUnsafe({ id: "live", job: noop, schedule: Schedule.once(100) })
    driver.runUntil(10)
    expect(ids.map((id) => driver.status(id))).toEqual(["unknown", "unknown", "done", "done"])
    expect(driver.taskIds()).toEqual(expect.arrayContaining(["t3", "t4", "live"]))
    expect(driver.taskIds()).toHaveLength(3)
    expect(driver.stats()).toMatchObject({ done: 2, removed: 2, accepted: 5, scheduled: 1 })
    expect(driver.info("t1")).toBeUndefined()
    driver.checkInvariants()
  })

  it("live tasks are never dropped, however low the limit", () => {
    const { driver } = setup(0, { retention: { maxFinished: 0 } })
    const ids = Array.from({ length: 20 }, (_, k) =>
      driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(10, { delay: k }) }),
    )
    driver.runUntil(1000)
    expect(ids.every((id) => driver.status(id) === "scheduled")).toBe(true)
  })

  it("by age: a final task is dropped at the first step at or after finishedAt + maxAgeMs", () => {
    // Reading: age is enforced lazily, by the kernel's steps (schedule, cancel, run completion);
    // status() itself does not take the time. Memory stays bounded either way.
    const { clock, driver } = setup(0, { retention: { maxAgeMs: 100 } })
    driver.scheduleUnsafe({ id: "old", job: noop, schedule: Schedule.once(0) })
    driver.runDue() // done at 0
    clock.set(99)
    driver.scheduleUnsafe({ id: "probe1", job: noop, schedule: Schedule.once(1000) })
    expect(driver.status("old")).toBe("done")
    clock.set(100)
    driver.scheduleUnsafe({ id: "probe2", job: noop, schedule: Schedule.once(1000) })
    expect(driver.status("old")).toBe("unknown")
    expect(driver.stats()).toMatchObject({ done: 0, removed: 1 })
    driver.checkInvariants()
  })

  it("an evicted caller id can be scheduled again", () => {
    const { driver } = setup(0, { retention: { maxFinished: 0 } })
    driver.scheduleUnsafe({ id: "again", job: noop, schedule: Schedule.once(0) })
    driver.runDue()
    expect(driver.status("again")).toBe("unknown")
    expect(ok(driver.schedule({ id: "again", job: noop, schedule: Schedule.once(0) }))).toBe(
      "again",
    )
    expect(driver.status("again")).toBe("scheduled")
    driver.checkInvariants()
  })

  it("the default keeps 10,000 final tasks", () => {
    const { driver } = setup()
    for (let k = 0; k < 10_001; k++)
      driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(0) })
    driver.runDue()
    expect(driver.stats()).toMatchObject({ done: 10_000, removed: 1 })
    expect(driver.status("#0.1")).toBe("unknown")
    expect(driver.status("#1.1")).toBe("done")
  })
})

describe("§9 ids that are not allowed", () => {
  it.each([[""], ["#3.1"], ["#0.7"], [5], [null]])("%o is an InvalidOption on id", (id) => {
    const { driver } = setup()
    const before = observe(driver)
    const e = err(driver.schedule({ id: id as never, job: noop, schedule: Schedule.once(0) }))
    expect(e).toMatchObject({ _tag: "InvalidOption", field: "id" })
    expect(observe(driver)).toEqual(before)
  })
})
