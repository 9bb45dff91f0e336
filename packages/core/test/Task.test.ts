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

  it("a cancelled task's info says when it was cancelled", () => {
    const { clock, driver } = setup(0)
    const id = driver.scheduleUnsafe({ job: () => {}, schedule: { _tag: "Once", delay: 10 } })
    clock.set(3)
    driver.cancel(id)
    expect(driver.info(id)).toMatchObject({ state: "cancelled", finishedAt: 3, runNumber: 0 })
  })
})
