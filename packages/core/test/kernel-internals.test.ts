/**
 * The kernel's smaller entry points and the edges of its internals (accept, run, pause, update,
 * manual) that the SPEC tests reach only through the driver, or not at all: each test pins a
 * behaviour a caller of `Kernel` can see.
 */
import { describe, expect, it } from "vitest"
import { Errors, Kernel, Schedule, Task } from "../src/index.ts"

const take = <J>(k: Kernel.Kernel<J>, now: number, limit?: number): Kernel.Run<J> => {
  const run = limit === undefined ? k.takeDue(now) : k.takeDue(now, limit)
  if (run === undefined) throw new Error(`nothing due at ${now}`)
  return run
}

const failed: Task.Outcome = { kind: "failed", error: "boom" }

describe("the kernel's counters and row lookups", () => {
  it("rowOf gives a task's table row (-1 for an unknown id), below rowCapacity", () => {
    const k = new Kernel.Kernel<string>()
    expect(k.rowOf("nobody")).toBe(-1)
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(10) }, 0)
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(20) }, 0)
    expect([k.rowOf("a"), k.rowOf("b")]).toEqual([0, 1])
    expect(k.rowCapacity).toBeGreaterThan(1)
    for (let n = 0; n < 40; n++) k.schedule({ job: `j${n}`, schedule: Schedule.once(30) }, 0)
    expect(k.rowCapacity).toBeGreaterThanOrEqual(42)
  })

  it("scheduledCount and pendingOccurrenceCount follow pauses and drains", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10) }, 0)
    k.schedule({ id: "b", job: "b", schedule: Schedule.fixedRate(10) }, 0)
    expect(k.scheduledCount).toBe(2)
    expect(k.pendingOccurrenceCount).toBe(0)
    k.pause("a", 1)
    expect(k.scheduledCount).toBe(1)
    expect(k.pendingOccurrenceCount).toBe(1)
    expect(k.drainOccurrences()).toMatchObject([{ kind: "paused", id: "a", reason: "manual" }])
    expect(k.pendingOccurrenceCount).toBe(0)
  })
})

describe("Run: what a driver hands to a job", () => {
  it("a run built without tags or manual flag is an ordinary run of a generated id", () => {
    const run = new Kernel.Run(2, 3, undefined, "job", 10, 10, 11, 1, 1, undefined)
    expect(run.manual).toBe(false)
    expect(run.named).toBe(false)
    expect(run.id).toBe("#2.3")
    expect(run.toJSON()).toEqual({
      id: "#2.3",
      generation: 3,
      slot: 10,
      scheduledFor: 10,
      startedAt: 11,
      attempt: 1,
      runNumber: 1,
      tags: [],
    })
  })

  it("a triggered run says it is manual in its JSON (SPEC §19.1)", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "t", job: "t", schedule: Schedule.fixedRate(100) }, 0)
    expect(k.trigger("t", 5)).toBe(true)
    const run = take(k, 5)
    expect(run.manual).toBe(true)
    expect(run.named).toBe(true)
    expect(run.toJSON()).toMatchObject({ id: "t", startedAt: 5, manual: true })
  })
})

describe("update: a changes argument that is no object (SPEC §15)", () => {
  it.each([null, 5, "x"])("%j is refused as field changes, and nothing changes", (changes) => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10) }, 0)
    const before = k.info("a")
    const r = k.update("a", changes as never, 1)
    expect(r).toBeInstanceOf(Errors.InvalidOption)
    expect(r).toMatchObject({
      field: "changes",
      value: changes,
      message: `changes must be an object, got ${JSON.stringify(changes)}`,
    })
    expect(k.info("a")).toEqual(before)
  })
})

