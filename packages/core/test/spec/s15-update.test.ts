/**
 * SPEC §15 controls: update in place, tags with filtered listing and bulk controls, and §3's
 * catch-up window, through the driver on a manual clock.
 */
import { describe, expect, it } from "vitest"
import { Errors, Schedule, type Task } from "../../src/index.ts"
import { err, failing, noop, ok, setup } from "../support.ts"

describe("§15 update(id, changes)", () => {
  it("keeps the id, generation and run count; a new schedule starts as if scheduled now", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({ id: "r", job: noop, schedule: Schedule.fixedRate(10) })
    driver.tick(25) // runs 0, 10, 20
    clock.set(27)
    expect(ok(driver.update(id, { schedule: Schedule.fixedRate(100, { delay: 5 }) }))).toBe(true)
    expect(driver.info(id)).toMatchObject({
      id: "r",
      generation: 1,
      runNumber: 3,
      kind: "fixed-rate",
      scheduledFor: 32,
    })
    expect(driver.tick(232).map((r) => [r.scheduledFor, r.runNumber])).toEqual([
      [32, 4],
      [132, 5],
      [232, 6],
    ])
  })

  it("a running task takes a schedule change when its run ends", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({
      job: (run) => {
        if (run.runNumber === 1) {
          clock.advance(4)
          ok(driver.update(run.id, { schedule: Schedule.fixedDelay(50) }))
        }
      },
      schedule: Schedule.once(0),
    })
    // The one-shot's run ends at 4: the new schedule starts then, as if scheduled at 4.
    const records = driver.tick(110)
    expect(records.map((r) => [r.scheduledFor, r.state])).toEqual([
      [0, "scheduled"],
      [4, "scheduled"],
      [54, "scheduled"],
      [104, "scheduled"],
    ])
    expect(driver.info(id)?.kind).toBe("fixed-delay")
  })

  it("priority changes the order of runs due at the same slot", () => {
    const { driver } = setup()
    const a = driver.scheduleUnsafe({ id: "a", job: noop, schedule: Schedule.at(5) })
    driver.scheduleUnsafe({ id: "b", job: noop, schedule: Schedule.at(5) })
    ok(driver.update(a, { priority: "low" }))
    expect(driver.tick(5).map((r) => r.id)).toEqual(["b", "a"])
    driver.checkInvariants()
  })

  it("the job, retry policy and failure policy can change", () => {
    const { driver } = setup()
    const seen: Array<string> = []
    const id = driver.scheduleUnsafe({
      job: () => void seen.push("old"),
      schedule: Schedule.fixedRate(10),
    })
    driver.tick(0)
    ok(
      driver.update(id, {
        job: () => {
          seen.push("new")
          throw new Error("down")
        },
        retry: { maxRetries: 1, base: 1 },
        pauseAfterConsecutiveFailures: 1,
      }),
    )
    const records = driver.tick(30)
    expect(seen).toEqual(["old", "new", "new"])
    expect(records.map((r) => [r.scheduledFor, r.attempt, r.state])).toEqual([
      [10, 1, "scheduled"],
      [11, 2, "paused"],
    ])
  })

  it("a paused task can be updated and stays paused", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(10) })
    driver.pause(id)
    ok(driver.update(id, { schedule: Schedule.fixedRate(7), tags: ["x"] }))
    expect(driver.status(id)).toBe("paused")
    clock.set(3)
    driver.resume(id)
    expect(driver.tick(14).map((r) => r.scheduledFor)).toEqual([7, 14])
  })

  it("bad changes are typed errors and change nothing", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(10) })
    const before = driver.info(id)
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ priority: "urgent" }, "InvalidPriority", "priority"],
      [{ retry: { maxRetries: -1 } }, "InvalidRetryPolicy", "retry.maxRetries"],
      [{ schedule: Schedule.fixedRate(0) }, "InvalidPeriod", "period"],
      [{ missedRuns: "later" }, "InvalidOption", "missedRuns"],
      [{ tags: [""] }, "InvalidOption", "tags[0]"],
      [{ window: -1 }, "InvalidOption", "window"],
      [{ breaker: "nope" }, "InvalidOption", "breaker"],
      [{ id: "other" }, "InvalidOption", "id"],
      [{ missedRun: "skip" }, "InvalidOption", "missedRun"],
      [{ job: 42 }, "InvalidOption", "job"],
      // Valid alone, but the window does not fit the new schedule: nothing of it applies.
      [
        { priority: "high", window: 5, schedule: Schedule.fixedDelay(5) },
        "InvalidOption",
        "window",
      ],
    ]
    for (const [changes, tag, field] of cases) {
      const e = err(driver.update(id, changes as never))
      expect(e).toMatchObject({ _tag: tag, field })
    }
    expect(driver.info(id)).toEqual(before)
    driver.checkInvariants()
  })

  it("unknown and final tasks are not changed: update returns false", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(0) })
    driver.runDue()
    expect(ok(driver.update(id, { priority: "high" }))).toBe(false)
    expect(ok(driver.update("nope", { priority: "high" }))).toBe(false)
  })

  it("a schedule change while a retry is pending lets the retry finish its slot first", () => {
    const { driver } = setup()
    let n = 0
    const id = driver.scheduleUnsafe({
      job: () => {
        if (n++ === 0) throw new Error("x")
      },
      schedule: Schedule.once(0),
      retry: { maxRetries: 1, base: 5 },
    })
    driver.tick(0) // fails; retry due 5
    ok(driver.update(id, { schedule: Schedule.fixedRate(20) }))
    expect(driver.tick(45).map((r) => [r.slot, r.scheduledFor, r.attempt])).toEqual([
      [0, 5, 2],
      [5, 5, 1],
      [25, 25, 1],
      [45, 45, 1],
    ])
  })
})

