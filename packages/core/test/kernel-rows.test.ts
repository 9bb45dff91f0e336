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
    String(k.schedule({ job: `j${n}`, schedule: Schedule.once(100) }, 0)),
  )
  return { k, ids }
}

describe("generated ids are looked up exactly (SPEC §9)", () => {
  it("each generated id finds its own row", () => {
    const { k, ids } = twelve()
    expect(ids.slice(0, 3)).toEqual(["#0.1", "#1.1", "#2.1"])
    for (const [n, id] of ids.entries()) expect(k.rowOf(id)).toBe(n)
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
    "#:.1",
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

describe("retention of final tasks across the ring's growth (SPEC §14, §5)", () => {
  /** Finishes `n` one-shots, the `m`-th at time `m`; caller ids when `named`. */
  const finishMany = (k: Kernel.Kernel<string>, n: number, named: boolean) => {
    const ids: Array<string> = []
    for (let m = 0; m < n; m++) {
      const options = { job: `j${m}`, schedule: Schedule.once(0) }
      const id = k.schedule(named ? { ...options, id: `t${m}` } : options, m)
      ids.push(id as string)
      k.complete(take(k, m), Task.succeeded, m, false)
    }
    return ids
  }

  it.each([false, true])(
    "the newest maxFinished final tasks are kept with their finish times (caller ids: %s)",
    (named) => {
      const k = new Kernel.Kernel<string>({ retention: { maxFinished: 100 } })
      const ids = finishMany(k, 150, named)
      expect(k.stats()).toMatchObject({ done: 100, accepted: 150, removed: 50 })
      for (const [m, id] of ids.entries()) {
        if (m < 50) expect(k.status(id)).toBe("unknown")
        else expect(k.info(id)).toMatchObject({ state: "done", finishedAt: m, scheduledFor: m })
      }
      expect(k.taskIds()).toEqual(ids.slice(50).sort((a, b) => k.rowOf(a) - k.rowOf(b)))
      k.checkInvariants()
    },
  )

  it("new tasks take the evicted rows first, each with a new generation", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxFinished: 100 } })
    const ids = finishMany(k, 150, false)
    // Rows 0..100 were new; from the 102nd task on, each finish evicted the oldest, whose row the
    // next task took: task m (m >= 101) has row m - 101, generation 2.
    expect(ids.slice(99, 103)).toEqual(["#99.1", "#100.1", "#0.2", "#1.2"])
    expect(ids[149]).toBe("#48.2")
    const capacity = k.rowCapacity
    // Row 49 (task 49's, evicted by the last finish) is free; then rows never used.
    const next = k.schedule({ job: "next", schedule: Schedule.once(1_000) }, 200)
    const fresh = k.schedule({ job: "fresh", schedule: Schedule.once(1_000) }, 200)
    expect([next, fresh]).toEqual(["#49.2", "#101.1"])
    expect(k.rowCapacity).toBe(capacity)
    k.checkInvariants()
  })

  it("a caller id reused while its final task is retained: the old entry is skipped at eviction", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxFinished: 2 } })
    k.schedule({ id: "x", job: "x1", schedule: Schedule.once(0) }, 0)
    k.complete(take(k, 0), Task.succeeded, 0, false)
    // "x" again: the retained done task gives up its row at once.
    k.schedule({ id: "x", job: "x2", schedule: Schedule.once(10) }, 1)
    expect(k.stats()).toMatchObject({ done: 0, scheduled: 1, accepted: 2, removed: 1 })
    finishMany(k, 3, true) // t0, t1, t2 finish; only the two newest are kept
    expect(k.stats()).toMatchObject({ done: 2, scheduled: 1, accepted: 5, removed: 2 })
    expect(k.status("t0")).toBe("unknown")
    expect(k.status("x")).toBe("scheduled")
    expect(k.jobOf("x")).toBe("x2")
    k.checkInvariants()
  })

  it("by age: a final task is kept while younger than maxAge, dropped once it is not", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxAgeMs: 10 } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(0) }, 0)
    k.complete(take(k, 0), Task.succeeded, 0, false)
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(100) }, 9)
    expect(k.status("a")).toBe("done")
    k.schedule({ id: "c", job: "c", schedule: Schedule.once(100) }, 10)
    expect(k.status("a")).toBe("unknown")
    expect(k.stats()).toMatchObject({ done: 0, removed: 1 })
    k.checkInvariants()
  })
})

