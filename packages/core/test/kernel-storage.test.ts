/**
 * The kernel's task table (internal/table) as a caller sees it: its row capacity and the bytes
 * its typed arrays hold, and side objects on rows far from the first (the table grows its side
 * object array only up to the last row that needs one).
 */
import { describe, expect, it } from "vitest"
import { Kernel, Schedule, Task } from "../src/index.ts"
import type { Rows } from "../src/internal/rows.ts"

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
    expect(k.info("tagged")).toMatchObject({
      id: "tagged",
      tags: ["x"],
      kind: "fixed-rate",
      priority: "high",
    })
    // The plain rows below it still read as having none.
    expect(k.info("#39.1")).toMatchObject({ tags: [], kind: "once" })
    expect(k.tasks({ tag: "x" }).map((t) => t.id)).toEqual(["tagged"])
    k.checkInvariants()
  })
})

describe("a row given to a new task carries nothing of the evicted one", () => {
  it("a plain task on the row of an evicted named, tagged task has a generated id and no tags", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxFinished: 0 } })
    k.schedule({ id: "old", job: "old", schedule: Schedule.once(0), tags: ["t"] }, 0)
    const run = k.takeDue(0)
    if (run === undefined) throw new Error("old is due")
    k.complete(run, Task.succeeded, 0, false)
    expect(k.status("old")).toBe("unknown")
    const id = k.schedule({ job: "new", schedule: Schedule.once(5) }, 0) as string
    expect(id).toBe("#0.2")
    expect(k.info(id)).toMatchObject({ id: "#0.2", tags: [], kind: "once", state: "scheduled" })
    expect(k.tasks({ tag: "t" })).toEqual([])
    expect(k.taskIds()).toEqual(["#0.2"])
    k.checkInvariants()
  })

  it("generations wrap from 2^32-1 to 1, never to 0", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxFinished: 0 } })
    k.schedule({ job: "a", schedule: Schedule.once(0) }, 0)
    // Stand-in for 2^32-2 reuses of row 0: set its generation to the last one by hand.
    ;(k as unknown as { rows: Rows<string> }).rows.t.setGen(0, 0xffff_ffff)
    const run = k.takeDue(0)
    if (run === undefined) throw new Error("a is due")
    expect(run.id).toBe("#0.4294967295")
    k.complete(run, Task.succeeded, 0, false)
    const id = k.schedule({ job: "b", schedule: Schedule.once(5) }, 0)
    expect(id).toBe("#0.1")
    expect(k.info("#0.1")).toMatchObject({ generation: 1, state: "scheduled" })
    k.checkInvariants()
  })
})

describe("dead heap entries are compacted once they are more than half (SPEC §8)", () => {
  it("half dead is kept; one more dead entry compacts the heap", () => {
    const k = new Kernel.Kernel<string>()
    for (const id of ["a", "b", "c", "d"])
      k.schedule({ id, job: id, schedule: Schedule.once(10) }, 0)
    k.cancel("a", 1)
    k.cancel("b", 1)
    expect(k.stats()).toMatchObject({ heapEntries: 4, deadEntries: 2 })
    k.cancel("c", 1)
    expect(k.stats()).toMatchObject({ heapEntries: 1, deadEntries: 0, scheduled: 1 })
    k.checkInvariants()
  })
})
