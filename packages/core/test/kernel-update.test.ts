/**
 * `Kernel.update` (SPEC §15) at the edges its spec tests leave: an option given as `undefined`,
 * a missed-run policy changed alone, and a change that does not touch the schedule while a
 * manual run waits.
 */
import { describe, expect, it } from "vitest"
import { Kernel, Schedule, Task } from "../src/index.ts"

describe("update: what each change writes (SPEC §15)", () => {
  it("a job given as undefined keeps the task's job", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10) }, 0)
    expect(k.update("a", { job: undefined }, 1)).toBe(true)
    expect(k.jobOf("a")).toBe("a")
    expect(k.update("a", { job: "b" }, 1)).toBe(true)
    expect(k.jobOf("a")).toBe("b")
  })

  it("a missed-run policy changed alone is the task's policy from then on", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10) }, 0)
    expect(k.update("a", { missedRuns: "skip" }, 1)).toBe(true)
    expect(k.definition("a", 1)?.definition).toMatchObject({ missedRuns: "skip" })
  })

  it("a change that leaves the schedule keeps a waiting manual run (SPEC §19.1)", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(100, { delay: 100 }) }, 0)
    expect(k.trigger("a", 5)).toBe(true)
    expect(k.update("a", { tags: ["x"] }, 6)).toBe(true)
    expect(k.takeDue(7)).toMatchObject({ slot: 5, manual: true, tags: ["x"] })
  })

  it("a raise to high priority moves the task ahead of its slot's others (SPEC §4)", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(10) }, 0)
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(10) }, 0)
    expect(k.update("b", { priority: "high" }, 1)).toBe(true)
    expect([k.takeDue(10)?.job, k.takeDue(10)?.job]).toEqual(["b", "a"])
  })

  it("a change that leaves schedule and priority keeps the task's place among its slot's others", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(10) }, 0)
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(10) }, 0)
    expect(k.update("a", { tags: ["x"] }, 1)).toBe(true)
    expect([k.takeDue(10)?.job, k.takeDue(10)?.job]).toEqual(["a", "b"])
    k.checkInvariants()
  })

  it("leaving a breaker keeps a pause asked for by hand while the task runs (SPEC §15)", () => {
    const k = new Kernel.Kernel<string>({ breakers: { b: { failures: 1, coolDown: 10 } } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(50), breaker: "b" }, 0)
    const run = k.takeDue(0) as Kernel.Run<string>
    expect(k.pause("a", 1)).toBe(true)
    expect(k.update("a", { breaker: null }, 2)).toBe(true)
    expect(k.info("a")).toMatchObject({
      state: "running",
      pausedReason: "manual",
      breaker: undefined,
    })
    expect(k.complete(run, Task.succeeded, 3, true)).toMatchObject({ state: "paused" })
    k.checkInvariants()
  })
})
