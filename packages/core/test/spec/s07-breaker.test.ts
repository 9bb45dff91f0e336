/**
 * SPEC §7 circuit breakers (and the §5 row "FAIL, recurring, circuit breaker opens → paused"),
 * through the driver on a manual clock.
 */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { Breaker, Clock, Driver, Errors, Schedule, Task } from "../../src/index.ts"
import { err, failing, noop, setup } from "../support.ts"

const transitions = (os: ReadonlyArray<Task.Occurrence>) =>
  os
    .filter((o): o is Task.BreakerChanged => o.kind === "breaker")
    .map((o) => `${o.at} ${o.breaker} ${o.from}->${o.to}${o.probe ? ` probe=${o.probe}` : ""}`)

describe("§7 a task's own breaker", () => {
  it("opens after n failed slots: the task is held (running --FAIL, breaker opens--> paused)", () => {
    const { driver } = setup()
    const id = driver.scheduleUnsafe({
      id: "r",
      job: failing(),
      schedule: Schedule.fixedRate(10),
      breaker: { failures: 2, coolDown: 100 },
    })
    const records = driver.tick(50)
    expect(records.map((r) => [r.scheduledFor, r.state, r.pausedReason])).toEqual([
      [0, "scheduled", undefined],
      [10, "paused", "breaker"],
    ])
    expect(driver.info(id)).toMatchObject({
      state: "paused",
      pausedReason: "breaker",
      breaker: "r",
    })
    expect(driver.breaker("r")).toMatchObject({
      shared: false,
      state: "open",
      failures: 2,
      openedAt: 10,
      halfOpenAt: 110,
      held: ["r"],
    })
    expect(transitions(driver.drainOccurrences())).toEqual(["10 r closed->open"])
  })

  it("after the cool-down one run goes through as the probe; its success closes the breaker", () => {
    const { driver } = setup()
    let down = true
    driver.scheduleUnsafe({
      id: "r",
      job: () => {
        if (down) throw new Error("down")
      },
      schedule: Schedule.fixedRate(10),
      breaker: { failures: 2, coolDown: 100 },
    })
    driver.tick(50)
    down = false
    const records = driver.tick(130)
    // Half-open at 110: the probe is the first grid slot >= 110; 20..100 passed while held.
    expect(records.map((r) => r.scheduledFor)).toEqual([110, 120, 130])
    const os = driver.drainOccurrences()
    expect(transitions(os)).toEqual([
      "10 r closed->open",
      "110 r open->half-open probe=r",
      "110 r half-open->closed",
    ])
    expect(os.filter((o) => o.kind === "skipped")).toEqual([
      {
        kind: "skipped",
        id: "r",
        generation: 1,
        cause: "breaker",
        first: 20,
        last: 100,
        count: 9,
        exact: true,
        nextSlot: 110,
        at: 110,
      },
    ])
    expect(driver.breaker("r")).toMatchObject({ state: "closed", failures: 0, opens: 0 })
  })

  it("a failed probe opens it again; the cool-down grows by factor, capped by maxCoolDown", () => {
    const { driver } = setup()
    driver.scheduleUnsafe({
      id: "r",
      job: failing(),
      schedule: Schedule.fixedRate(10),
      breaker: { failures: 1, coolDown: 100, factor: 3, maxCoolDown: 500 },
    })
    const records = driver.tick(2000)
    expect(records.map((r) => r.scheduledFor)).toEqual([0, 100, 400, 900, 1400, 1900])
    const opens = driver
      .drainOccurrences()
      .filter((o): o is Task.BreakerChanged => o.kind === "breaker" && o.to === "open")
      .map((o) => [o.at, o.coolDown, o.halfOpenAt])
    expect(opens).toEqual([
      [0, 100, 100],
      [100, 300, 400],
      [400, 500, 900], // 900 would be the next cool-down; capped at 500
      [900, 500, 1400],
      [1400, 500, 1900],
      [1900, 500, 2400],
    ])
  })

  it("a success while closed resets the count of failed slots", () => {
    const { driver } = setup()
    const pattern = [false, true, false, true, false, false]
    let n = 0
    driver.scheduleUnsafe({
      id: "r",
      job: () => {
        if (!pattern[n++]) throw new Error("fail")
      },
      schedule: Schedule.fixedRate(10),
      breaker: { failures: 2, coolDown: 1000 },
    })
    expect(driver.tick(100).map((r) => r.state)).toEqual([
      "scheduled",
      "scheduled",
      "scheduled",
      "scheduled",
      "scheduled",
      "paused",
    ])
  })

  it("a failure with retries left does not count; a slot whose retries are used up does", () => {
    const { driver } = setup()
    driver.scheduleUnsafe({
      id: "r",
      job: failing(),
      schedule: Schedule.fixedRate(100),
      retry: { maxRetries: 2, base: 1 },
      breaker: { failures: 1, coolDown: 1000 },
    })
    expect(driver.tick(50).map((r) => [r.attempt, r.state])).toEqual([
      [1, "scheduled"],
      [2, "scheduled"],
      [3, "paused"],
    ])
  })
})

