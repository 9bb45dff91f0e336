/**
 * The kernel's breakers as a caller of `Kernel` sees them (SPEC §7): several breakers open at
 * once, each half-open at its own time; a shared breaker outliving a member that leaves it; the
 * kernel's next wake-up being the earliest half-open time of the open ones.
 */
import { describe, expect, it } from "vitest"
import { Kernel, Schedule, type Task } from "../src/index.ts"

const take = <J>(k: Kernel.Kernel<J>, now: number): Kernel.Run<J> => {
  const run = k.takeDue(now)
  if (run === undefined) throw new Error(`nothing due at ${now}`)
  return run
}

const failed: Task.Outcome = { kind: "failed", error: "boom" }

/** A fixed-rate task every 10 ms at 0, with its own breaker: open after one failed slot. */
const rated = (k: Kernel.Kernel<string>, id: string, coolDown: number) =>
  k.schedule(
    { id, job: id, schedule: Schedule.fixedRate(10), breaker: { failures: 1, coolDown } },
    0,
  )

describe("SPEC §7 several breakers: each half-open at its own time", () => {
  it("the earlier cool-down's end lets its probe through and leaves the later breaker open", () => {
    const k = new Kernel.Kernel<string>()
    rated(k, "a", 100)
    rated(k, "b", 300)
    k.complete(take(k, 0), failed, 0, false) // a opens, half-open at 100
    k.complete(take(k, 0), failed, 0, false) // b opens, half-open at 300
    expect(k.nextSlot()).toBe(100)
    const probe = take(k, 100)
    expect(probe.id).toBe("a")
    expect(k.breaker("a")).toMatchObject({ state: "half-open", probe: "a" })
    expect(k.breaker("b")).toMatchObject({ state: "open", halfOpenAt: 300, held: ["b"] })
    expect(k.status("b")).toBe("paused")
    expect(k.nextSlot()).toBe(300)
    k.checkInvariants()
  })

  it("the wake-up is the earliest open breaker's half-open time, whatever breakers were made after it", () => {
    const k = new Kernel.Kernel<string>()
    rated(k, "a", 100)
    k.complete(take(k, 0), failed, 0, false) // a opens, half-open at 100
    // A later task with a closed breaker of its own, due well after it.
    k.schedule(
      { id: "c", job: "c", schedule: Schedule.once(5000), breaker: { failures: 1, coolDown: 1 } },
      1,
    )
    expect(k.breakers().map((b) => [b.name, b.state])).toEqual([
      ["a", "open"],
      ["c", "closed"],
    ])
    expect(k.nextSlot()).toBe(100)
    expect(take(k, 100).id).toBe("a")
  })
})

describe("SPEC §7 a shared breaker outlives a member that leaves it", () => {
  it("an open shared breaker still goes half-open after one of its tasks is cancelled", () => {
    const k = new Kernel.Kernel<string>({ breakers: { smtp: { failures: 1, coolDown: 100 } } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10), breaker: "smtp" }, 0)
    k.schedule(
      { id: "b", job: "b", schedule: Schedule.fixedRate(10, { delay: 1 }), breaker: "smtp" },
      0,
    )
    k.complete(take(k, 0), failed, 0, false) // smtp opens at 0, half-open at 100; b is held
    expect(k.breaker("smtp")).toMatchObject({ state: "open", held: ["a", "b"] })
    expect(k.cancel("b", 5)).toBe(true)
    expect(k.breaker("smtp")).toMatchObject({ state: "open", tasks: ["a"], held: ["a"] })
    expect(k.nextSlot()).toBe(100)
    expect(take(k, 100).id).toBe("a")
    expect(k.breaker("smtp")).toMatchObject({ state: "half-open", probe: "a" })
  })
})

describe("SPEC §7 a breaker's half-open time is shown only while it is open", () => {
  it("closed, open, half-open: halfOpenAt is given for the open state alone", () => {
    const k = new Kernel.Kernel<string>()
    rated(k, "a", 100)
    expect(k.breaker("a")?.halfOpenAt).toBeUndefined()
    k.complete(take(k, 0), failed, 0, false)
    expect(k.breaker("a")).toMatchObject({ state: "open", halfOpenAt: 100 })
    take(k, 100)
    const half = k.breaker("a")
    expect(half?.state).toBe("half-open")
    expect(half?.halfOpenAt).toBeUndefined()
  })
})
