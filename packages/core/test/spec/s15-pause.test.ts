/**
 * SPEC §15 controls: pause and resume (with the §5 rows they drive), through the driver on a
 * manual clock.
 */
import { describe, expect, it } from "vitest"
import { Schedule, type Task } from "../../src/index.ts"
import { failing, noop, setup } from "../support.ts"

const skipped = (os: ReadonlyArray<Task.Occurrence>) =>
  os.filter((o): o is Task.Skipped => o.kind === "skipped")

describe("§5 rows of the paused state", () => {
  it("scheduled --PAUSE--> paused: nothing runs while paused", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(10) })
    expect(driver.pause(id)).toBe(true)
    expect(driver.status(id)).toBe("paused")
    expect(driver.info(id)?.pausedReason).toBe("manual")
    expect(driver.tick(100)).toEqual([])
    expect(driver.stats()).toMatchObject({ scheduled: 0, paused: 1, heapEntries: 0 })
    expect(driver.nextSlot()).toBeUndefined()
    driver.checkInvariants()
  })

  it("running --PAUSE--> running: the run finishes and reports, then the task is paused", () => {
    const { driver } = setup()
    const seen: Array<string> = []
    const id = driver.scheduleUnsafe({
      job: (run) => {
        expect(driver.pause(run.id)).toBe(true)
        expect(driver.pause(run.id)).toBe(false) // already going to pause
        seen.push(driver.status(run.id))
      },
      schedule: Schedule.fixedRate(10),
    })
    const records = driver.tick(50)
    expect(seen).toEqual(["running"])
    expect(records).toHaveLength(1)
    expect(records[0]).toMatchObject({
      outcome: { kind: "succeeded" },
      state: "paused",
      continuation: "next",
      nextSlot: 10,
      pausedReason: "manual",
    })
    expect(driver.status(id)).toBe("paused")
  })

  it("a pause requested while running and withdrawn by resume is not applied", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      job: (run) => {
        driver.pause(run.id)
        expect(driver.resume(run.id)).toBe(true)
        expect(driver.resume(run.id)).toBe(false)
      },
      schedule: Schedule.fixedRate(10),
    })
    expect(driver.tick(0).map((r) => r.state)).toEqual(["scheduled"])
    expect(driver.status(id)).toBe("scheduled")
  })

  it("paused --RESUME--> scheduled", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(10) })
    driver.pause(id)
    expect(driver.resume(id)).toBe(true)
    expect(driver.status(id)).toBe("scheduled")
    expect(driver.tick(10).map((r) => [r.scheduledFor, r.state])).toEqual([[10, "done"]])
  })

  it("paused --CANCEL--> cancelled", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(10) })
    driver.pause(id)
    expect(driver.cancel(id)).toBe(true)
    expect(driver.status(id)).toBe("cancelled")
    expect(driver.resume(id)).toBe(false)
    expect(driver.tick(100)).toEqual([])
    driver.checkInvariants()
  })

  it("a one-shot paused while running still ends done: there is nothing left to hold", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      job: (run) => void driver.pause(run.id),
      schedule: Schedule.once(0),
    })
    expect(driver.tick(0).map((r) => r.state)).toEqual(["done"])
    expect(driver.status(id)).toBe("done")
  })

  it("a failing run with a pause requested holds its retry, which runs after resume", () => {
    const { clock, driver } = setup()
    let calls = 0
    const id = driver.scheduleUnsafe({
      job: (run) => {
        calls++
        if (run.attempt === 1) {
          driver.pause(run.id)
          throw new Error("first attempt fails")
        }
      },
      schedule: Schedule.once(0),
      retry: { maxRetries: 1, base: 5 },
    })
    const [first] = driver.tick(100)
    expect(first).toMatchObject({
      state: "paused",
      continuation: "retry",
      nextSlot: 5,
      kind: "retried",
    })
    expect(calls).toBe(1)
    clock.set(200)
    driver.resume(id)
    // The held retry keeps its due time (5): due at once, and its lateness shows the pause.
    const [retry] = driver.tick(200)
    expect(retry).toMatchObject({ attempt: 2, slot: 0, scheduledFor: 5, startedAt: 200 })
    expect(driver.status(id)).toBe("done")
  })
})

