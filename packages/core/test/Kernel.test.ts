import { describe, expect, it } from "vitest"
import { Kernel, Schedule, Task } from "../src/index.ts"

describe("regressions", () => {
  it("reusing an id whose final task expires by age in the same call keeps the counts right", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxAgeMs: 10 } })
    k.schedule({ id: "x", job: "a", schedule: Schedule.once(0) }, 0)
    const run = k.takeDue(0) as Kernel.Run<string>
    k.complete(run, Task.succeeded, 0, false)
    expect(k.status("x")).toBe("done")
    // At 100 the done task is past its age limit: accepting the new "x" first evicts the old one.
    expect(k.schedule({ id: "x", job: "b", schedule: Schedule.once(0) }, 100)).toBe("x")
    k.checkInvariants()
    expect(k.stats()).toMatchObject({ scheduled: 1, done: 0, accepted: 2, removed: 1 })
    expect(k.status("x")).toBe("scheduled")
  })

  it("a caller id that starts with # but is not of the generated form can be queried and cancelled", () => {
    const k = new Kernel.Kernel<string>()
    for (const id of ["#foo", "#1.0", "#01.1", "#"]) {
      expect(k.schedule({ id, job: id, schedule: Schedule.once(5) }, 0)).toBe(id)
      expect(k.status(id)).toBe("scheduled")
      expect(k.info(id)?.id).toBe(id)
    }
    expect(k.cancel("#1.0", 0)).toBe(true)
    expect(k.status("#1.0")).toBe("cancelled")
    expect(k.status("#foo")).toBe("scheduled")
    k.checkInvariants()
  })
})
