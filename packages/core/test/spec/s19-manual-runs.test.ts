/**
 * SPEC §19 manual runs: `trigger` (one extra run now, the grid untouched) and `retry` (one more
 * attempt of a failed task's failed slot), through the driver on a manual clock, with the §5
 * rows they add (TRIGGER, MANUAL_END, RETRY).
 */
import { describe, expect, it } from "vitest"
import { Kernel, Retry, Rules, Schedule, Task } from "../../src/index.ts"
import { err, failing, noop, ok, setup } from "../support.ts"

describe("§19.1 trigger", () => {
  it("runs a recurring task once now and leaves its grid as it is", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({ id: "report", job: noop, schedule: Schedule.fixedRate(100) })
    expect(driver.tick(0).map((r) => r.slot)).toEqual([0])
    clock.set(30)
    expect(ok(driver.trigger(id))).toBe(true)
    const [manual] = driver.tick(30)
    expect(manual).toMatchObject({
      id,
      slot: 30,
      scheduledFor: 30,
      startedAt: 30,
      attempt: 1,
      runNumber: 2,
      manual: true,
      state: "scheduled",
      continuation: "next",
      nextSlot: 100,
    })
    // The grid goes on where it was: 100, 200, …, no slot moved or added.
    const later = driver.tick(200)
    expect(later.map((r) => [r.slot, r.manual])).toEqual([
      [100, undefined],
      [200, undefined],
    ])
    driver.checkInvariants()
  })

  it("keeps a pending retry (its due time and attempt) and spends none of its retries", () => {
    const { clock, driver } = setup()
    let calls = 0
    const id = driver.scheduleUnsafe({
      id: "flaky",
      job: () => {
        calls++
        if (calls === 1) throw new Error("first")
      },
      schedule: Schedule.fixedRate(1_000),
      retry: { maxRetries: 1, base: 50 },
    })
    expect(driver.tick(0).map((r) => r.continuation)).toEqual(["retry"])
    expect(driver.info(id)).toMatchObject({ scheduledFor: 50, attempt: 2 })
    clock.set(10)
    ok(driver.trigger(id))
    expect(driver.info(id)).toMatchObject({ scheduledFor: 10, attempt: 1 })
    const runs = driver.tick(60)
    expect(runs.map((r) => [r.slot, r.scheduledFor, r.attempt, r.manual ?? false])).toEqual([
      [10, 10, 1, true],
      [0, 50, 2, false],
    ])
    driver.checkInvariants()
  })

  it("a failed manual run counts for neither the failure policy nor the breaker", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      id: "fragile",
      job: failing(),
      schedule: Schedule.fixedRate(100),
      pauseAfterConsecutiveFailures: 2,
      breaker: { failures: 2, coolDown: 1_000 },
    })
    ok(driver.trigger(id))
    // The manual run and the slot at 0 both fail: only the slot counts, so nothing stops yet.
    const runs = driver.tick(0)
    expect(runs.map((r) => [r.manual ?? false, r.outcome.kind, r.state])).toEqual([
      [true, "failed", "scheduled"],
      [false, "failed", "scheduled"],
    ])
    expect(driver.info(id)).toMatchObject({
      state: "scheduled",
      consecutiveFailures: 1,
      lastFailure: { kind: "failed" },
    })
    expect(driver.breaker(id)?.state).toBe("closed")
    driver.checkInvariants()
  })

  it("is refused with ManualRunRefused naming the id and state, changing nothing", () => {
    const { clock, driver } = setup()
    const seen: Array<unknown> = []
    const id = driver.scheduleUnsafe({
      id: "busy",
      job: (run) => {
        seen.push(err(driver.trigger(run.id)))
      },
      schedule: Schedule.fixedRate(100),
    })
    driver.tick(0)
    expect(seen[0]).toMatchObject({
      _tag: "ManualRunRefused",
      action: "trigger",
      id,
      state: "running",
    })
    expect((seen[0] as Error).message).toContain("never runs twice at once")
    ok(driver.trigger(id))
    expect(err(driver.trigger(id))).toMatchObject({ state: "scheduled" })
    expect(err(driver.trigger(id)).message).toContain("already waiting")
    clock.set(5)
    driver.tick(5)
    expect(driver.pause(id)).toBe(true)
    expect(err(driver.trigger(id))).toMatchObject({ state: "paused" })
    expect(err(driver.trigger("nope"))).toMatchObject({ id: "nope", state: "unknown" })
    const once = driver.scheduleUnsafe({ id: "once", job: noop, schedule: Schedule.once(0) })
    driver.tick(5)
    expect(err(driver.trigger(once))).toMatchObject({ state: "done" })
    const before = driver.stats()
    expect(err(driver.trigger(once)).message).toBe(
      'cannot trigger "once": it is done; it will never run again: schedule it anew',
    )
    expect(driver.stats()).toEqual(before)
    driver.checkInvariants()
  })

  it("a pause before the manual run starts drops it; the task resumes on its grid", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({ id: "p", job: noop, schedule: Schedule.fixedRate(100) })
    driver.tick(0)
    clock.set(20)
    ok(driver.trigger(id))
    expect(driver.pause(id)).toBe(true)
    expect(driver.tick(50)).toEqual([])
    clock.set(50)
    expect(driver.resume(id)).toBe(true)
    expect(driver.tick(100).map((r) => [r.slot, r.manual ?? false])).toEqual([[100, false]])
    driver.checkInvariants()
  })

  it("a pause asked for while the manual run goes on holds the kept run when it ends", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      id: "p",
      job: (run) => {
        if (run.manual === true) driver.pause(run.id)
      },
      schedule: Schedule.fixedRate(100),
    })
    ok(driver.trigger(id))
    expect(driver.tick(0)[0]).toMatchObject({
      manual: true,
      state: "paused",
      pausedReason: "manual",
      nextSlot: 0,
    })
    expect(driver.info(id)).toMatchObject({ state: "paused", scheduledFor: 0 })
    driver.checkInvariants()
  })

  it("a one-shot keeps its own slot: it runs now and again at its time", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({ id: "o", job: noop, schedule: Schedule.once(500) })
    ok(driver.trigger(id))
    expect(driver.tick(500).map((r) => [r.slot, r.manual ?? false, r.state])).toEqual([
      [0, true, "scheduled"],
      [500, false, "done"],
    ])
  })

  it("a manual run is not stopped by a catch-up window", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({
      id: "w",
      job: noop,
      schedule: Schedule.fixedRate(100),
      window: 1,
    })
    ok(driver.trigger(id))
    clock.set(50)
    expect(driver.tick(50).map((r) => [r.slot, r.startedAt, r.manual])).toEqual([[0, 50, true]])
  })

  it("a new schedule before the manual run starts drops it", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({ id: "u", job: noop, schedule: Schedule.fixedRate(100) })
    driver.tick(0)
    ok(driver.trigger(id))
    expect(ok(driver.update(id, { schedule: Schedule.fixedRate(1_000) }))).toBe(true)
    // The new schedule starts now (slot 0), and no manual run is left.
    expect(driver.tick(1_000).map((r) => [r.slot, r.manual ?? false])).toEqual([
      [0, false],
      [1_000, false],
    ])
    driver.checkInvariants()
  })
})

