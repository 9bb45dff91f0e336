/**
 * `explain` (SPEC §15) in the cases its notes and fields turn on: a running task with no options
 * at all, a task paused by hand while its breaker is closed, open or half-open (paused by hand is
 * not held), a recurring task's window (no deadline), and a custom schedule that ends.
 */
import { describe, expect, it } from "vitest"
import { Kernel, Schedule, type Task } from "../src/index.ts"

const take = <J>(k: Kernel.Kernel<J>, now: number): Kernel.Run<J> => {
  const run = k.takeDue(now)
  if (run === undefined) throw new Error(`nothing due at ${now}`)
  return run
}

const failed: Task.Outcome = { kind: "failed", error: "boom" }

const BY_HAND =
  "paused by hand: it runs again only after resume(); the slots below are those it would take if resumed now"

describe("SPEC §15 explain: the notes of each case", () => {
  it("a running task scheduled with no option at all is explained", () => {
    const k = new Kernel.Kernel<string>()
    const id = k.schedule({ job: "a", schedule: Schedule.once(0) }, 0)
    if (typeof id !== "string") throw new Error("refused")
    take(k, 0)
    expect(k.explain(id, 1)).toMatchObject({
      state: "running",
      kind: "once",
      pausedReason: undefined,
      slots: [],
      notes: [
        "running: the slot after this run is decided when it ends (its missed-run policy applies)",
      ],
    })
  })

  it("SPEC §7: a task paused by hand is not held, whatever its breaker's state", () => {
    const k = new Kernel.Kernel<string>({ breakers: { smtp: { failures: 1, coolDown: 100 } } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10), breaker: "smtp" }, 0)
    k.schedule(
      { id: "b", job: "b", schedule: Schedule.fixedRate(10, { delay: 1 }), breaker: "smtp" },
      0,
    )
    expect(k.pause("b", 0)).toBe(true)
    const closed = k.explain("b", 0, 1)
    expect(closed).toMatchObject({ pausedReason: "manual", breaker: { state: "closed" } })
    expect(closed?.notes).toEqual([BY_HAND])
    expect(closed?.slots.map((s) => s.slot)).toEqual([1])

    k.complete(take(k, 0), failed, 0, false) // smtp opens at 0, half-open at 100
    const open = k.explain("b", 5, 1)
    expect(open).toMatchObject({ pausedReason: "manual", breaker: { state: "open" } })
    expect(open?.notes).toEqual([BY_HAND])
    // Resumed now, it would run at its next grid slot, not at the breaker's half-open time.
    expect(open?.slots.map((s) => s.slot)).toEqual([11])

    expect(take(k, 100).id).toBe("a") // the probe
    const half = k.explain("b", 100, 1)
    expect(half).toMatchObject({ pausedReason: "manual", breaker: { state: "half-open" } })
    expect(half?.notes).toEqual([BY_HAND])
  })

  it("a recurring task's window skips late slots and gives no deadline", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10, { delay: 5 }), window: 3 }, 0)
    const e = k.explain("a", 0, 1)
    expect(e).toMatchObject({ window: 3, kind: "fixed-rate" })
    expect(e?.deadline).toBeUndefined()
    expect(e?.notes).toEqual(["window 3 ms: a slot not started within it is skipped"])
  })

  it("a custom schedule's slots end where its next() gives none", () => {
    const k = new Kernel.Kernel<string>()
    const next = (slot: number | undefined) =>
      slot === undefined ? 10 : slot < 30 ? slot + 10 : undefined
    k.schedule({ id: "a", job: "a", schedule: Schedule.custom(next) }, 0)
    expect(k.explain("a", 0, 5)?.slots.map((s) => s.slot)).toEqual([10, 20, 30])
  })
})