describe("§15 tags, tasks(filter) and the bulk controls", () => {
  const fleet = () => {
    const { clock, driver } = setup()
    const mail = driver.scheduleUnsafe({
      id: "mail",
      job: noop,
      schedule: Schedule.fixedRate(10),
      tags: ["io", "smtp"],
    })
    const report = driver.scheduleUnsafe({
      id: "report",
      job: noop,
      schedule: Schedule.once(50),
      tags: ["io"],
    })
    const cleanup = driver.scheduleUnsafe({ id: "cleanup", job: noop, schedule: Schedule.once(5) })
    return { clock, driver, mail, report, cleanup }
  }

  it("tasks are listed with filters by state, tag and kind", () => {
    const { driver } = fleet()
    const ids = (filter: Parameters<typeof driver.tasks>[0]) =>
      driver.tasks(filter).map((t) => t.id)
    expect(ids({})).toEqual(["mail", "report", "cleanup"])
    expect(ids({ tag: "io" })).toEqual(["mail", "report"])
    expect(ids({ tag: "smtp" })).toEqual(["mail"])
    expect(ids({ kind: "once" })).toEqual(["report", "cleanup"])
    expect(ids({ tag: "io", kind: "once" })).toEqual(["report"])
    driver.tick(5)
    expect(ids({ state: "done" })).toEqual(["cleanup"])
    expect(driver.info("mail")?.tags).toEqual(["io", "smtp"])
  })

  it("a run sees its task's tags", () => {
    const { driver } = setup()
    let tags: ReadonlyArray<string> | undefined
    driver.scheduleUnsafe({
      job: (run) => {
        tags = run.tags
      },
      schedule: Schedule.once(0),
      tags: ["a", "b", "a"],
    })
    driver.runDue()
    expect(tags).toEqual(["a", "b"]) // duplicates dropped
  })

  it("pauseAll, resumeAll and cancelAll return the ids they changed", () => {
    const { clock, driver } = fleet()
    expect(driver.pauseAll({ tag: "io" })).toEqual(["mail", "report"])
    expect(driver.pauseAll({ tag: "io" })).toEqual([]) // already paused
    expect(driver.tasks({ state: "paused" }).map((t) => t.id)).toEqual(["mail", "report"])
    clock.set(20)
    expect(driver.resumeAll({ tag: "smtp" })).toEqual(["mail"])
    expect(driver.cancelAll({ tag: "io" })).toEqual(["mail", "report"])
    expect(driver.cancelAll({})).toEqual(["cleanup"])
    expect(driver.cancelAll({})).toEqual([])
    driver.checkInvariants()
  })

  it("tags are validated: an array of up to 32 strings of 1 to 64 characters", () => {
    const { driver } = setup()
    const bad: Array<[unknown, string]> = [
      ["io", "tags"],
      [[1], "tags[0]"],
      [["ok", ""], "tags[1]"],
      [["x".repeat(65)], "tags[0]"],
      [Array.from({ length: 33 }, (_, k) => `t${k}`), "tags"],
    ]
    for (const [tags, field] of bad) {
      const e = err(driver.schedule({ job: noop, schedule: Schedule.once(0), tags } as never))
      expect(e).toBeInstanceOf(Errors.InvalidOption)
      expect(e).toMatchObject({ field })
    }
    expect(driver.stats().accepted).toBe(0)
  })
})

