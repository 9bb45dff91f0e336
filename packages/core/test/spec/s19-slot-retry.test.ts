/**
 * SPEC §19.7: a retry of one failed slot of a recurring task (`retry(id, { slot })`), through the
 * driver on a manual clock. The driver keeps no ledger: each test passes what a ledger would hold
 * about the slot (`runs`), as the runtime and the durable store read it from theirs.
 */
import { describe, expect, it } from "vitest"
import { Rules, Schedule } from "../../src/index.ts"
import { err, failing, noop, ok, setup } from "../support.ts"

const failedOnce = { lastAttempt: 1, failed: true } as const

describe("§19.7 retry of one slot", () => {
  it("runs the failed slot's next attempt now, as a manual run; the grid goes on as it was", () => {
    const { clock, driver } = setup()
    let calls = 0
    const id = driver.scheduleUnsafe({
      id: "report",
      job: () => {
        calls++
        if (calls === 1) throw new Error("first")
      },
      schedule: Schedule.fixedRate(100),
    })
    expect(driver.tick(0).map((r) => [r.slot, r.outcome.kind, r.nextSlot])).toEqual([
      [0, "failed", 100],
    ])
    clock.set(30)
    expect(ok(driver.retry(id, { slot: 0, runs: failedOnce }))).toBe(true)
    expect(driver.tick(30)).toEqual([
      expect.objectContaining({
        id,
        slot: 0,
        scheduledFor: 30,
        attempt: 2,
        runNumber: 2,
        manual: true,
        outcome: { kind: "succeeded" },
        state: "scheduled",
        nextSlot: 100,
      }),
    ])
    expect(driver.tick(200).map((r) => [r.slot, r.attempt, r.manual])).toEqual([
      [100, 1, undefined],
      [200, 1, undefined],
    ])
    driver.checkInvariants()
  })

  it("keeps a pending retry of another slot, and counts for neither the failure policy nor the breaker", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({
      id: "fragile",
      job: failing(),
      schedule: Schedule.fixedRate(1_000),
      retry: { maxRetries: 1, base: 50 },
      pauseAfterConsecutiveFailures: 1,
      breaker: { failures: 1, coolDown: 10_000 },
    })
    // Slot 0: attempt 1 fails, its retry (attempt 2) is due at 50.
    expect(driver.tick(0).map((r) => r.continuation)).toEqual(["retry"])
    clock.set(10)
    // Slot 0 has a retry pending: it is refused (the pending retry is that attempt).
    expect(err(driver.retry(id, { slot: 0, runs: failedOnce })).message).toContain(
      "is its pending run",
    )
    // A slot before it that failed (as a ledger would say) runs now and fails again.
    ok(driver.retry(id, { slot: -1_000, runs: { lastAttempt: 3, failed: true } }))
    expect(driver.info(id)).toMatchObject({ scheduledFor: 10, attempt: 4 })
    const runs = driver.tick(10)
    expect(
      runs.map((r) => [r.slot, r.scheduledFor, r.attempt, r.manual ?? false, r.state]),
    ).toEqual([[-1_000, 10, 4, true, "scheduled"]])
    // The pending retry is back, as it was; the breaker and the failure policy saw nothing.
    expect(driver.info(id)).toMatchObject({
      state: "scheduled",
      scheduledFor: 50,
      attempt: 2,
      consecutiveFailures: 0,
    })
    expect(driver.breaker(id)?.state).toBe("closed")
    driver.checkInvariants()
  })

  it("a pause before it starts drops it; the task resumes on its grid", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({ id: "p", job: failing(), schedule: Schedule.fixedRate(100) })
    driver.tick(0)
    clock.set(20)
    ok(driver.retry(id, { slot: 0, runs: failedOnce }))
    expect(driver.pause(id)).toBe(true)
    expect(driver.resume(id)).toBe(true)
    expect(driver.tick(100).map((r) => [r.slot, r.attempt, r.manual ?? false])).toEqual([
      [100, 1, false],
    ])
    driver.checkInvariants()
  })

  it("is refused with ManualRunRefused naming the id, state and slot, changing nothing", () => {
    const { clock, driver } = setup()
    const seen: Array<unknown> = []
    const id = driver.scheduleUnsafe({
      id: "r",
      job: (run) => {
        if (run.slot === 0) seen.push(err(driver.retry(run.id, { slot: 0, runs: failedOnce })))
      },
      schedule: Schedule.fixedRate(100),
    })
    driver.tick(0)
    expect(seen[0]).toMatchObject({
      _tag: "ManualRunRefused",
      action: "retry",
      id,
      state: "running",
      slot: 0,
    })
    const before = driver.info(id)
    const refused = (runs?: Rules.SlotRuns) => err(driver.retry(id, { slot: 0, runs }))
    expect(refused(undefined).message).toBe(
      'cannot retry slot 0 of "r": its ledger has no run of slot 0 (it never ran, or retention dropped it)',
    )
    expect(refused({ lastAttempt: 2, failed: false }).message).toContain(
      "(attempt 2) succeeded: only a failed slot can be retried",
    )
    ok(driver.trigger(id))
    expect(refused(failedOnce).message).toContain("already waiting")
    clock.set(5)
    driver.tick(5)
    driver.pause(id)
    expect(refused(failedOnce)).toMatchObject({ state: "paused", slot: 0 })
    expect(refused(failedOnce).message).toContain("resume it first")
    driver.cancel(id)
    expect(refused(failedOnce)).toMatchObject({ state: "cancelled" })
    expect(err(driver.retry("ghost", { slot: 0, runs: failedOnce }))).toMatchObject({
      state: "unknown",
    })
    expect(before?.state).toBe("scheduled")
    const once = driver.scheduleUnsafe({ id: "o", job: noop, schedule: Schedule.once(50) })
    expect(err(driver.retry(once, { slot: 50, runs: failedOnce })).message).toContain(
      "a one-shot has one slot",
    )
    driver.checkInvariants()
  })
})

describe("rules", () => {
  it("manualRefusal with a slot: a scheduled recurring task whose ledger's last run of it failed", () => {
    const facts = { slot: 5, recurring: true, pendingSlot: 10, runs: failedOnce }
    const states = ["scheduled", "running", "paused", "done", "failed", "cancelled", "unknown"]
    expect(
      states.filter((s) => Rules.manualRefusal("retry", "x", s, false, facts) === undefined),
    ).toEqual(["scheduled"])
    expect(Rules.manualRefusal("retry", "x", "failed", false, facts)?.message).toContain(
      "retry it without a slot",
    )
    for (const bad of [
      { ...facts, recurring: false },
      { ...facts, pendingSlot: 5 },
      { ...facts, runs: undefined },
      { ...facts, runs: { lastAttempt: 1, failed: false } },
    ]) {
      expect(Rules.manualRefusal("retry", "x", "scheduled", false, bad)).toMatchObject({ slot: 5 })
    }
    expect(Rules.manualRefusal("retry", "x", "scheduled", true, facts)).toBeDefined()
    expect(Rules.slotRetried(5, { lastAttempt: 3, failed: true }, 70)).toEqual({
      slot: 5,
      dueAt: 70,
      attempt: 4,
    })
  })
})
