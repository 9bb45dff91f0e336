import { Result } from "effect"
import { describe, expect, it, vi } from "vitest"
import { Clock, Driver, Errors, Kernel, Random, Schedule, Task } from "../src/index.ts"
import { err, noop, ok, setup, slots } from "./support.ts"

describe("constructors", () => {
  it("make builds a driver on the given clock", () => {
    const clock = new Clock.ManualClock(42)
    const driver = Driver.make({ clock })
    expect(driver).toBeInstanceOf(Driver.Driver)
    expect(driver.clock).toBe(clock)
    expect(driver.stats()).toMatchObject({ accepted: 0, scheduled: 0 })
  })
})

describe("models", () => {
  describe("schedule / scheduleUnsafe", () => {
    it("schedule returns the id as a Result success, or the typed error as a failure", () => {
      const { driver } = setup()
      const r = driver.schedule({ job: noop, schedule: Schedule.once(5) })
      expect(Result.isSuccess(r)).toBe(true)
      expect(ok(r)).toBe("#0.1")
      const e = err(driver.schedule({ job: noop, schedule: Schedule.once(-5) }))
      expect(e).toBeInstanceOf(Errors.InvalidDelay)
    })

    it("scheduleUnsafe returns the id or throws the same typed error", () => {
      const { driver } = setup()
      expect(driver.scheduleUnsafe({ id: "a", job: noop, schedule: Schedule.once(5) })).toBe("a")
      expect(() =>
        driver.scheduleUnsafe({ id: "a", job: noop, schedule: Schedule.once(5) }),
      ).toThrow(Errors.DuplicateTaskId)
    })

    it("a job must be a function", () => {
      const { driver } = setup()
      const e = err(driver.schedule({ job: "run me" as never, schedule: Schedule.once(0) }))
      expect(e).toMatchObject({ _tag: "InvalidOption", field: "job", value: "run me" })
      expect(err(driver.schedule(undefined as never))).toMatchObject({ field: "job" })
    })
  })

  describe("runDue / runUntil / tick", () => {
    it("runDue runs what is due now and returns the count; the clock stays", () => {
      const { clock, driver } = setup(100)
      const seen: Array<number> = []
      driver.scheduleUnsafe({
        job: (r) => void seen.push(r.scheduledFor),
        schedule: Schedule.at(40),
      })
      driver.scheduleUnsafe({
        job: (r) => void seen.push(r.scheduledFor),
        schedule: Schedule.at(100),
      })
      driver.scheduleUnsafe({
        job: (r) => void seen.push(r.scheduledFor),
        schedule: Schedule.at(101),
      })
      expect(driver.runDue()).toBe(2)
      expect(seen).toEqual([40, 100])
      expect(clock.now()).toBe(100)
      expect(driver.runDue()).toBe(0)
    })

    it("runUntil steps to each slot, then to end, and returns the count", () => {
      const { clock, driver } = setup()
      const at: Array<number> = []
      driver.scheduleUnsafe({
        job: () => void at.push(clock.now()),
        schedule: Schedule.fixedRate(10),
      })
      expect(driver.runUntil(35)).toBe(4)
      expect(at).toEqual([0, 10, 20, 30])
      expect(clock.now()).toBe(35)
    })

    it("tick returns the records in run order, and onRun sees the same records", () => {
      const seen: Array<Task.RunRecord> = []
      const { driver } = setup(0, { onRun: (r) => void seen.push(r) })
      driver.scheduleUnsafe({ id: "b", job: noop, schedule: Schedule.once(5) })
      driver.scheduleUnsafe({ id: "a", job: noop, schedule: Schedule.once(3) })
      const records = driver.tick(10)
      expect(slots(records)).toEqual(["a@3", "b@5"])
      expect(seen).toEqual(records)
    })

    it("onRun is called from runDue and runUntil as well", () => {
      const seen: Array<string> = []
      const { driver } = setup(0, { onRun: (r) => void seen.push(r.id) })
      driver.scheduleUnsafe({ id: "now", job: noop, schedule: Schedule.once(0) })
      driver.scheduleUnsafe({ id: "later", job: noop, schedule: Schedule.once(5) })
      driver.runDue()
      driver.runUntil(5)
      expect(seen).toEqual(["now", "later"])
    })

    it("runUntil and tick need a manual clock and an end no earlier than now", () => {
      const real = Driver.make({ clock: Clock.system })
      expect(() => real.runUntil(0)).toThrow(Errors.InvalidOption)
      expect(() => real.tick(0)).toThrow(/ManualClock/)
      const { driver } = setup(50)
      expect(() => driver.runUntil(49)).toThrow(Errors.InvalidTime)
      expect(() => driver.tick(Number.NaN)).toThrow(Errors.InvalidTime)
      expect(driver.runUntil(50)).toBe(0)
    })

    it("runDue works on any clock, the system clock too", () => {
      const driver = Driver.make({ clock: Clock.system })
      let ran = 0
      driver.scheduleUnsafe({ job: () => void ran++, schedule: Schedule.once(0) })
      expect(driver.runDue()).toBe(1)
      expect(ran).toBe(1)
    })
  })

  describe("queries", () => {
    it("status, info, taskIds, nextSlot and stats describe the tasks", () => {
      const { driver } = setup()
      const a = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(7) })
      const b = driver.scheduleUnsafe({ id: "b", job: noop, schedule: Schedule.once(3) })
      expect(driver.taskIds()).toEqual([a, b])
      expect(driver.nextSlot()).toBe(3)
      expect(driver.status(a)).toBe("scheduled")
      expect(driver.status("zzz")).toBe("unknown")
      expect(driver.info(b)).toMatchObject({ id: "b", scheduledFor: 3, state: "scheduled" })
      expect(driver.cancel(b)).toBe(true)
      expect(driver.nextSlot()).toBe(7)
      expect(driver.stats()).toMatchObject({ scheduled: 1, cancelled: 1, accepted: 2 })
      driver.checkInvariants()
    })
  })
})