describe("§3 catch-up window", () => {
  const occurrences = (os: ReadonlyArray<Task.Occurrence>, kind: Task.Occurrence["kind"]) =>
    os.filter((o) => o.kind === kind)

  it("fixed rate: slots more than the window late are skipped (cause window), the rest run", () => {
    // Period 10 from 0, window 15; the clock jumps from 0 to 45: slots 10, 20 are older than
    // 45 - 15 = 30 and are skipped; 30 and 40 (catch-up) run.
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(10), window: 15 })
    driver.tick(0)
    clock.set(45)
    expect(driver.runDue()).toBe(2)
    const os = driver.drainOccurrences()
    expect(occurrences(os, "skipped")).toEqual([
      {
        kind: "skipped",
        id,
        generation: 1,
        cause: "window",
        first: 10,
        last: 20,
        count: 2,
        exact: true,
        nextSlot: 30,
        at: 45,
      },
    ])
    expect(driver.info(id)).toMatchObject({ scheduledFor: 50, window: 15 })
  })

  it("a run within its window starts late as usual", () => {
    const { clock, driver } = setup()
    driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(1000), window: "1 second" })
    clock.set(900)
    const records = driver.tick(900)
    expect(records.map((r) => [r.scheduledFor, r.startedAt])).toEqual([[0, 900]])
    expect(driver.drainOccurrences()).toEqual([])
  })

  it("a one-shot's window is a deadline: past it the run expires and the task ends failed", () => {
    const { clock, driver } = setup()
    let runs = 0
    const id = driver.scheduleUnsafe({
      job: () => void runs++,
      schedule: Schedule.once(10),
      window: 5,
    })
    clock.set(16)
    expect(driver.runDue()).toBe(0)
    expect(runs).toBe(0)
    expect(driver.status(id)).toBe("failed")
    expect(occurrences(driver.drainOccurrences(), "expired")).toEqual([
      {
        kind: "expired",
        id,
        generation: 1,
        slot: 10,
        scheduledFor: 10,
        attempt: 1,
        deadline: 15,
        at: 16,
      },
    ])
    driver.checkInvariants()
  })

  it("a one-shot's deadline also bounds its retries", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      job: failing(),
      schedule: Schedule.once(0),
      retry: { maxRetries: 3, base: 4 },
      window: 10,
    })
    // Attempts at 0 and 4 fail; the third is due at 12, past the deadline 10.
    expect(driver.tick(100).map((r) => r.scheduledFor)).toEqual([0, 4])
    expect(driver.status(id)).toBe("failed")
    // Recorded when the run would have started (its due time), not where the stepping clock was.
    expect(occurrences(driver.drainOccurrences(), "expired")).toMatchObject([
      { slot: 0, scheduledFor: 12, attempt: 3, deadline: 10, at: 12 },
    ])
    expect(driver.info(id)?.finishedAt).toBe(12)
  })

  it("a one-shot resumed past its deadline expires", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(10), window: 5 })
    driver.pause(id)
    clock.set(30)
    driver.resume(id)
    driver.runDue()
    expect(driver.status(id)).toBe("failed")
  })

  it("cron: late matches beyond the window are skipped", () => {
    const start = Date.UTC(2026, 0, 1)
    const { clock, driver } = setup(start)
    driver.scheduleUnsafe({
      job: noop,
      schedule: Schedule.cron("* * * * *"),
      window: "90 seconds",
    })
    clock.set(start + 10 * 60_000 + 30_000) // 00:10:30: matches 00:01 … 00:10 are due
    const records = driver.tick(clock.now())
    // Only 00:09 and 00:10 are within 90 s of 00:10:30.
    expect(records.map((r) => (r.scheduledFor - start) / 60_000)).toEqual([9, 10])
    expect(occurrences(driver.drainOccurrences(), "skipped")).toMatchObject([
      { cause: "window", count: 8, nextSlot: start + 9 * 60_000 },
    ])
  })

  it("a window on a fixed-delay or custom schedule is an InvalidOption", () => {
    const { driver } = setup()
    for (const schedule of [Schedule.fixedDelay(10), Schedule.custom(() => 5)]) {
      expect(err(driver.schedule({ job: noop, schedule, window: 5 }))).toMatchObject({
        _tag: "InvalidOption",
        field: "window",
      })
    }
  })

  it("window: null removes it", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(10), window: 5 })
    ok(driver.update(id, { window: null }))
    expect(driver.info(id)?.window).toBeUndefined()
    clock.set(100)
    expect(driver.runDue()).toBe(1)
  })
})
