/**
 * The kernel's storage and read-only queries (internal/rows, table, finalRing, records,
 * queries) and its option checks (internal/kernelOptions), seen through `Kernel`: id lookups,
 * retention, the info and definition of tasks without a side object, and bad options.
 */
import { describe, expect, it } from "vitest"
import { Errors, Kernel, Schedule, Task } from "../src/index.ts"

const take = <J>(k: Kernel.Kernel<J>, now: number): Kernel.Run<J> => {
  const run = k.takeDue(now)
  if (run === undefined) throw new Error(`nothing due at ${now}`)
  return run
}

/** A kernel whose rows 0..11 hold plain one-shots with generated ids `#<row>.1`. */
const twelve = () => {
  const k = new Kernel.Kernel<string>()
  const ids = Array.from({ length: 12 }, (_, n) =>
    k.schedule({ job: `j${n}`, schedule: Schedule.once(100) }, 0),
  )
  return { k, ids }
}

describe("generated ids are looked up exactly (SPEC §9)", () => {
  it("each generated id finds its own row", () => {
    const { k, ids } = twelve()
    expect(ids.slice(0, 3)).toEqual(["#0.1", "#1.1", "#2.1"])
    ids.forEach((id, n) => expect(k.rowOf(id)).toBe(n))
    expect(k.rowOf("#11.1")).toBe(11)
  })

  it.each([
    "#",
    "#.1",
    "#1",
    "#1.",
    "#01.1",
    "#1.01",
    "#1.0",
    "#1x.1",
    "#1.1x",
    "#1.x",
    "#1/.1",
    "#1:.1",
    "#1./",
    "#1.:",
    "#-1.1",
    "#1.-1",
    "#1.2",
    "#12.1",
    "#99999999999.1",
    "#1.99999999999",
  ])("%s is no task's id", (id) => {
    const { k } = twelve()
    expect(k.rowOf(id)).toBe(-1)
    expect(k.status(id)).toBe("unknown")
    expect(k.info(id)).toBeUndefined()
  })

  it("an id that is not a string finds nothing, and a row's number is not its id", () => {
    const { k } = twelve()
    expect(k.rowOf(1 as never)).toBe(-1)
    expect(k.status(1 as never)).toBe("unknown")
    expect(k.rowOf("1")).toBe(-1)
  })

  it("a caller id starting with # is looked up by the caller's id", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ job: "a", schedule: Schedule.once(100) }, 0) // #0.1
    expect(k.schedule({ id: "#1", job: "b", schedule: Schedule.once(100) }, 0)).toBe("#1")
    expect(k.schedule({ id: "#0.1x", job: "c", schedule: Schedule.once(100) }, 0)).toBe("#0.1x")
    expect([k.jobOf("#1"), k.jobOf("#0.1x"), k.jobOf("#0.1")]).toEqual(["b", "c", "a"])
    expect(k.rowOf("#1")).toBe(1)
    // Row 1 has a caller id, so its generated form is not an id of it.
    expect(k.rowOf("#1.1")).toBe(-1)
  })

  it("the generated id of a task whose row was reused is no longer known", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxFinished: 0 } })
    const first = k.schedule({ job: "a", schedule: Schedule.once(0) }, 0)
    k.complete(take(k, 0), Task.succeeded, 0, false)
    const second = k.schedule({ job: "b", schedule: Schedule.once(0) }, 0)
    expect([first, second]).toEqual(["#0.1", "#0.2"])
    expect(k.status(first as string)).toBe("unknown")
    expect(k.jobOf(second as string)).toBe("b")
  })
})

describe("a task without a side object reads as defaults (SPEC §15, §18)", () => {
  it("definition of a plain one-shot", () => {
    const k = new Kernel.Kernel<string>()
    const id = k.schedule({ job: "a", schedule: Schedule.once(100) }, 0) as string
    expect(k.definition(id, 0)).toEqual({
      state: "scheduled",
      definition: {
        plan: undefined,
        at: 100,
        priority: "normal",
        retry: expect.objectContaining({ maxRetries: 0 }),
        missedRuns: "catch-up",
        pauseAfter: 0,
        tags: [],
        windowMs: expect.any(Number),
        breaker: undefined,
        more: { job: "a" },
      },
    })
    expect(k.definition("nobody", 0)).toBeUndefined()
  })
})

describe("kernel options: breakers (SPEC §7, §13)", () => {
  it.each([5, "smtp", true])("breakers %j is refused, naming the field", (breakers) => {
    let thrown: unknown
    try {
      new Kernel.Kernel({ breakers: breakers as never })
    } catch (e) {
      thrown = e
    }
    expect(thrown).toBeInstanceOf(Errors.InvalidOption)
    expect(thrown).toMatchObject({
      field: "breakers",
      value: breakers,
      message: `breakers must be an object of breaker policies by name, got ${Errors.show(breakers)}`,
    })
  })
})
