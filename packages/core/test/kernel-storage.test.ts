/**
 * The kernel's task table (internal/table) as a caller sees it: its row capacity and the bytes
 * its typed arrays hold, and side objects on rows far from the first (the table grows its side
 * object array only up to the last row that needs one).
 */
import { describe, expect, it } from "vitest"
import { Kernel, Schedule } from "../src/index.ts"

describe("the task table's capacity (32 bytes a row)", () => {
  it("starts at 64 rows and doubles when the 65th task arrives, keeping every row", () => {
    const k = new Kernel.Kernel<string>()
    expect(k.rowCapacity).toBe(64)
    const ids: Array<string> = []
    for (let n = 0; n < 64; n++) {
      ids.push(k.schedule({ job: `j${n}`, schedule: Schedule.once(n + 1) }, 0) as string)
    }
    expect(k.rowCapacity).toBe(64)
    const before = k.arrayBytes
    ids.push(k.schedule({ id: "last", job: "last", schedule: Schedule.once(100) }, 0) as string)
    expect(k.rowCapacity).toBe(128)
    // The table's buffer doubled (64 more rows of 32 bytes); the heap may have grown too.
    expect(k.arrayBytes - before).toBeGreaterThanOrEqual(64 * 32)
    for (const [n, id] of ids.entries()) {
      expect(k.info(id)).toMatchObject({ state: "scheduled", scheduledFor: n < 64 ? n + 1 : 100 })
    }
    expect(k.jobOf("last")).toBe("last")
    k.checkInvariants()
  })
})

describe("side objects on rows past the first ones", () => {
  it("a task with a side object on row 40, after 40 plain ones, keeps its own fields", () => {
    const k = new Kernel.Kernel<string>()
    for (let n = 0; n < 40; n++) k.schedule({ job: `j${n}`, schedule: Schedule.once(10) }, 0)
    k.schedule(
      { id: "tagged", job: "t", schedule: Schedule.fixedRate(10), tags: ["x"], priority: "high" },
      0,
    )
    expect(k.rowOf("tagged")).toBe(40)
    expect(k.info("tagged")).toMatchObject({ id: "tagged", tags: ["x"], kind: "fixed-rate", priority: "high" })
    // The plain rows below it still read as having none.
    expect(k.info("#39.1")).toMatchObject({ tags: [], kind: "once" })
    expect(k.tasks({ tag: "x" }).map((t) => t.id)).toEqual(["tagged"])
    k.checkInvariants()
  })
})