describe("the final ring grows while evicted rows wait for reuse (SPEC §14)", () => {
  it("entries past the old size keep their state, finish time and row", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxFinished: 10 } })
    // Tickets 0..39 with rows reused as they are evicted: the free cursor moves to ~30.
    for (let m = 0; m < 40; m++) {
      k.schedule({ id: `a${m}`, job: "a", schedule: Schedule.once(0) }, m)
      k.complete(take(k, m), Task.succeeded, m, false)
    }
    // 60 tasks at once, then each finishes: no row is taken meanwhile, so the ring holds tickets
    // from the free cursor (~30) to 99 and doubles while doing so.
    for (let m = 0; m < 60; m++)
      k.schedule({ id: `b${m}`, job: "b", schedule: Schedule.once(0) }, 100)
    for (let m = 0; m < 60; m++) {
      const run = take(k, 100 + m)
      k.complete(run, m % 2 === 0 ? Task.succeeded : { kind: "failed", error: "x" }, 100 + m, false)
    }
    for (let m = 50; m < 60; m++) {
      expect(k.info(`b${m}`)).toMatchObject({
        state: m % 2 === 0 ? "done" : "failed",
        finishedAt: 100 + m,
      })
    }
    expect(k.status("b49")).toBe("unknown")
    expect(k.stats()).toMatchObject({ done: 5, failed: 5, accepted: 100, removed: 90 })
    k.checkInvariants()
    // The free rows are handed out again, each to one task.
    for (let m = 0; m < 90; m++)
      k.schedule({ id: `c${m}`, job: "c", schedule: Schedule.once(5) }, 200)
    expect(new Set(Array.from({ length: 90 }, (_, m) => k.rowOf(`c${m}`))).size).toBe(90)
    k.checkInvariants()
  })

  it("a plain task has no breaker of its own to look up by its id", () => {
    const k = new Kernel.Kernel<string>()
    const id = k.schedule({ job: "a", schedule: Schedule.once(5) }, 0) as string
    expect(k.breaker(id)).toBeUndefined()
    expect(k.breaker("nobody")).toBeUndefined()
  })

  it("an id that only looks generated after its first character finds nothing", () => {
    const { k } = twelve()
    expect(k.rowOf("x0.1")).toBe(-1)
    expect(k.rowOf("00.1")).toBe(-1)
  })
})

describe("retention.maxFinished that is not a count (SPEC §13)", () => {
  it.each([-1, 1.5])("%s is refused with its own message", (maxFinished) => {
    expect(() => new Kernel.Kernel({ retention: { maxFinished } })).toThrow(
      expect.objectContaining({
        _tag: "InvalidOption",
        field: "retention.maxFinished",
        message: `retention.maxFinished must be a non-negative integer, got ${maxFinished}`,
      }),
    )
  })
})

describe("definition of a task with a schedule change waiting for its run (SPEC §15.6, §18)", () => {
  it("the waiting schedule is its definition: a new period, or a one-shot's time from now", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "r", job: "r", schedule: Schedule.fixedRate(10) }, 0)
    take(k, 0)
    expect(k.update("r", { schedule: Schedule.fixedRate(50) }, 1)).toBe(true)
    expect(k.definition("r", 2)?.definition).toMatchObject({
      plan: { kind: "fixed-rate", period: 50 },
      at: undefined,
    })
    expect(k.update("r", { schedule: Schedule.once(30) }, 3)).toBe(true)
    expect(k.definition("r", 4)?.definition).toMatchObject({ plan: undefined, at: 34 })
  })
})

