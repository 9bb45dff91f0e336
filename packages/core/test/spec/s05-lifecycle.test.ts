/**
 * SPEC §5 Lifecycle: every row of the transition table, observed through the driver, and the
 * kernel's transitions replayed on the XState machine (the single source of truth).
 */
import { describe, expect, it } from "vitest"
import { initialTransition, transition } from "xstate"
import { type Breaker, Lifecycle, Schedule, type Task } from "../../src/index.ts"
import { failing, noop, setup } from "../support.ts"

describe("§5 the task machine, row by row", () => {
  it("scheduled --START--> running: a job sees its own task running", () => {
    const { driver } = setup()
    let seen = ""
    const id = driver.scheduleUnsafe({
      job: (run) => {
        seen = driver.status(run.id)
      },
      schedule: Schedule.once(0),
    })
    expect(driver.status(id)).toBe("scheduled")
    driver.runDue()
    expect(seen).toBe("running")
  })

  it("running --SUCCEED, no next slot--> done", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(0) })
    expect(driver.tick(0).map((r) => [r.state, r.continuation])).toEqual([["done", "final"]])
    expect(driver.status(id)).toBe("done")
  })

  it("running --SUCCEED, next slot exists--> scheduled", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedDelay(5) })
    expect(driver.tick(0).map((r) => [r.state, r.continuation, r.nextSlot])).toEqual([
      ["scheduled", "next", 5],
    ])
    expect(driver.status(id)).toBe("scheduled")
  })

  it("running --SUCCEED, the schedule has ended--> done", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      job: noop,
      schedule: Schedule.custom((s, f) => (s === undefined ? f : undefined)),
    })
    expect(driver.tick(0).map((r) => r.state)).toEqual(["done"])
    expect(driver.status(id)).toBe("done")
  })

  it("running --FAIL, retries left--> scheduled (retry)", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      job: failing(),
      schedule: Schedule.once(0),
      retry: { maxRetries: 1, base: 5 },
    })
    expect(driver.tick(0).map((r) => [r.state, r.continuation, r.nextSlot])).toEqual([
      ["scheduled", "retry", 5],
    ])
    expect(driver.status(id)).toBe("scheduled")
  })

  it("running --FAIL, no retries left, one-off--> failed", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      job: failing(),
      schedule: Schedule.once(0),
      retry: { maxRetries: 1, base: 5 },
    })
    const records = driver.tick(5)
    expect(records.map((r) => [r.attempt, r.state, r.continuation])).toEqual([
      [1, "scheduled", "retry"],
      [2, "failed", "final"],
    ])
    expect(driver.status(id)).toBe("failed")
  })

  it("running --FAIL, no retries left, recurring, not paused--> scheduled (next slot)", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({ job: failing(), schedule: Schedule.fixedRate(10) })
    expect(driver.tick(0).map((r) => [r.state, r.continuation, r.nextSlot])).toEqual([
      ["scheduled", "next", 10],
    ])
    expect(driver.status(id)).toBe("scheduled")
  })

  it("running --FAIL, recurring, the failure policy says stop--> paused (reason failures)", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      job: failing(),
      schedule: Schedule.fixedRate(10),
      pauseAfterConsecutiveFailures: 2,
    })
    expect(driver.tick(30).map((r) => [r.scheduledFor, r.state])).toEqual([
      [0, "scheduled"],
      [10, "paused"],
    ])
    expect(driver.status(id)).toBe("paused")
    expect(driver.info(id)?.pausedReason).toBe("failures")
    // Paused, never final: nothing runs until it is resumed.
    expect(driver.tick(100)).toEqual([])
  })

  it("scheduled --CANCEL--> cancelled, and running --CANCEL--> cancelled", () => {
    const { driver } = setup()
    const waiting = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(10) })
    const self = driver.scheduleUnsafe({
      job: (run) => {
        driver.cancel(run.id)
      },
      schedule: Schedule.once(0),
    })
    expect(driver.cancel(waiting)).toBe(true)
    expect(driver.status(waiting)).toBe("cancelled")
    driver.runDue()
    expect(driver.status(self)).toBe("cancelled")
  })

  it("final states are final: cancel is refused and nothing runs again", () => {
    const { driver } = setup()
    const done = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(0) })
    const failed = driver.scheduleUnsafe({ job: failing(), schedule: Schedule.once(0) })
    const cancelled = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(0) })
    driver.cancel(cancelled)
    driver.runDue()
    for (const id of [done, failed, cancelled]) expect(driver.cancel(id)).toBe(false)
    expect(driver.tick(1000)).toEqual([])
    expect([done, failed, cancelled].map((id) => driver.status(id))).toEqual([
      "done",
      "failed",
      "cancelled",
    ])
  })
})

describe("§5 the machine is the single source of truth", () => {
  /** The events the kernel applied to a task, rebuilt from its run records. */
  const eventsOf = (records: ReadonlyArray<Task.RunRecord>): Array<Lifecycle.TaskEvent> =>
    records.flatMap(
      (r): Array<Lifecycle.TaskEvent> => [
        { type: "START" },
        {
          type: r.outcome.kind === "succeeded" ? "SUCCEED" : "FAIL",
          nextSlot: r.continuation === "next" ? r.nextSlot : undefined,
          ...(r.pausedReason === "breaker" ? { breakerOpens: true } : {}),
        },
      ],
    )

  it("replaying a task's runs on the XState machine gives the states the kernel reported", () => {
    const scenarios: Array<{
      input: Lifecycle.TaskInput
      pattern: Array<boolean>
      breaker?: Breaker.BreakerPolicy
    }> = [
      { input: { maxRetries: 2, pauseAfter: 0 }, pattern: [false, false, true, false, true, true] },
      { input: { maxRetries: 1, pauseAfter: 2 }, pattern: [false, false, false, true] },
      { input: { maxRetries: 0, pauseAfter: 3 }, pattern: [false, true, false, false, false] },
      {
        input: { maxRetries: 1, pauseAfter: 0 },
        pattern: [false, true, false, false, false, false],
        breaker: { failures: 2, coolDown: 1_000_000 },
      },
    ]
    for (const { input, pattern, breaker } of scenarios) {
      const { driver } = setup()
      let n = 0
      const id = driver.scheduleUnsafe({
        job: () => {
          if (!(pattern[n++ % pattern.length] ?? true)) throw new Error("fail")
        },
        schedule: Schedule.fixedRate(100),
        retry: { maxRetries: input.maxRetries ?? 0, base: 10 },
        pauseAfterConsecutiveFailures: input.pauseAfter ?? 0,
        ...(breaker === undefined ? {} : { breaker }),
      })
      const records = driver.tick(2000)
      expect(records.length).toBeGreaterThan(3)
      let [snapshot] = initialTransition(Lifecycle.machine, input)
      const events = eventsOf(records)
      for (let k = 0; k < records.length; k++) {
        ;[snapshot] = transition(Lifecycle.machine, snapshot, events[2 * k] as Lifecycle.TaskEvent)
        expect(snapshot.value).toBe("running")
        ;[snapshot] = transition(
          Lifecycle.machine,
          snapshot,
          events[2 * k + 1] as Lifecycle.TaskEvent,
        )
        const r = records[k] as Task.RunRecord
        expect(snapshot.value).toBe(r.state)
        expect(snapshot.context.runNumber).toBe(r.runNumber)
        if (r.state === "scheduled") {
          expect(snapshot.context.attempt).toBe(r.continuation === "retry" ? r.attempt + 1 : 1)
        }
      }
      expect(snapshot.value).toBe(driver.status(id))
    }
  })
})