describe("§7 a named breaker shared by several tasks", () => {
  const make = () => {
    const clock = new Clock.ManualClock(0)
    const driver = Driver.make({
      clock,
      breakers: { smtp: { failures: 2, coolDown: 100 } },
    })
    return { clock, driver }
  }

  it("failed slots of any of its tasks count; when it opens, all its tasks are held", () => {
    const { driver } = make()
    let down = true
    const job = () => {
      if (down) throw new Error("smtp down")
    }
    driver.scheduleUnsafe({ id: "a", job, schedule: Schedule.fixedRate(10), breaker: "smtp" })
    driver.scheduleUnsafe({
      id: "b",
      job,
      schedule: Schedule.fixedRate(10, { delay: 5 }),
      breaker: "smtp",
    })
    driver.scheduleUnsafe({ id: "welcome", job, schedule: Schedule.once(50), breaker: "smtp" })
    driver.scheduleUnsafe({ id: "other", job: noop, schedule: Schedule.fixedRate(10) })
    const records = driver.tick(100)
    // a@0 and b@5 fail: open at 5. The one-shot welcome (slot 50) is held, never dropped.
    expect(records.filter((r) => r.id !== "other").map((r) => `${r.id}@${r.scheduledFor}`)).toEqual(
      ["a@0", "b@5"],
    )
    expect(records.filter((r) => r.id === "other")).toHaveLength(11) // untouched by the breaker
    expect(driver.breaker("smtp")).toMatchObject({
      shared: true,
      state: "open",
      halfOpenAt: 105,
      tasks: ["a", "b", "welcome"],
      held: ["a", "b", "welcome"],
    })
    expect(driver.tasks({ state: "paused" }).map((t) => [t.id, t.pausedReason])).toEqual([
      ["a", "breaker"],
      ["b", "breaker"],
      ["welcome", "breaker"],
    ])
    driver.drainOccurrences()
    down = false
    const after = driver.tick(130)
    // Half-open at 105: exactly one probe — welcome, whose own slot (50) has passed: it runs
    // at once (at 105, never before the breaker lets it through). Its success closes the
    // breaker: a and b resume at their first grid slots >= 105 (110 and 105).
    expect(after.filter((r) => r.id !== "other").map((r) => `${r.id}@${r.scheduledFor}`)).toEqual([
      "welcome@50",
      "b@105",
      "a@110",
      "b@115",
      "a@120",
      "b@125",
      "a@130",
    ])
    expect(transitions(driver.drainOccurrences())).toEqual([
      "105 smtp open->half-open probe=welcome",
      "105 smtp half-open->closed",
    ])
    expect(driver.status("welcome")).toBe("done")
  })

  it("while half-open the others stay held until the probe's slot ends", () => {
    const { driver } = make()
    let down = true
    driver.scheduleUnsafe({
      id: "a",
      job: () => {
        if (down) throw new Error("down")
      },
      schedule: Schedule.fixedRate(10),
      breaker: "smtp",
    })
    driver.scheduleUnsafe({
      id: "slow",
      job: failing(),
      schedule: Schedule.fixedRate(1000, { delay: 1 }),
      breaker: "smtp",
    })
    driver.tick(10) // a@0, slow@1 fail: open at 1, half-open at 101
    expect(driver.breaker("smtp")?.state).toBe("open")
    driver.tick(101)
    // The probe is a (its slot 110 comes before slow's 1001); slow stays held meanwhile.
    expect(driver.breaker("smtp")).toMatchObject({ state: "half-open", probe: "a", held: ["slow"] })
    down = false
    expect(driver.tick(110).map((r) => r.id)).toEqual(["a"])
    expect(driver.breaker("smtp")).toMatchObject({ state: "closed", held: [] })
    expect(driver.status("slow")).toBe("scheduled")
  })

  it("held retries are never dropped: they run after the breaker closes", () => {
    const { driver } = make()
    let down = true
    const job = (run: Task.RunInfo) => {
      if (down && run.attempt === 1) throw new Error("down")
    }
    driver.scheduleUnsafe({
      id: "once",
      job: (run) => {
        if (run.attempt === 1) {
          driver.scheduleUnsafe({
            id: "trigger",
            job: failing(),
            schedule: Schedule.once(0),
            breaker: "smtp",
          })
          throw new Error("first attempt fails; its retry waits 50")
        }
      },
      schedule: Schedule.once(0),
      retry: { maxRetries: 1, base: 50 },
      breaker: "smtp",
    })
    driver.scheduleUnsafe({
      id: "r",
      job,
      schedule: Schedule.fixedRate(1000, { delay: 2 }),
      breaker: "smtp",
    })
    // trigger@0 fails (1), r@2 fails (2): open at 2 while once's retry is pending (due 50).
    const records = driver.tick(60)
    expect(records.map((r) => `${r.id}@${r.scheduledFor}#${r.attempt}`)).toEqual([
      "once@0#1",
      "trigger@0#1",
      "r@2#1",
    ])
    expect(driver.info("once")).toMatchObject({
      state: "paused",
      pausedReason: "breaker",
      attempt: 2,
    })
    down = false
    // Half-open at 102: the retry (due 50) is the earliest held run, so it is the probe.
    const later = driver.tick(1002)
    expect(later.map((r) => `${r.id}@${r.scheduledFor}#${r.attempt}`)).toEqual([
      "once@50#2",
      "r@1002#1",
    ])
    expect(driver.status("once")).toBe("done")
  })

  it("a task scheduled while the breaker is open is held at once", () => {
    const { driver } = make()
    driver.scheduleUnsafe({
      id: "a",
      job: failing(),
      schedule: Schedule.fixedRate(10),
      breaker: "smtp",
    })
    driver.tick(10)
    const id = driver.scheduleUnsafe({ job: noop, schedule: Schedule.once(20), breaker: "smtp" })
    expect(driver.info(id)).toMatchObject({ state: "paused", pausedReason: "breaker" })
    driver.checkInvariants()
  })

  it("a task paused by hand is not resumed when the breaker closes", () => {
    const { driver } = make()
    let down = true
    driver.scheduleUnsafe({
      id: "a",
      job: () => {
        if (down) throw new Error("down")
      },
      schedule: Schedule.fixedRate(10),
      breaker: "smtp",
    })
    driver.scheduleUnsafe({
      id: "m",
      job: noop,
      schedule: Schedule.fixedRate(10, { delay: 5 }),
      breaker: "smtp",
    })
    driver.tick(3)
    driver.pause("m")
    driver.tick(10) // a fails twice: open at 10
    down = false
    driver.tick(200)
    expect(driver.breaker("smtp")?.state).toBe("closed")
    expect(driver.info("m")).toMatchObject({ state: "paused", pausedReason: "manual" })
  })

  it("a running task that leaves its open breaker is not paused when its run ends", () => {
    const { driver } = make()
    driver.scheduleUnsafe({ id: "a", job: failing(), schedule: Schedule.once(0), breaker: "smtp" })
    driver.scheduleUnsafe({
      id: "c",
      job: (run) => {
        // While c runs, b's failure opens the breaker: c is asked to pause when its run ends.
        driver.scheduleUnsafe({
          id: "b",
          job: failing(),
          schedule: Schedule.once(0),
          breaker: "smtp",
        })
        driver.runDue()
        expect(driver.breaker("smtp")?.state).toBe("open")
        expect(driver.info(run.id)?.pausedReason).toBe("breaker")
        expect(Result.isSuccess(driver.update(run.id, { breaker: null }))).toBe(true)
      },
      schedule: Schedule.fixedRate(10),
      breaker: "smtp",
    })
    expect(driver.tick(0).find((r) => r.id === "c")?.state).toBe("scheduled")
    expect(driver.info("c")).toMatchObject({ pausedReason: undefined, breaker: undefined })
  })

  it("breakers() lists shared breakers and tasks' own ones", () => {
    const { driver } = make()
    driver.scheduleUnsafe({
      id: "own",
      job: noop,
      schedule: Schedule.once(5),
      breaker: { failures: 1, coolDown: 1 },
    })
    expect(driver.breakers().map((b) => [b.name, b.shared])).toEqual([
      ["smtp", true],
      ["own", false],
    ])
    driver.tick(5) // own is done: its breaker goes with it
    expect(driver.breakers().map((b) => b.name)).toEqual(["smtp"])
    expect(driver.breaker("nope")).toBeUndefined()
  })

  it("update can move a task to another breaker, or remove it", () => {
    const { driver } = make()
    driver.scheduleUnsafe({
      id: "a",
      job: failing(),
      schedule: Schedule.fixedRate(10),
      breaker: "smtp",
    })
    driver.scheduleUnsafe({
      id: "b",
      job: noop,
      schedule: Schedule.fixedRate(10, { delay: 15 }),
      breaker: "smtp",
    })
    driver.tick(10) // a fails at 0 and 10: open at 10; b (first slot 15) held
    expect(driver.info("b")?.pausedReason).toBe("breaker")
    expect(driver.update("b", { breaker: null })).toEqual(
      expect.objectContaining({ _tag: "Success" }),
    )
    // Its breaker no longer holds it: released, keeping its slot 15 (not passed yet).
    expect(driver.info("b")).toMatchObject({
      state: "scheduled",
      breaker: undefined,
      scheduledFor: 15,
    })
    expect(driver.breaker("smtp")?.tasks).toEqual(["a"])
  })
})