describe("§15 pause(id) / resume(id)", () => {
  it("pausing a paused, final or unknown task returns false; resuming a non-paused one too", () => {
    const { driver } = setup()
    const a = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(0) })
    const b = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(10) })
    driver.runDue()
    expect(driver.pause(a)).toBe(false) // done
    expect(driver.pause("nope")).toBe(false)
    expect(driver.resume(b)).toBe(false) // scheduled
    expect(driver.pause(b)).toBe(true)
    expect(driver.pause(b)).toBe(false) // already paused
    expect(driver.resume("nope")).toBe(false)
  })

  it("a one-shot resumes at its own slot, due at once when it has passed (lateness shows it)", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(10) })
    driver.pause(id)
    clock.set(50)
    driver.resume(id)
    expect(driver.info(id)?.scheduledFor).toBe(10)
    const [r] = driver.tick(50)
    expect(r).toMatchObject({ scheduledFor: 10, startedAt: 50 })
    expect(skipped(driver.drainOccurrences())).toEqual([])
  })

  it("fixed rate: resumes at the first grid slot >= now; the passed slots are one skipped range", () => {
    // period 10 from 0; paused at 5 (slot 10 pending), resumed at 45: 10..40 skipped, next 50.
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(10) })
    driver.tick(5)
    driver.pause(id)
    clock.set(45)
    driver.resume(id)
    const os = driver.drainOccurrences()
    expect(os.map((o) => o.kind)).toEqual(["paused", "skipped", "resumed"])
    expect(skipped(os)).toEqual([
      {
        kind: "skipped",
        id,
        generation: 1,
        cause: "paused",
        first: 10,
        last: 40,
        count: 4,
        exact: true,
        nextSlot: 50,
        at: 45,
      },
    ])
    expect(driver.info(id)?.scheduledFor).toBe(50)
    // Resume never catches up: the next run is slot 50.
    expect(driver.tick(60).map((r) => r.scheduledFor)).toEqual([50, 60])
  })

  it("fixed rate resumed exactly on a grid slot runs that slot at once", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(10) })
    driver.tick(5)
    driver.pause(id)
    clock.set(40)
    driver.resume(id)
    expect(skipped(driver.drainOccurrences())).toMatchObject([{ first: 10, last: 30, count: 3 }])
    expect(driver.tick(40).map((r) => r.scheduledFor)).toEqual([40])
  })

  it("a task resumed before its held slot keeps it, and nothing is skipped", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.fixedRate(100) })
    driver.tick(5)
    driver.pause(id)
    clock.set(50)
    driver.resume(id)
    expect(skipped(driver.drainOccurrences())).toEqual([])
    expect(driver.info(id)?.scheduledFor).toBe(100)
    driver.checkInvariants()
    // The entry pushed before the pause is dead: slot 100 runs once.
    expect(driver.tick(100).map((r) => r.scheduledFor)).toEqual([100])
  })

  it("cron: resumes at the first match >= now", () => {
    const start = Date.UTC(2026, 0, 1, 0, 0, 0)
    const { clock, driver } = setup(start)
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.cron("*/5 * * * *") })
    driver.pause(id)
    clock.set(start + 17 * 60_000)
    driver.resume(id)
    expect(driver.info(id)?.scheduledFor).toBe(start + 20 * 60_000)
    expect(skipped(driver.drainOccurrences())).toMatchObject([
      { cause: "paused", first: start + 5 * 60_000, last: start + 15 * 60_000, count: 3 },
    ])
  })

  it("fixed delay: resumes at max(lastFinishedAt + period, now)", () => {
    const { clock, driver } = setup()
    const id = driver.scheduleUnsafe({
      job: () => clock.advance(3),
      schedule: Schedule.fixedDelay(10),
    })
    driver.tick(0) // runs 0..3: next 13
    driver.pause(id)
    clock.set(8)
    driver.resume(id)
    expect(driver.info(id)?.scheduledFor).toBe(13) // lastFinishedAt + period is later than now
    driver.pause(id)
    clock.set(40)
    driver.resume(id)
    expect(driver.info(id)?.scheduledFor).toBe(40) // now is later
    expect(skipped(driver.drainOccurrences())).toEqual([])
  })

  it("pauseAfterConsecutiveFailures pauses (reason failures); resume gives a fresh count", () => {
    const { clock, driver } = setup()
    let failingNow = true
    const id = driver.scheduleUnsafe({
      job: () => {
        if (failingNow) throw new Error("down")
      },
      schedule: Schedule.fixedRate(10),
      pauseAfterConsecutiveFailures: 2,
    })
    expect(driver.tick(100).map((r) => r.state)).toEqual(["scheduled", "paused"])
    expect(driver.info(id)).toMatchObject({ pausedReason: "failures", consecutiveFailures: 2 })
    clock.set(105)
    expect(driver.resume(id)).toBe(true)
    expect(driver.info(id)).toMatchObject({ consecutiveFailures: 0, scheduledFor: 110 })
    // One more failure does not pause it again at once: the count starts afresh.
    expect(driver.tick(110).map((r) => r.state)).toEqual(["scheduled"])
    failingNow = false
    expect(driver.tick(120).map((r) => r.state)).toEqual(["scheduled"])
  })

  it("a held one-shot is never lost: paused for a long time, it still runs once after resume", () => {
    const { clock, driver } = setup()
    let runs = 0
    const id = driver.scheduleUnsafe({ job: () => void runs++, schedule: Schedule.once(10) })
    driver.pause(id)
    driver.tick(1_000_000)
    expect(runs).toBe(0)
    expect(driver.status(id)).toBe("paused")
    clock.set(2_000_000)
    driver.resume(id)
    driver.runDue()
    expect(runs).toBe(1)
    expect(driver.status(id)).toBe("done")
  })

  it("a held retry of a fixed-rate task runs first; the grid slots that passed are skipped", () => {
    const { clock, driver } = setup()
    let n = 0
    const id = driver.scheduleUnsafe({
      job: () => {
        if (n++ === 0) throw new Error("first run fails")
      },
      schedule: Schedule.fixedRate(10),
      retry: { maxRetries: 1, base: 2 },
    })
    driver.tick(0) // slot 0 fails: retry due at 2
    driver.pause(id)
    clock.set(35)
    driver.resume(id)
    expect(skipped(driver.drainOccurrences())).toMatchObject([
      { cause: "paused", first: 10, last: 30, count: 3, nextSlot: 2 },
    ])
    // The retry (slot 0, due 2) runs at once; then the grid goes on from 40, not from 10.
    expect(driver.tick(50).map((r) => [r.slot, r.scheduledFor, r.attempt])).toEqual([
      [0, 2, 2],
      [40, 40, 1],
      [50, 50, 1],
    ])
  })

  it("pausing a task held by its failure policy makes it paused by hand", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      job: failing(),
      schedule: Schedule.fixedRate(10),
      pauseAfterConsecutiveFailures: 1,
    })
    driver.tick(0)
    expect(driver.info(id)?.pausedReason).toBe("failures")
    expect(driver.pause(id)).toBe(false)
    expect(driver.info(id)?.pausedReason).toBe("manual")
  })
})
