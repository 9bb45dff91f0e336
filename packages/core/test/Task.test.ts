import { describe, expect, it } from "vitest"
import { Heap, Lifecycle, Task } from "../src/index.ts"
import { setup } from "./support.ts"

describe("models", () => {
  it("priorities are listed highest first; a priority's index is its rank in the order key", () => {
    expect(Task.priorities).toEqual(["high", "normal", "low"])
    // The rank stride puts any priority above any sequence number (SPEC §4).
    const key = (p: Task.Priority, seq: number) =>
      Task.priorities.indexOf(p) * Heap.RANK_STRIDE + seq
    expect(key("high", 2 ** 50)).toBeLessThan(key("normal", 0))
    expect(key("normal", 2 ** 50)).toBeLessThan(key("low", 0))
  })

  it("TaskState is the lifecycle's state type", () => {
    const s: Task.TaskState = Lifecycle.states[0] as Task.TaskState
    expect(s).toBe("scheduled")
  })
})

describe("constructors", () => {
  it("succeeded is one shared outcome; failed carries its error", () => {
    expect(Task.succeeded).toEqual({ kind: "succeeded" })
    const e = new Error("x")
    expect(Task.failed(e)).toEqual({ kind: "failed", error: e })
  })
})

describe("getters", () => {
  it("a finished task's info says when it ended, and its last failure", () => {
    const { clock, driver } = setup(0)
    const e = new Error("nope")
    const id = driver.scheduleUnsafe({
      job: () => {
        clock.advance(4)
        throw e
      },
      schedule: { _tag: "Once", delay: 10 },
    })
    driver.runUntil(20)
    expect(driver.info(id)).toMatchObject({
      state: "failed",
      scheduledFor: 10,
      runNumber: 1,
      finishedAt: 14,
      lastFailure: { kind: "failed", error: e },
    })
  })

  it("a finished task's info shows the attempt that ran last, and keeps its last failure (SPEC §6.9)", () => {
    const { clock, driver } = setup(0)
    const e = new Error("once")
    let runs = 0
    const id = driver.scheduleUnsafe({
      job: () => {
        runs += 1
        clock.advance(1)
        if (runs === 1) throw e
      },
      schedule: { _tag: "Once", delay: 10 },
      retry: { maxRetries: 2, base: 5 },
    })
    driver.runUntil(10)
    expect(driver.info(id)).toMatchObject({ state: "scheduled", attempt: 2 })
    driver.runUntil(100)
    expect(driver.info(id)).toMatchObject({
      state: "done",
      attempt: 2,
      lastFailure: { kind: "failed", error: e },
    })
    // Failed on every attempt: the last one's number.
    const f = driver.scheduleUnsafe({
      job: () => {
        throw e
      },
      schedule: { _tag: "Once", delay: 10 },
      retry: { maxRetries: 2, base: 5 },
    })
    driver.runUntil(1_000)
    expect(driver.info(f)).toMatchObject({ state: "failed", attempt: 3 })
  })

  it("a cancelled task's info says when it was cancelled", () => {
    const { clock, driver } = setup(0)
    const id = driver.scheduleUnsafe({ job: () => {}, schedule: { _tag: "Once", delay: 10 } })
    clock.set(3)
    driver.cancel(id)
    expect(driver.info(id)).toMatchObject({ state: "cancelled", finishedAt: 3, runNumber: 0 })
  })
})

describe("lateness (SPEC §6.8)", () => {
  it("counts from the due time, or from acceptance when that is later; never negative", () => {
    // Due after acceptance: from the due time.
    expect(Task.lateness({ scheduledFor: 1_000, startedAt: 1_250 }, 500)).toBe(250)
    // Due a day before acceptance (a past `at`): from acceptance only.
    expect(Task.lateness({ scheduledFor: 0, startedAt: 86_400_030 }, 86_400_000)).toBe(30)
    // Acceptance unknown: from the due time.
    expect(Task.lateness({ scheduledFor: 0, startedAt: 40 }, Number.NEGATIVE_INFINITY)).toBe(40)
    // Started at (or, by a clock step, before) the later of the two: 0.
    expect(Task.lateness({ scheduledFor: 100, startedAt: 100 }, 0)).toBe(0)
    expect(Task.lateness({ scheduledFor: 100, startedAt: 90 }, 0)).toBe(0)
    expect(Task.lateness({ scheduledFor: 0, startedAt: 90 }, 100)).toBe(0)
  })

  it("a manual run counts no lateness (SPEC §19.1); any other run counts its lateness", () => {
    expect(
      Task.countedLateness({ scheduledFor: 0, startedAt: 2_239, manual: true }, 0),
    ).toBeUndefined()
    expect(Task.countedLateness({ scheduledFor: 0, startedAt: 2_239, manual: false }, 0)).toBe(
      2_239,
    )
    expect(Task.countedLateness({ scheduledFor: 0, startedAt: 90 }, 40)).toBe(50)
  })
})
