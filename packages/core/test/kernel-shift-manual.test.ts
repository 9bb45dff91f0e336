/**
 * `Kernel.shift` (SPEC §2.6) while a manual run (SPEC §19.1) stands in for a task's pending run:
 * the kept run is a delay-based time like any other, so it moves with the step.
 */
import { describe, expect, it } from "vitest"
import { Kernel, Schedule } from "../src/index.ts"

const succeeded = { kind: "succeeded" } as const

describe("shift: the run a manual run stands in for (SPEC §2.6, §19.1)", () => {
  it("a fixed-rate task triggered before a forward step resumes its grid moved by the step", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(100) }, 0)
    k.complete(k.takeDue(0) as Kernel.Run<string>, succeeded, 0, false) // next slot 100
    expect(k.trigger("a", 5)).toBe(true)
    k.shift(1000) // the wall clock stepped 1000 ms ahead: slot 100 is now 1100
    const manual = k.takeDue(1005) as Kernel.Run<string>
    expect(manual).toMatchObject({ id: "a", slot: 1005 })
    k.complete(manual, succeeded, 1005, false)
    expect(k.info("a")).toMatchObject({ state: "scheduled", scheduledFor: 1100 })
    expect(k.takeDue(1099)).toBeUndefined()
    const next = k.takeDue(1100) as Kernel.Run<string>
    expect(next).toMatchObject({ id: "a", slot: 1100 })
    k.complete(next, succeeded, 1100, false)
    expect(k.info("a")).toMatchObject({ scheduledFor: 1200 })
  })

  it("a fixed-delay task's kept run moves with a backward step taken while its manual run runs", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "d", job: "d", schedule: Schedule.fixedDelay(100, { delay: 500 }) }, 1000)
    expect(k.trigger("d", 1010)).toBe(true)
    const manual = k.takeDue(1010) as Kernel.Run<string>
    k.shift(-300) // stepped back while it runs: the kept slot 1500 is now 1200
    k.complete(manual, succeeded, 720, false)
    expect(k.info("d")).toMatchObject({ state: "scheduled", scheduledFor: 1200 })
  })

  it("an at task's pending retry kept under a manual run moves with the step; its instant would not", () => {
    const k = new Kernel.Kernel<string>()
    const retry = { maxRetries: 2, base: 500 }
    k.schedule({ id: "x", job: "x", schedule: Schedule.at(1000), retry }, 0)
    const first = k.takeDue(1000) as Kernel.Run<string>
    k.complete(first, { kind: "failed", error: "e" }, 1100, false) // retry due 1600
    expect(k.trigger("x", 1200)).toBe(true)
    const manual = k.takeDue(1200) as Kernel.Run<string>
    k.shift(1000) // the retry is a delay: 500 ms after the failure, now 2600
    k.complete(manual, succeeded, 2300, false)
    expect(k.info("x")).toMatchObject({ state: "scheduled", scheduledFor: 2600, attempt: 2 })
    expect(k.takeDue(2599)).toBeUndefined()

    const y = new Kernel.Kernel<string>()
    y.schedule({ id: "y", job: "y", schedule: Schedule.at(5000) }, 0)
    expect(y.trigger("y", 100)).toBe(true)
    const run = y.takeDue(100) as Kernel.Run<string>
    y.shift(1000) // an instant on the calendar stays where it is
    y.complete(run, succeeded, 1200, false)
    expect(y.info("y")).toMatchObject({ state: "scheduled", scheduledFor: 5000 })
  })
})