describe("§19.2 retry", () => {
  it("gives a failed one-shot one more attempt of its slot, due now; a failure ends it failed again", () => {
    const { clock, driver } = setup()
    let ok2 = false
    const id = driver.scheduleUnsafe({
      id: "charge",
      job: () => {
        if (!ok2) throw new Error("declined")
      },
      schedule: Schedule.once(10),
      retry: { maxRetries: 1, base: 5 },
    })
    expect(driver.tick(100).map((r) => [r.attempt, r.state])).toEqual([
      [1, "scheduled"],
      [2, "failed"],
    ])
    clock.set(200)
    ok(driver.retry(id))
    expect(driver.info(id)).toMatchObject({ state: "scheduled", scheduledFor: 200, attempt: 3 })
    expect(driver.tick(200)).toEqual([
      expect.objectContaining({
        slot: 10,
        scheduledFor: 200,
        attempt: 3,
        runNumber: 3,
        state: "failed",
      }),
    ])
    clock.set(300)
    ok(driver.retry(id))
    ok2 = true
    expect(driver.tick(300)).toEqual([
      expect.objectContaining({ slot: 10, attempt: 4, runNumber: 4, state: "done" }),
    ])
    expect(driver.stats()).toMatchObject({ failed: 0, done: 1, scheduled: 0 })
    driver.checkInvariants()
  })

  it("runs an expired one-shot past its deadline", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({
      id: "late",
      job: noop,
      schedule: Schedule.once(10),
      window: 5,
    })
    clock.set(100)
    expect(driver.tick(100)).toEqual([])
    expect(driver.status(id)).toBe("failed")
    ok(driver.retry(id))
    expect(driver.tick(100)).toEqual([
      expect.objectContaining({ slot: 10, attempt: 1, state: "done" }),
    ])
  })

  it("is refused for a task that is not failed, changing nothing", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({ id: "r", job: noop, schedule: Schedule.fixedRate(100) })
    const e = err(driver.retry(id))
    expect(e).toMatchObject({ _tag: "ManualRunRefused", action: "retry", id, state: "scheduled" })
    expect(e.message).toContain("trigger it")
    driver.pause(id)
    expect(err(driver.retry(id)).message).toContain("resume it")
    driver.cancel(id)
    expect(err(driver.retry(id))).toMatchObject({ state: "cancelled" })
    expect(err(driver.retry("ghost"))).toMatchObject({ state: "unknown" })
    driver.checkInvariants()
  })

  it("a retried task is live again: retention does not evict it", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxFinished: 1 } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(0) }, 0)
    const run = k.takeDue(0) as Kernel.Run<string>
    k.complete(run, Task.failed(new Error("x")), 0, false)
    expect(k.status("a")).toBe("failed")
    expect(k.jobOf("a")).toBe("a")
    // Retried for later than b and c run: a is scheduled while they end final.
    expect(k.retry("a", 100)).toBe(true)
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(0) }, 1)
    const b = k.takeDue(1) as Kernel.Run<string>
    k.complete(b, Task.failed(new Error("y")), 1, false)
    k.schedule({ id: "c", job: "c", schedule: Schedule.once(0) }, 1)
    const c = k.takeDue(1) as Kernel.Run<string>
    k.complete(c, Task.succeeded, 1, false)
    expect(k.status("a")).toBe("scheduled")
    expect(k.status("b")).toBe("unknown") // evicted: one final task is kept
    expect(k.takeDue(100)?.job).toBe("a")
    k.checkInvariants()
  })

  it("rejoins its shared breaker as it is (SPEC §7.8)", () => {
    const { driver } = setup(0, { breakers: { db: { failures: 1, coolDown: 1_000 } } })
    const id = driver.scheduleUnsafe({
      id: "one",
      job: failing(),
      schedule: Schedule.once(0),
      breaker: "db",
    })
    driver.tick(0)
    expect(driver.breaker("db")?.state).toBe("open")
    ok(driver.retry(id))
    expect(driver.info(id)).toMatchObject({ state: "paused", pausedReason: "breaker" })
    driver.checkInvariants()
  })
})

