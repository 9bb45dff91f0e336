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
})