describe("resume and pause of a running task (SPEC §15)", () => {
  it("resume of a running task with nothing to withdraw is false and changes nothing", () => {
    const k = new Kernel.Kernel<string>()
    const t = k.schedule({ job: "plain", schedule: Schedule.once(0) }, 0) as Task.TaskId
    const run = take(k, 0)
    expect(k.resume(t, 1)).toBe(false)
    expect(k.status(t)).toBe("running")
    expect(k.complete(run, Task.succeeded, 2, true)).toMatchObject({ state: "done" })
  })

  it("resume of a running task withdraws a requested pause, and is false when none was", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "r", job: "r", schedule: Schedule.fixedRate(10) }, 0)
    const run = take(k, 0)
    expect(k.resume("r", 1)).toBe(false)
    expect(k.info("r")?.pausedReason).toBeUndefined()
    expect(k.pause("r", 1)).toBe(true)
    expect(k.info("r")?.pausedReason).toBe("manual")
    expect(k.resume("r", 2)).toBe(true)
    expect(k.info("r")?.pausedReason).toBeUndefined()
    expect(k.complete(run, Task.succeeded, 3, true)).toMatchObject({
      state: "scheduled",
      nextSlot: 10,
    })
    k.checkInvariants()
  })

  it.each(["done", "failed", "cancelled"] as const)("pause of a %s task is false", (final) => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "f", job: "f", schedule: Schedule.once(0) }, 0)
    if (final === "cancelled") k.cancel("f", 0)
    else k.complete(take(k, 0), final === "done" ? Task.succeeded : failed, 0, false)
    const before = k.info("f")
    expect(k.pause("f", 1)).toBe(false)
    expect(k.info("f")).toEqual(before)
    expect(k.stats()).toMatchObject({ paused: 0, [final]: 1 })
  })

  it("a pause by hand of a run its breaker asked to pause makes the pause a manual one", () => {
    const k = new Kernel.Kernel<string>({ breakers: { b: { failures: 1, coolDown: 10 } } })
    k.schedule({ id: "f", job: "f", schedule: Schedule.once(0), breaker: "b" }, 0)
    k.schedule({ id: "r", job: "r", schedule: Schedule.fixedRate(50), breaker: "b" }, 0)
    const first = take(k, 0)
    const second = take(k, 0)
    const [fail, keep] = first.id === "f" ? [first, second] : [second, first]
    k.complete(fail, failed, 1, false)
    expect(k.info("r")?.state).toBe("running")
    // The breaker outranks nothing: the pause by hand replaces its request (false: not a new pause).
    expect(k.pause("r", 2)).toBe(false)
    const record = k.complete(keep, Task.succeeded, 3, true)
    expect(record).toMatchObject({ state: "paused", pausedReason: "manual" })
    expect(k.info("r")).toMatchObject({ state: "paused", pausedReason: "manual" })
    // The breaker closing later does not resume a task paused by hand.
    expect(k.takeDue(20)).toBeUndefined()
    expect(k.status("r")).toBe("paused")
    k.checkInvariants()
  })
})

describe("accept: a one-shot keeps every option it was given (SPEC §18)", () => {
  // A one-shot reads neither option, but its definition is what `Declared.decide` compares with
  // the declared task: an option dropped here would read as a change on every deploy.
  it("a missed-run policy alone is kept in its definition", () => {
    const k = new Kernel.Kernel<string>()
    const t = k.schedule({ job: "a", schedule: Schedule.once(10), missedRuns: "skip" }, 0)
    expect(k.definition(t as string, 0)?.definition).toMatchObject({ missedRuns: "skip" })
  })

  it("a failure policy alone is kept in its definition", () => {
    const k = new Kernel.Kernel<string>()
    const t = k.schedule(
      { job: "b", schedule: Schedule.once(10), pauseAfterConsecutiveFailures: 2 },
      0,
    )
    expect(k.definition(t as string, 0)?.definition).toMatchObject({ pauseAfter: 2 })
  })
})

describe("accept: which clock a task's times follow (SPEC §2)", () => {
  it("a custom schedule names calendar instants: a wall-clock step does not move its slots", () => {
    const k = new Kernel.Kernel<string>()
    const t = k.schedule(
      {
        job: "custom",
        schedule: Schedule.custom((slot, at) => (slot === undefined ? at + 5_000 : slot + 5_000)),
      },
      0,
    ) as Task.TaskId
    expect(k.info(t)?.scheduledFor).toBe(5_000)
    k.shift(10_000)
    expect(k.info(t)?.scheduledFor).toBe(5_000)
    k.complete(take(k, 5_000), Task.succeeded, 5_000, false)
    k.shift(1_000)
    expect(k.info(t)?.scheduledFor).toBe(10_000)
    k.checkInvariants()
  })
})