/** A kernel keeping no final task, whose row 0 has held `g` tasks: the next one there is `#0.<g+1>`. */
const rowZeroAtGeneration = (g: number) => {
  const k = new Kernel.Kernel<string>({ retention: { maxFinished: 0 } })
  for (let n = 1; n < g; n++) {
    const id = k.schedule({ job: "old", schedule: Schedule.once(100) }, 0) as string
    k.cancel(id, 0)
  }
  const id = k.schedule({ job: "new", schedule: Schedule.once(100) }, 0) as string
  return { k, id }
}

describe("generated ids of later generations are read digit by digit (SPEC §9)", () => {
  it("generation 10 is found by its decimal id and by no lookalike", () => {
    const { k, id } = rowZeroAtGeneration(10)
    expect(id).toBe("#0.10")
    expect(k.rowOf("#0.10")).toBe(0)
    expect(k.info("#0.10")?.id).toBe("#0.10")
    // ":" is the code unit after "9": read as a digit it would spell 10.
    expect(k.rowOf("#0.:")).toBe(-1)
    expect(k.rowOf("#0.1")).toBe(-1)
    expect(k.rowOf("#0.100")).toBe(-1)
  })

  it("generation 9 and 19 are found: 9 is a digit", () => {
    expect(rowZeroAtGeneration(9).k.rowOf("#0.9")).toBe(0)
    expect(rowZeroAtGeneration(19).k.rowOf("#0.19")).toBe(0)
  })

  it("code units below '0' in the generation are refused, whatever they would add up to", () => {
    const { k } = twelve()
    // "/" is "0" - 1 and ";" is "0" + 11: as digits, (-1) * 10 + 11 = 1, the row's generation.
    expect(k.rowOf("#0./;")).toBe(-1)
    expect(k.rowOf("#0.1/")).toBe(-1)
    // "'" is "0" - 9: as a digit after "1" it would spell 10 - 9 = 1.
    expect(k.rowOf("#0.1'")).toBe(-1)
    expect(k.rowOf("#0.1")).toBe(0)
  })
})

describe("final tasks leave the table when retention evicts them (SPEC §13)", () => {
  it("an evicted task with a caller id is forgotten by that id, and its row serves a new task", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxFinished: 1 } })
    k.schedule({ id: "x", job: "x", schedule: Schedule.once(100), tags: ["t"] }, 0)
    k.schedule({ id: "z", job: "z", schedule: Schedule.once(100) }, 0)
    expect(k.cancel("x", 1)).toBe(true)
    expect(k.info("x")?.state).toBe("cancelled")
    // The second final task is one too many: x, the oldest, is evicted.
    expect(k.cancel("z", 2)).toBe(true)
    expect(k.info("x")).toBeUndefined()
    const y = k.schedule({ job: "y", schedule: Schedule.once(100) }, 3) as string
    expect(k.rowOf(y)).toBe(0)
    expect(k.info("x")).toBeUndefined()
    expect(k.tasks().map((t) => t.id)).toEqual([y, "z"])
    expect(k.tasks({ tag: "t" })).toEqual([])
  })

  it("cancelled tasks count towards retention.maxFinished, the oldest going first", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxFinished: 1 } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(100) }, 0)
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(100) }, 0)
    k.cancel("a", 1)
    k.cancel("b", 2)
    expect(k.info("a")).toBeUndefined()
    expect(k.info("b")?.state).toBe("cancelled")
    expect(k.tasks().map((t) => t.id)).toEqual(["b"])
  })

  it("a live task stays found however many final tasks were evicted before its row", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxFinished: 0 } })
    // The first push of a high-priority task has the smallest order key there is, 0.
    const a = k.schedule({ job: "a", schedule: Schedule.once(100), priority: "high" }, 0) as string
    for (let n = 0; n < 3; n++)
      k.cancel(k.schedule({ job: "b", schedule: Schedule.once(100) }, 0) as string, 0)
    expect(k.info(a)?.state).toBe("scheduled")
    expect(k.tasks().map((t) => t.id)).toEqual([a])
  })
})

