/**
 * `explain` of a retry (SPEC §15, §7): the pending retry names the grid slot it retries, not its
 * own due time, and the schedule's slots listed after it follow that grid slot. The grid slot is
 * not 0 here (a task starting at 0 has its first grid slot at 0, which reads the same as a missing
 * one), and the fixed-delay schedule's next slot depends on which slot it follows.
 */
import { describe, expect, it } from "vitest"
import { Kernel, Schedule, type Task } from "../src/index.ts"

const take = <J>(k: Kernel.Kernel<J>, now: number): Kernel.Run<J> => {
  const run = k.takeDue(now)
  if (run === undefined) throw new Error(`nothing due at ${now}`)
  return run
}

const failed: Task.Outcome = { kind: "failed", error: "boom" }

/** A task whose slot 100 failed at 101: its retry (attempt 2) is due at 105. */
const retrying = (schedule: Schedule.Schedule): Kernel.Kernel<string> => {
  const k = new Kernel.Kernel<string>()
  k.schedule({ id: "a", job: "a", schedule, retry: { maxRetries: 2, base: 4 } }, 0)
  k.complete(take(k, 100), failed, 101, false)
  return k
}

describe("SPEC §15 explain of a retry: its grid slot, and the slots after it", () => {
  it("a scheduled retry names the slot it retries and its own due time apart", () => {
    const k = retrying(Schedule.fixedRate(10, { delay: 100 }))
    const e = k.explain("a", 102, 2)
    expect(e?.pending).toEqual({ slot: 100, scheduledFor: 105, attempt: 2 })
    expect(e?.notes).toEqual(["retry 1 of slot 100 is due at 105; its schedule goes on after it"])
    expect(e?.slots.map((s) => s.slot)).toEqual([110, 120])
  })

  it("a fixed-delay task's scheduled retry lists the slots after its grid slot", () => {
    const k = retrying(Schedule.fixedDelay(10, { delay: 100 }))
    const e = k.explain("a", 102, 2)
    expect(e?.pending).toEqual({ slot: 100, scheduledFor: 105, attempt: 2 })
    // The preview reads each run as taking no time: slot 100, then 110, not 105 + 10.
    expect(e?.slots.map((s) => s.slot)).toEqual([110, 120])
  })

  it("a running retry lists the slots after the grid slot it retries", () => {
    const k = retrying(Schedule.fixedDelay(10, { delay: 100 }))
    const run = take(k, 105)
    expect(run).toMatchObject({ attempt: 2, scheduledFor: 105 })
    const e = k.explain("a", 106, 2)
    expect(e).toMatchObject({ state: "running", pending: undefined })
    expect(e?.slots.map((s) => s.slot)).toEqual([110, 120])
  })

  it("a paused task's held retry runs first, then the slots after its grid slot", () => {
    const k = retrying(Schedule.fixedDelay(10, { delay: 100 }))
    expect(k.pause("a", 102)).toBe(true)
    const e = k.explain("a", 103, 2)
    expect(e?.notes).toEqual([
      "paused by hand: it runs again only after resume(); the slots below are those it would take if resumed now",
      "a held retry (attempt 2) runs first, due at 105",
    ])
    expect(e?.slots.map((s) => s.slot)).toEqual([110, 120])
  })
})