describe("manual runs: what the kernel keeps and reports (SPEC §19)", () => {
  it("a trigger at 0 starts at 0: the manual run waits for nothing (SPEC §19.1)", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "t", job: "t", schedule: Schedule.fixedRate(100, { delay: 100 }) }, 0)
    expect(k.trigger("t", 0)).toBe(true)
    expect(take(k, 0)).toMatchObject({ slot: 0, startedAt: 0, manual: true })
  })

  it("a pause by hand while a manual run runs keeps that run as the task's current one", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "t", job: "t", schedule: Schedule.fixedRate(100, { delay: 100 }) }, 0)
    k.trigger("t", 10)
    const run = take(k, 10)
    expect(k.pause("t", 11)).toBe(true)
    expect(k.info("t")).toMatchObject({
      state: "running",
      scheduledFor: 10,
      pausedReason: "manual",
    })
    expect(k.complete(run, Task.succeeded, 12, true)).toMatchObject({
      state: "paused",
      nextSlot: 100,
      pausedReason: "manual",
    })
    expect(k.info("t")).toMatchObject({ state: "paused", scheduledFor: 100 })
    k.checkInvariants()
  })

  it("a manual run's failure is the task's last failure; its success leaves the last one", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "t", job: "t", schedule: Schedule.fixedRate(100) }, 0)
    k.complete(take(k, 0), Task.failed("first"), 1, false)
    expect(k.info("t")?.lastFailure).toEqual(Task.failed("first"))
    k.trigger("t", 5)
    k.complete(take(k, 5), Task.succeeded, 6, false)
    expect(k.info("t")?.lastFailure).toEqual(Task.failed("first"))
    k.trigger("t", 7)
    k.complete(take(k, 7), Task.failed("second"), 8, false)
    expect(k.info("t")).toMatchObject({
      lastFailure: Task.failed("second"),
      consecutiveFailures: 1,
      scheduledFor: 100,
    })
  })

  it("a manual run's end applies retention by age, and gives no record unless asked", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxAgeMs: 10 } })
    k.schedule({ id: "old", job: "old", schedule: Schedule.once(0) }, 0)
    k.schedule({ id: "t", job: "t", schedule: Schedule.fixedRate(1_000, { delay: 1_000 }) }, 0)
    k.complete(take(k, 0), Task.succeeded, 0, false)
    expect(k.status("old")).toBe("done")
    k.trigger("t", 50)
    expect(k.complete(take(k, 50), Task.succeeded, 50, false)).toBeUndefined()
    expect(k.status("old")).toBe("unknown")
    expect(k.status("t")).toBe("scheduled")
  })

  it("retry by hand drops a one-shot's deadline (SPEC §19.2)", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "once", job: "once", schedule: Schedule.once(0), window: 5 }, 0)
    k.complete(take(k, 0), Task.failed("no"), 0, false)
    expect(k.info("once")).toMatchObject({ state: "failed", window: 5 })
    expect(k.retry("once", 100)).toBe(true)
    expect(k.info("once")).toMatchObject({ state: "scheduled", window: undefined })
  })
})

describe("retry of one slot: which slot is pending (SPEC §19.7)", () => {
  it("a fixed-delay task resumed late has its resume time as pending slot, not its held one", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "d", job: "d", schedule: Schedule.fixedDelay(10) }, 0)
    k.complete(take(k, 10), Task.failed("x"), 12, false)
    expect(k.info("d")?.scheduledFor).toBe(22)
    k.pause("d", 13)
    k.resume("d", 50)
    expect(k.info("d")).toMatchObject({ state: "scheduled", scheduledFor: 50, attempt: 1 })
    const failedRun = { lastAttempt: 1, failed: true }
    expect(k.retry("d", 51, { slot: 50, runs: failedRun })).toMatchObject({
      _tag: "ManualRunRefused",
      message: expect.stringContaining("slot 50 is its pending run"),
    })
    expect(k.retry("d", 51, { slot: 10, runs: failedRun })).toBe(true)
    expect(take(k, 51)).toMatchObject({ slot: 10, attempt: 2, manual: true })
  })
})