describe("tasks(filter) matches state, kind and tag exactly (SPEC §15)", () => {
  const mixed = () => {
    const k = new Kernel.Kernel<string>()
    const plain = k.schedule({ job: "p", schedule: Schedule.once(100) }, 0) as string
    k.schedule({ id: "named", job: "n", schedule: Schedule.once(100) }, 0)
    k.schedule({ id: "rate", job: "r", schedule: Schedule.fixedRate(10), tags: ["t"] }, 0)
    k.pause("rate", 0)
    return { k, plain }
  }

  it("every task, once each, and no unused row", () => {
    const { k, plain } = mixed()
    expect(k.tasks().map((t) => t.id)).toEqual([plain, "named", "rate"])
  })

  it("by state: the first state of the lifecycle is a filter too", () => {
    const { k, plain } = mixed()
    expect(k.tasks({ state: "scheduled" }).map((t) => t.id)).toEqual([plain, "named"])
    expect(k.tasks({ state: "paused" }).map((t) => t.id)).toEqual(["rate"])
  })

  it("by a state that is not one matches nothing", () => {
    const { k } = mixed()
    expect(k.tasks({ state: "sleeping" as never })).toEqual([])
  })

  it("by kind: a task without a plan is a one-shot, with or without a side object", () => {
    const { k, plain } = mixed()
    expect(k.tasks({ kind: "once" }).map((t) => t.id)).toEqual([plain, "named"])
    expect(k.tasks({ kind: "fixed-rate" }).map((t) => t.id)).toEqual(["rate"])
    expect(k.tasks({ kind: "cron" })).toEqual([])
    expect(k.pauseAll({ kind: "once" }, 1)).toEqual([plain, "named"])
    expect(k.tasks({ state: "scheduled" })).toEqual([])
  })

  it("by kind and tag together", () => {
    const { k } = mixed()
    expect(k.tasks({ kind: "fixed-rate", tag: "t" }).map((t) => t.id)).toEqual(["rate"])
    expect(k.tasks({ kind: "once", tag: "t" })).toEqual([])
  })
})

describe("dead entries of the waiting queues count towards compaction (SPEC §14, §20.1)", () => {
  it("the heap is compacted once more than half of the heap's and the queues' entries are dead", () => {
    const k = new Kernel.Kernel<string>({ limits: { groups: { g: { concurrency: 1 } } } })
    for (const id of ["run", "w0", "w1", "w2", "w3"])
      k.schedule({ id, job: id, schedule: Schedule.once(0), group: "g" }, 0)
    expect(take(k, 0).job).toBe("run")
    expect(k.takeDue(0)).toBeUndefined()
    // The heap is empty and four runs wait: two dead of four are half, the third compacts.
    expect(k.stats()).toMatchObject({ heapEntries: 0, deadEntries: 0 })
    k.cancel("w1", 0)
    k.cancel("w2", 0)
    expect(k.stats().deadEntries).toBe(2)
    k.cancel("w3", 0)
    expect(k.stats().deadEntries).toBe(0)
    k.checkInvariants()
  })
})

describe("a one-shot given a grid by an update keeps the default missed-run policy (SPEC §15.6)", () => {
  it("catch-up: the grid slot missed by a long run still runs", () => {
    const k = new Kernel.Kernel<string>()
    const id = k.schedule({ job: "p", schedule: Schedule.once(100) }, 0) as string
    expect(k.update(id, { schedule: Schedule.fixedRate(10) }, 0)).toBe(true)
    // Its grid starts now: slot 0 runs until 35, past the slots 10, 20 and 30.
    const run = take(k, 0)
    k.complete(run, Task.succeeded, 35, false)
    expect(k.info(id)?.scheduledFor).toBe(10)
  })
})

describe("a generated id's index past the used rows finds nothing (SPEC §9)", () => {
  it("2^29 is refused though the table's offsets of that row wrap around to row 0's", () => {
    const { k } = twelve()
    // Row fields sit at `i << 3` in 32-bit words: for 2^29 that is 2^32, which wraps to 0.
    expect(k.rowOf(`#${2 ** 29}.1`)).toBe(-1)
    expect(k.info(`#${2 ** 29}.1`)).toBeUndefined()
    expect(k.rowOf("#12.1")).toBe(-1)
  })
})