describe("regressions", () => {
  it("runDue terminates when a catch-up task's runs take longer than its period", () => {
    const { clock, driver } = setup(0)
    // Guard: without runDue's bound this test would loop forever, and vitest cannot time out a
    // synchronous loop, so the whole suite would hang instead of failing. Past the limit the job
    // cancels its own task, which ends even an unbounded runDue; throwing would not, since a
    // failed run of a recurring task just goes on to its next slot.
    const limit = 10
    let calls = 0
    driver.scheduleUnsafe({
      id: "long",
      job: () => {
        if (++calls >= limit) driver.cancel("long")
        clock.advance(15)
      },
      schedule: Schedule.fixedRate(10),
    })
    // Only the run due when runDue was called; the slots the long run passed are due next time.
    expect(driver.runDue()).toBe(1)
    expect(clock.now()).toBe(15)
    expect(driver.nextSlot()).toBe(10)
    expect(driver.runDue()).toBe(1) // slot 10, late, ends at 30
    expect(clock.now()).toBe(30)
    expect(calls).toBe(2)
    expect(driver.status("long")).toBe("scheduled")
  })

  it("a follow-up that only became due because a job moved the clock waits for the next runDue", () => {
    const { clock, driver } = setup(0)
    let n = 0
    driver.scheduleUnsafe({
      job: () => {
        clock.advance(1)
        if (n++ < 2) throw new Error("again")
      },
      schedule: Schedule.once(0),
      retry: { maxRetries: 3, base: 0 },
    })
    // The first failure is at 1, its retry due at 1: after the call's time (0), so it waits.
    expect(driver.runDue()).toBe(1)
    expect(driver.runDue()).toBe(1)
  })
})