describe("rules", () => {
  it("manualRefusal is the one decision: trigger from scheduled, retry from failed", () => {
    const states = ["scheduled", "running", "paused", "done", "failed", "cancelled", "unknown"]
    expect(states.filter((s) => Rules.manualRefusal("trigger", "x", s) === undefined)).toEqual([
      "scheduled",
    ])
    expect(Rules.manualRefusal("trigger", "x", "scheduled", true)?.state).toBe("scheduled")
    expect(states.filter((s) => Rules.manualRefusal("retry", "x", s) === undefined)).toEqual([
      "failed",
    ])
  })
})

describe("§19.1 the decision a store applies (Rules.triggered, Rules.manualEnded)", () => {
  it("sets the pending run aside, runs at the trigger's instant, and puts it back unchanged", () => {
    const pending = { slot: 900, dueAt: 950, attempt: 3, deliveries: 2 }
    const t = Rules.triggered(pending, 120)
    expect(t.run).toEqual({ slot: 120, dueAt: 120, attempt: 1 })
    expect(t.kept).toBe(pending)
    expect(Rules.manualEnded(t.kept, false)).toEqual({ state: "scheduled", pending })
    expect(Rules.manualEnded(t.kept, true)).toEqual({ state: "paused", pending })
  })
})

describe("§19.1 a breaker's hold and a waiting manual run", () => {
  /** `b` (every 100, noop) with a trigger's run waiting at 50 when `a`'s failure opens breaker db. */
  const held = () => {
    const { clock, driver } = setup(0, { breakers: { db: { failures: 1, coolDown: 1_000 } } })
    driver.scheduleUnsafe({ id: "a", job: failing(), schedule: Schedule.once(50), breaker: "db" })
    const b = driver.scheduleUnsafe({
      id: "b",
      job: noop,
      schedule: Schedule.fixedRate(100),
      breaker: "db",
    })
    expect(driver.tick(0).map((r) => [r.id, r.slot])).toEqual([["b", 0]])
    clock.set(50)
    ok(driver.trigger(b))
    // a's slot at 50 was pushed before the manual run: it runs first, fails, and opens db.
    expect(driver.tick(50).map((r) => [r.id, r.outcome.kind])).toEqual([["a", "failed"]])
    expect(driver.breaker("db")?.state).toBe("open")
    expect(driver.info(b)).toMatchObject({ state: "paused", pausedReason: "breaker" })
    driver.drainOccurrences()
    return { clock, driver, b }
  }
  const skips = (driver: ReturnType<typeof setup>["driver"]) =>
    driver.drainOccurrences().filter((o): o is Task.Skipped => o.kind === "skipped")

  it("the hold keeps it: it runs when the breaker lets the task go, and the kept run resumes on its grid", () => {
    const { driver } = held()
    // Half-open at 1050: b is the probe. Its manual run (slot 50) runs first, as it was; the
    // kept run (slot 100) resumes at the first grid slot >= 1050, its passed slots skipped.
    const runs = driver.tick(1_100)
    expect(
      runs.map((r) => [r.slot, r.scheduledFor, r.startedAt, r.attempt, r.manual ?? false]),
    ).toEqual([
      [50, 50, 1_050, 1, true],
      [1_100, 1_100, 1_100, 1, false],
    ])
    expect(skips(driver)).toEqual([
      expect.objectContaining({
        cause: "breaker",
        first: 100,
        last: 1_000,
        count: 10,
        nextSlot: 1_100,
      }),
    ])
    expect(driver.breaker("db")?.state).toBe("closed")
    driver.checkInvariants()
  })

  it("a pause by hand of the held task drops it; resumed, the task goes on from its kept run", () => {
    const { clock, driver, b } = held()
    driver.pause(b)
    expect(driver.info(b)).toMatchObject({ state: "paused", pausedReason: "manual" })
    clock.set(350)
    expect(driver.resume(b)).toBe(true)
    expect(skips(driver)).toEqual([
      expect.objectContaining({ cause: "paused", first: 100, last: 300, count: 3, nextSlot: 400 }),
    ])
    expect(driver.tick(400).map((r) => [r.slot, r.manual ?? false])).toEqual([[400, false]])
    driver.checkInvariants()
  })

  it("a new schedule while it is held drops it", () => {
    const { clock, driver, b } = held()
    expect(ok(driver.update(b, { schedule: Schedule.fixedRate(1_000) }))).toBe(true)
    clock.set(350)
    expect(driver.resume(b)).toBe(true)
    expect(driver.tick(1_050).map((r) => [r.slot, r.manual ?? false])).toEqual([[1_050, false]])
    driver.checkInvariants()
  })

  it("resumed by hand while held, the manual run is due as it was", () => {
    const { clock, driver, b } = held()
    clock.set(350)
    expect(driver.resume(b)).toBe(true)
    expect(skips(driver)).toEqual([
      expect.objectContaining({ cause: "breaker", first: 100, last: 300, count: 3, nextSlot: 400 }),
    ])
    expect(driver.info(b)).toMatchObject({ state: "scheduled", scheduledFor: 50 })
    expect(driver.tick(400).map((r) => [r.slot, r.startedAt, r.manual ?? false])).toEqual([
      [50, 350, true],
      [400, 400, false],
    ])
    driver.checkInvariants()
  })
})