describe("§7 breaker options", () => {
  it("an unknown breaker name is an InvalidOption, and nothing is scheduled", () => {
    const { driver } = setup()
    expect(
      err(driver.schedule({ job: noop, schedule: Schedule.once(0), breaker: "smtp" })),
    ).toMatchObject({
      _tag: "InvalidOption",
      field: "breaker",
    })
    expect(driver.stats().accepted).toBe(0)
  })

  it("a bad policy names its field", () => {
    const { driver } = setup()
    const bad: Array<[unknown, string]> = [
      [{ failures: 0, coolDown: 1 }, "breaker.failures"],
      [{ failures: 1, coolDown: -1 }, "breaker.coolDown"],
      [{ failures: 1, coolDown: 1, factor: 0.5 }, "breaker.factor"],
      [{ failures: 1, coolDown: 1, maxCoolDown: "1.5 millis" }, "breaker.maxCoolDown"],
      [{ failures: 1, coolDown: 1, cooldown: 2 }, "breaker.cooldown"],
    ]
    for (const [breaker, field] of bad) {
      const e = err(driver.schedule({ job: noop, schedule: Schedule.once(0), breaker } as never))
      expect(e).toBeInstanceOf(Errors.InvalidOption)
      expect(e).toMatchObject({ field })
    }
    expect(() =>
      Driver.make({
        clock: new Clock.ManualClock(0),
        breakers: { smtp: { failures: 1, coolDown: "x" } as never },
      }),
    ).toThrow(expect.objectContaining({ field: "breakers.smtp.coolDown" }))
  })

  it("Breaker.afterSlot is the pure rule the kernel applies", () => {
    const policy = Breaker.resolve({
      failures: 2,
      coolDown: 10,
      factor: 2,
      maxCoolDown: 30,
    }) as Breaker.Resolved
    const closed: Breaker.Status = { state: "closed", failures: 0, opens: 0 }
    const one = Breaker.afterSlot(closed, policy, false, true)
    expect(one).toEqual({ state: "closed", failures: 1, opens: 0 })
    expect(Breaker.afterSlot(one, policy, false, false)).toEqual(closed)
    const open = Breaker.afterSlot(one, policy, false, true)
    expect(open).toEqual({ state: "open", failures: 2, opens: 1 })
    expect(Breaker.afterSlot(open, policy, false, false)).toBe(open) // open ignores slots
    const half: Breaker.Status = { ...open, state: "half-open" }
    expect(Breaker.afterSlot(half, policy, false, true)).toBe(half) // only the probe counts
    expect(Breaker.afterSlot(half, policy, true, true)).toEqual({
      state: "open",
      failures: 2,
      opens: 2,
    })
    expect(Breaker.afterSlot(half, policy, true, false)).toEqual(closed)
    expect([1, 2, 3].map((n) => Breaker.coolDownOf(policy, n))).toEqual([10, 20, 30])
    expect(Task.failed("x").kind).toBe("failed")
  })
})