describe("bad input and the order of what a driver reports (SPEC §11, §13)", () => {
  it("SPEC §13: a job that is not a function is refused by scheduleDeduplicated and update, changing nothing", () => {
    const { driver } = setup()
    const e = err(
      driver.scheduleDeduplicated({
        job: 5 as never,
        schedule: Schedule.once(0),
        dedup: { key: "k" },
      }),
    )
    expect(e).toMatchObject({ _tag: "InvalidOption", field: "job", value: 5 })
    expect(driver.taskIds()).toEqual([])
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(10) })
    const u = err(driver.update(id, { job: "nope" as never }))
    expect(u).toMatchObject({ _tag: "InvalidOption", field: "job", value: "nope" })
    expect(u.message).toBe('job must be a function, got "nope"')
    expect(ok(driver.update(id, { job: noop, priority: "high" }))).toBe(true)
    expect(driver.info(id)?.priority).toBe("high")
    // No changes at all is the kernel's typed error, not an exception of the driver.
    expect(() => driver.update(id, undefined as never)).not.toThrow()
  })

  it("SPEC §13: runUntil names the clock or the end it refuses", () => {
    const real = Driver.make({ clock: Clock.system })
    expect(() => real.runUntil(0)).toThrow(expect.objectContaining({ field: "clock" }))
    const { driver } = setup(50)
    expect(() => driver.runUntil(49)).toThrow(
      expect.objectContaining({
        field: "end",
        value: 49,
        message: "end must be a safe integer no earlier than now (50), got 49",
      }),
    )
  })

  it("SPEC §11: a job returning null or a non-promise value succeeds; a promise fails the run", () => {
    const { driver } = setup()
    driver.scheduleUnsafe({ id: "null", job: (() => null) as never, schedule: Schedule.once(0) })
    driver.scheduleUnsafe({
      id: "obj",
      job: (() => ({ value: 1 })) as never,
      schedule: Schedule.once(0),
    })
    driver.scheduleUnsafe({
      id: "promise",
      job: (() => Promise.resolve()) as never,
      schedule: Schedule.once(0),
    })
    const records = driver.tick(0)
    expect(records.map((r) => [r.id, r.outcome.kind])).toEqual([
      ["null", "succeeded"],
      ["obj", "succeeded"],
      ["promise", "failed"],
    ])
  })

  it("SPEC §11: slots skipped when a run is taken are reported before that run, by runDue and by tick", () => {
    for (const step of ["runDue", "tick"] as const) {
      const log: Array<string> = []
      const { clock, driver } = setup(0, {
        onRun: (r) => void log.push(`ran ${r.scheduledFor}`),
        onOccurrence: (o) =>
          void log.push(o.kind === "skipped" ? `skipped ${o.first}-${o.last}` : o.kind),
      })
      driver.scheduleUnsafe({
        job: () => void log.push("job"),
        schedule: Schedule.fixedRate(10),
        window: 5,
      })
      clock.set(32)
      if (step === "runDue") driver.runDue()
      else driver.tick(32)
      expect(log, step).toEqual(["skipped 0-20", "job", "ran 30"])
      expect(driver.drainOccurrences()).toEqual([])
    }
  })

  it("SPEC §11: a tick inside a job returns that job's nested runs only; the outer tick gets its own", () => {
    const { driver } = setup()
    let inner: Array<Task.RunRecord> | undefined
    driver.scheduleUnsafe({
      id: "outer",
      job: () => {
        inner = driver.tick(driver.clock.now())
      },
      schedule: Schedule.at(0),
    })
    driver.scheduleUnsafe({ id: "later", job: noop, schedule: Schedule.at(20) })
    expect(driver.tick(20).map((r) => r.id)).toEqual(["outer", "later"])
    expect(inner).toEqual([])
  })

  it("checkInvariants throws what the kernel's check throws", () => {
    const { driver } = setup()
    driver.checkInvariants()
    const broken = new Errors.InvariantViolation({ message: "broken" })
    const spy = vi.spyOn(Kernel.Kernel.prototype, "checkInvariants").mockImplementation(() => {
      throw broken
    })
    try {
      expect(() => driver.checkInvariants()).toThrow(broken)
    } finally {
      spy.mockRestore()
    }
  })
})

describe("simulate: its bounds and its options (SPEC §15)", () => {
  it("SPEC §13: from and until must be safe integers, until no earlier than from; each is named", () => {
    expect(Driver.simulate([], { from: 5, until: 5 })).toMatchObject({ ids: [], runs: [] })
    expect(Driver.simulate([], { from: 5, until: 4 })).toMatchObject({
      _tag: "InvalidTime",
      field: "until",
      value: 4,
      message: "until must be a safe integer no earlier than from, got 4",
    })
    expect(Driver.simulate([], { from: 1.5, until: 4 })).toMatchObject({
      _tag: "InvalidTime",
      field: "from",
      value: 1.5,
      message: "from must be a safe integer, got 1.5",
    })
  })

  it("SPEC §15: the named breakers and the jitter source given are the simulation's", () => {
    const failing = { outcome: () => Task.failed("down"), until: 100 }
    const tasks = [{ id: "a", schedule: Schedule.fixedRate(10), breaker: "smtp" }] as const
    const held = Driver.simulate(tasks, {
      ...failing,
      breakers: { smtp: { failures: 2, coolDown: 1_000 } },
    })
    if ("_tag" in held) throw held
    expect(held.runs.length).toBe(2)
    expect(held.tasks[0]?.state).toBe("paused")
    const jittered = (random?: Random.Random) => {
      const sim = Driver.simulate(
        [{ schedule: Schedule.once(0), retry: { maxRetries: 1, base: 1_000, jitter: "full" } }],
        { ...failing, until: 2_000, ...(random === undefined ? {} : { random }) },
      )
      if ("_tag" in sim) throw sim
      return sim.runs.map((r) => r.scheduledFor)
    }
    expect(jittered()).toEqual(jittered(Random.seeded(0)))
    expect(jittered(Random.seeded(1))).not.toEqual(jittered(Random.seeded(0)))
  })
})