describe("§19.1 the decisions a store applies on a pause and a resume", () => {
  it("pauseDropsManual: a pause by hand drops a waiting manual run; a breaker's hold keeps it", () => {
    expect(Rules.pauseDropsManual("manual")).toBe(true)
    expect(Rules.pauseDropsManual("breaker")).toBe(false)
  })

  it("resumeManual resumes the kept run and leaves the manual run due as it is", () => {
    const row: Rules.Row = {
      plan: (Schedule.resolve(Schedule.fixedRate(100), 0) as Schedule.Resolved).plan,
      slot: 50,
      dueAt: 50,
      attempt: 1,
      runNumber: 2,
      consecutiveFailures: 3,
      retry: Retry.none,
      missedRuns: "catch-up",
      pauseAfter: 0,
      windowMs: Rules.NO_WINDOW,
    }
    const kept = { slot: 100, dueAt: 100, attempt: 1, deliveries: 4 }
    const m = Rules.resumeManual(row, kept, 350)
    expect(m.dueAt).toBe(50)
    expect(m.kept).toEqual({ slot: 400, dueAt: 400, attempt: 1, deliveries: 4 })
    expect(m.resume).toMatchObject({
      skipped: { first: 100, last: 300, count: 3 },
      consecutiveFailures: 0,
    })
    // Resuming the manual run's own fields instead (the bug this replaces) skips from 50, off the grid.
    expect(Rules.resume(row, 350).skipped?.first).toBe(50)
  })
})
