import { describe, expect, it } from "vitest"
import { Errors, Kernel, Random, Rules, Schedule, Task } from "../src/index.ts"

const take = <J>(k: Kernel.Kernel<J>, now: number, limit?: number): Kernel.Run<J> => {
  const run = limit === undefined ? k.takeDue(now) : k.takeDue(now, limit)
  if (run === undefined) throw new Error(`nothing due at ${now}`)
  return run
}

const id = (r: Task.TaskId | Errors.ScheduleError): Task.TaskId => {
  if (typeof r !== "string") throw new Error(r.message)
  return r
}

describe("constructors", () => {
  it("formatId writes #<row>.<generation>", () => {
    expect(Kernel.formatId(3, 7)).toBe("#3.7")
  })

  it("rejects retention limits that are not non-negative integers", () => {
    expect(() => new Kernel.Kernel({ retention: { maxFinished: -1 } })).toThrow(
      Errors.InvalidOption,
    )
    expect(() => new Kernel.Kernel({ retention: { maxFinished: 1.5 } })).toThrow(
      /retention.maxFinished/,
    )
    expect(() => new Kernel.Kernel({ retention: { maxAgeMs: Number.NaN } })).toThrow(
      /retention.maxAgeMs/,
    )
  })
})

describe("models", () => {
  it("accepts, takes and completes a one-shot task (the class example)", () => {
    const k = new Kernel.Kernel<string>()
    const t = id(k.schedule({ job: "hello", schedule: Schedule.once(10) }, 0))
    expect(t).toBe("#0.1")
    expect(k.nextSlot()).toBe(10)
    expect(k.takeDue(9)).toBeUndefined()
    expect(k.status(t)).toBe("scheduled")
    const run = take(k, 10)
    expect(run.job).toBe("hello")
    expect(run.toJSON()).toEqual({
      id: t,
      generation: 1,
      slot: 10,
      scheduledFor: 10,
      startedAt: 10,
      attempt: 1,
      runNumber: 1,
      tags: [],
    })
    expect(k.status(t)).toBe("running")
    expect(k.stats()).toMatchObject({ running: 1, inFlight: 1, scheduled: 0 })
    const record = k.complete(run, Task.succeeded, 12, true)
    expect(record).toEqual({
      kind: "ran",
      id: t,
      generation: 1,
      slot: 10,
      scheduledFor: 10,
      startedAt: 10,
      attempt: 1,
      runNumber: 1,
      finishedAt: 12,
      outcome: Task.succeeded,
      state: "done",
      continuation: "final",
      nextSlot: undefined,
      dropped: undefined,
      merged: undefined,
    })
    expect(k.status(t)).toBe("done")
    expect(k.info(t)?.finishedAt).toBe(12)
    expect(k.nextSlot()).toBeUndefined()
    k.checkInvariants()
  })

  it("complete into a buffer: the same record, its id read from the run it is of", () => {
    const k = new Kernel.Kernel<string>()
    const a = k.schedule({ schedule: Schedule.once(1), job: "a" }, 0) as Task.TaskId
    const b = k.schedule({ schedule: Schedule.once(1), job: "b" }, 0) as Task.TaskId
    const buffer = Rules.makeRecordBuffer()
    const first = take(k, 1)
    const second = take(k, 1)
    const own = { ...(k.complete(first, Task.succeeded, 2, true) as Task.RunRecord) }
    const into = k.complete(second, Task.succeeded, 3, true, buffer)
    expect(into).toBe(buffer)
    expect(buffer.id).toBe(b)
    // A spread (what keeps it) and JSON see the record's fields, the id among them, not its run.
    expect({ ...buffer }).toEqual({ ...own, id: b, finishedAt: 3 })
    expect(Object.keys(buffer)).toEqual(Object.keys(own))
    expect(JSON.parse(JSON.stringify(buffer)).id).toBe(b)
    expect(Rules.copyRecord(buffer).id).toBe(b)
    expect(a).not.toBe(b)
  })

  it("complete without a record still applies the outcome", () => {
    const k = new Kernel.Kernel<string>()
    const t = id(
      k.schedule({ job: "x", schedule: Schedule.once(0), retry: { maxRetries: 1, base: 5 } }, 0),
    )
    expect(k.complete(take(k, 0), Task.failed("no"), 0, false)).toBeUndefined()
    expect(k.info(t)).toMatchObject({ state: "scheduled", scheduledFor: 5, attempt: 2 })
  })

  it("a run is started at max(now, slot): late when taken after its slot", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ job: "x", schedule: Schedule.once(10) }, 0)
    const run = take(k, 25)
    expect(run.scheduledFor).toBe(10)
    expect(run.startedAt).toBe(25)
  })

  it("takeDue(now, limit) takes a future run up to limit, started at its slot", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ job: "a", schedule: Schedule.once(30) }, 0)
    k.schedule({ job: "b", schedule: Schedule.once(10) }, 0)
    expect(k.takeDue(0, 5)).toBeUndefined()
    const run = take(k, 0, 40)
    expect(run.job).toBe("b")
    expect(run.startedAt).toBe(10)
  })

  it("info describes a task in full", () => {
    const k = new Kernel.Kernel<string>()
    const t = id(
      k.schedule(
        {
          id: "report",
          job: "r",
          priority: "high",
          schedule: Schedule.fixedRate(100, { delay: 5 }),
          retry: { maxRetries: 1, base: 10 },
        },
        0,
      ),
    )
    expect(k.info(t)).toEqual({
      id: "report",
      generation: 1,
      state: "scheduled",
      priority: "high",
      kind: "fixed-rate",
      scheduledFor: 5,
      attempt: 1,
      runNumber: 0,
      consecutiveFailures: 0,
      lastFailure: undefined,
      scheduleError: undefined,
      finishedAt: undefined,
      pausedReason: undefined,
      tags: [],
      window: undefined,
      breaker: undefined,
    })
    const boom = Task.failed(new Error("boom"))
    k.complete(take(k, 5), boom, 5, false)
    expect(k.info(t)).toMatchObject({
      state: "scheduled",
      scheduledFor: 15,
      attempt: 2,
      runNumber: 1,
    })
    k.complete(take(k, 15), boom, 15, false)
    expect(k.info(t)).toMatchObject({
      scheduledFor: 105,
      attempt: 1,
      runNumber: 2,
      consecutiveFailures: 1,
      lastFailure: boom,
    })
    expect(k.info("nope")).toBeUndefined()
  })

  it("kinds: once and at are 'once'; the others are named after their schedule", () => {
    const k = new Kernel.Kernel<string>()
    const kinds = [
      Schedule.once(1),
      Schedule.at(1),
      Schedule.fixedRate(1),
      Schedule.fixedDelay(1),
      Schedule.cron("* * * * *"),
      Schedule.custom((s, f) => (s === undefined ? f : undefined)),
    ].map((schedule) => k.info(id(k.schedule({ job: "x", schedule }, 0)))?.kind)
    expect(kinds).toEqual(["once", "once", "fixed-rate", "fixed-delay", "cron", "custom"])
  })

  it("a custom schedule whose next() breaks mid-life ends the task and keeps the error", () => {
    const k = new Kernel.Kernel<string>()
    const t = id(
      k.schedule(
        {
          job: "x",
          schedule: Schedule.custom((slot, at) => {
            if (slot === undefined) return at
            throw new Error("calendar unavailable")
          }),
        },
        0,
      ),
    )
    const r = k.complete(take(k, 0), Task.succeeded, 0, true)
    expect(r).toMatchObject({ state: "done", continuation: "final", nextSlot: undefined })
    expect(k.info(t)?.scheduleError).toMatchObject({ _tag: "InvalidTime", field: "next()" })
  })

  it("taskIds lists live and retained tasks; arrayBytes reports the typed arrays", () => {
    const k = new Kernel.Kernel<string>()
    const a = id(k.schedule({ job: "a", schedule: Schedule.once(0) }, 0))
    const b = id(k.schedule({ id: "b", job: "b", schedule: Schedule.once(5) }, 0))
    k.complete(take(k, 0), Task.succeeded, 0, false)
    expect(k.taskIds()).toEqual([a, b])
    expect(k.arrayBytes).toBeGreaterThan(0)
  })
})

describe("a pool of workers (several runs in flight)", () => {
  it("a recurring task is never taken again while its run is in flight", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "r", job: "r", schedule: Schedule.fixedRate(10) }, 0)
    k.schedule({ id: "o", job: "o", schedule: Schedule.fixedRate(10) }, 0)
    const r0 = take(k, 0)
    const o0 = take(k, 0)
    // Both in flight; at 50 nothing else may be taken, however late they are.
    expect(k.takeDue(50)).toBeUndefined()
    expect(k.stats()).toMatchObject({ running: 2, inFlight: 2, scheduled: 0 })
    const rec = k.complete(r0, Task.succeeded, 50, true)
    // catch-up: the missed slot 10 is next and due at once.
    expect(rec).toMatchObject({ state: "scheduled", continuation: "next", nextSlot: 10 })
    const r1 = take(k, 50)
    expect([r1.job, r1.scheduledFor, r1.startedAt]).toEqual(["r", 10, 50])
    expect(k.takeDue(50)).toBeUndefined()
    k.complete(o0, Task.succeeded, 50, false)
    k.complete(r1, Task.succeeded, 50, false)
    k.checkInvariants()
  })

  it("a run whose task was cancelled meanwhile is reported as cancelled and not rescheduled", () => {
    const k = new Kernel.Kernel<string>()
    const t = id(
      k.schedule({ job: "x", schedule: Schedule.fixedRate(10), retry: { maxRetries: 3 } }, 0),
    )
    const run = take(k, 0)
    expect(k.cancel(t, 3)).toBe(true)
    expect(k.stats()).toMatchObject({ running: 0, cancelled: 1, inFlight: 1 })
    const r = k.complete(run, Task.failed("late"), 7, true)
    expect(r).toMatchObject({
      outcome: { kind: "failed", error: "late" },
      state: "cancelled",
      continuation: "final",
      nextSlot: undefined,
    })
    expect(k.stats()).toMatchObject({ inFlight: 0, heapEntries: 0 })
    expect(k.nextSlot()).toBeUndefined()
    k.checkInvariants()
  })

  it("a run whose id was reused meanwhile does not touch the new task", () => {
    const k = new Kernel.Kernel<string>({ random: Random.seeded(1) })
    k.schedule({ id: "x", job: "old", schedule: Schedule.once(0) }, 0)
    const run = take(k, 0)
    k.cancel("x", 0)
    k.schedule({ id: "x", job: "new", schedule: Schedule.once(100) }, 0)
    const r = k.complete(run, Task.succeeded, 1, true)
    expect(r).toMatchObject({ id: "x", generation: 1, state: "cancelled", continuation: "final" })
    expect(k.info("x")).toMatchObject({ generation: 2, state: "scheduled", scheduledFor: 100 })
    k.checkInvariants()
  })
})

describe("checkInvariants", () => {
  it("notices a corrupted count", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ job: "x", schedule: Schedule.once(0) }, 0)
    ;(k as unknown as { rows: { counts: Float64Array } }).rows.counts[0] = 5
    expect(() => k.checkInvariants()).toThrow(Errors.InvariantViolation)
  })

  it("notices a dead-entry counter that disagrees with the heap", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ job: "x", schedule: Schedule.once(0) }, 0)
    ;(k as unknown as { rows: { dead: number } }).rows.dead = 1
    expect(() => k.checkInvariants()).toThrow(/dead heap entries/)
  })
})

describe("regressions", () => {
  it("reusing an id whose final task expires by age in the same call keeps the counts right", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxAgeMs: 10 } })
    k.schedule({ id: "x", job: "a", schedule: Schedule.once(0) }, 0)
    const run = k.takeDue(0) as Kernel.Run<string>
    k.complete(run, Task.succeeded, 0, false)
    expect(k.status("x")).toBe("done")
    // At 100 the done task is past its age limit: accepting the new "x" first evicts the old one.
    expect(k.schedule({ id: "x", job: "b", schedule: Schedule.once(0) }, 100)).toBe("x")
    k.checkInvariants()
    expect(k.stats()).toMatchObject({ scheduled: 1, done: 0, accepted: 2, removed: 1 })
    expect(k.status("x")).toBe("scheduled")
  })

  it("a caller id that starts with # but is not of the generated form can be queried and cancelled", () => {
    const k = new Kernel.Kernel<string>()
    for (const id of ["#foo", "#1.0", "#01.1", "#"]) {
      expect(k.schedule({ id, job: id, schedule: Schedule.once(5) }, 0)).toBe(id)
      expect(k.status(id)).toBe("scheduled")
      expect(k.info(id)?.id).toBe(id)
    }
    expect(k.cancel("#1.0", 0)).toBe(true)
    expect(k.status("#1.0")).toBe("cancelled")
    expect(k.status("#foo")).toBe("scheduled")
    k.checkInvariants()
  })

  it("SPEC §9: an id that is no string is refused, even one with a length (an array)", () => {
    const k = new Kernel.Kernel<string>()
    for (const id of [["a"], { length: 2 }, 7, ""]) {
      const r = k.schedule({ id: id as never, job: "a", schedule: Schedule.once(5) }, 0)
      expect(r).toBeInstanceOf(Errors.InvalidOption)
      expect([(r as Errors.InvalidOption).field, (r as Errors.InvalidOption).value]).toEqual([
        "id",
        id,
      ])
    }
    expect(k.stats().accepted).toBe(0)
  })

  it("coalescing a late slot never moves it past the limit the caller asked for", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ job: "c", schedule: Schedule.fixedRate(3), missedRuns: "coalesce" }, 0)
    const first = take(k, 0)
    k.complete(first, Task.succeeded, 0, false) // next slot 3
    // The clock is at 10 (a long job elsewhere) but the caller takes runs due by 4 only:
    // slot 3 runs as 3, not as 9.
    const run = take(k, 10, 4)
    expect([run.scheduledFor, run.startedAt]).toEqual([3, 10])
    k.checkInvariants()
  })
})

describe("shift: re-anchoring after a wall-clock step (SPEC §2)", () => {
  const id = (r: unknown) => r as Task.TaskId
  it("moves times that count from a delay and keeps calendar instants", () => {
    const k = new Kernel.Kernel<string>()
    const once = id(k.schedule({ job: "once", schedule: Schedule.once(1_000) }, 0))
    const at = id(k.schedule({ job: "at", schedule: Schedule.at(5_000) }, 0))
    const rate = id(
      k.schedule({ job: "rate", schedule: Schedule.fixedRate(2_000, { delay: 2_000 }) }, 0),
    )
    const cron = id(
      k.schedule({ job: "cron", schedule: Schedule.cron("0 * * * *") }, 0), // 01:00Z = 3,600,000
    )
    // The wall clock stepped 10 s ahead at 500: delays keep their distance, instants stay.
    k.shift(10_000)
    k.checkInvariants()
    expect(k.info(once)?.scheduledFor).toBe(11_000)
    expect(k.info(at)?.scheduledFor).toBe(5_000)
    expect(k.info(rate)?.scheduledFor).toBe(12_000)
    expect(k.info(cron)?.scheduledFor).toBe(3_600_000)
    const order: Array<string> = []
    for (let now = 5_000; now <= 14_000; now += 1_000) {
      for (let run = k.takeDue(now); run !== undefined; run = k.takeDue(now)) {
        order.push(`${run.job}@${run.scheduledFor}`)
        k.complete(run, Task.succeeded, now, false)
      }
    }
    // The fixed-rate grid moved too: 12 s, then 14 s.
    expect(order).toEqual(["at@5000", "once@11000", "rate@12000", "rate@14000"])
    k.checkInvariants()
  })

  it("a pending retry of a calendar task counts from its failure and moves; the task's grid does not", () => {
    const k = new Kernel.Kernel<string>()
    const at = id(
      k.schedule(
        { job: "at", schedule: Schedule.at(1_000), retry: { maxRetries: 1, base: 500 } },
        0,
      ),
    )
    const run = k.takeDue(1_000) as Kernel.Run<string>
    k.complete(run, Task.failed("x"), 1_000, false)
    expect(k.info(at)?.scheduledFor).toBe(1_500)
    k.shift(-300) // stepped back
    expect(k.info(at)?.scheduledFor).toBe(1_200)
    const retry = k.takeDue(1_200) as Kernel.Run<string>
    expect([retry.slot, retry.scheduledFor, retry.attempt]).toEqual([1_000, 1_200, 2])
  })
})

describe("shift: which rows and times move (SPEC §2)", () => {
  const id = (r: unknown) => r as Task.TaskId
  it("a zero, fractional, infinite or NaN delta changes nothing", () => {
    const k = new Kernel.Kernel<string>()
    const once = id(k.schedule({ job: "once", schedule: Schedule.once(1_000) }, 0))
    for (const delta of [0, 0.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60]) {
      k.shift(delta)
      expect(k.info(once)?.scheduledFor).toBe(1_000)
      expect(k.nextSlot()).toBe(1_000)
    }
    k.checkInvariants()
  })

  it("a paused row moves and is due at its moved slot when resumed; a final one stays", () => {
    const k = new Kernel.Kernel<string>()
    const paused = id(k.schedule({ job: "p", schedule: Schedule.once(1_000) }, 0))
    const done = id(k.schedule({ job: "d", schedule: Schedule.once(10) }, 0))
    const run = k.takeDue(10) as Kernel.Run<string>
    k.complete(run, Task.succeeded, 10, false)
    expect(k.pause(paused, 20)).toBe(true)
    k.shift(500)
    k.checkInvariants()
    expect(k.info(paused)?.scheduledFor).toBe(1_500)
    expect(k.info(done)).toMatchObject({ state: "done", scheduledFor: 10 })
    expect(k.resume(paused, 30)).toBe(true)
    expect(k.takeDue(1_499)).toBeUndefined()
    expect(k.takeDue(1_500)?.job).toBe("p")
  })

  it("a fixed-rate grid moves: a late take coalesces onto the moved grid's slots", () => {
    const k = new Kernel.Kernel<string>()
    const rate = id(
      k.schedule({ job: "r", schedule: Schedule.fixedRate(1_000), missedRuns: "coalesce" }, 0),
    )
    k.complete(k.takeDue(0) as Kernel.Run<string>, Task.succeeded, 0, false)
    k.shift(300)
    expect(k.info(rate)?.scheduledFor).toBe(1_300)
    // Taken at 3,500: slots 1,300, 2,300 and 3,300 run as one; the next is 4,300, not 4,000.
    const run = k.takeDue(3_500) as Kernel.Run<string>
    k.complete(run, Task.succeeded, 3_500, false)
    expect(k.info(rate)?.scheduledFor).toBe(4_300)
    k.checkInvariants()
  })

  it("a running row keeps its run's slot; its grid moves, so its next slot does", () => {
    const k = new Kernel.Kernel<string>()
    const rate = id(k.schedule({ job: "r", schedule: Schedule.fixedRate(1_000) }, 0))
    const run = k.takeDue(0) as Kernel.Run<string>
    expect(k.status(rate)).toBe("running")
    k.shift(300)
    k.checkInvariants()
    expect(k.info(rate)?.scheduledFor).toBe(0)
    k.complete(run, Task.succeeded, 100, false)
    expect(k.info(rate)?.scheduledFor).toBe(1_300)
    expect(k.takeDue(1_299)).toBeUndefined()
    expect(k.takeDue(1_300)?.scheduledFor).toBe(1_300)
  })
})

describe("the take plan applied to a row (SPEC §3)", () => {
  it("a one-shot past its deadline expires failed; a grid skips its slots outside the window", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "o", job: "o", schedule: Schedule.once(10), window: 5 }, 0)
    k.schedule({ id: "g", job: "g", schedule: Schedule.fixedRate(10), window: 3 }, 0)
    expect(k.takeDue(37)).toBeUndefined()
    expect(k.drainOccurrences()).toEqual([
      {
        kind: "skipped",
        id: "g",
        generation: 1,
        cause: "window",
        first: 0,
        last: 30,
        count: 4,
        exact: true,
        nextSlot: 40,
        at: 37,
      },
      {
        kind: "expired",
        id: "o",
        generation: 1,
        slot: 10,
        scheduledFor: 10,
        attempt: 1,
        deadline: 15,
        at: 37,
      },
    ])
    expect(k.status("o")).toBe("failed")
    expect(k.jobOf("o")).toBe("o")
    expect(k.info("g")?.scheduledFor).toBe(40)
    expect(k.stats()).toMatchObject({ scheduled: 1, failed: 1, heapEntries: 1 })
    k.checkInvariants()
    expect(k.takeDue(40)?.slot).toBe(40)
  })

  it("an expired one-shot is final from when its run would have started: retention ages it from then", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxAgeMs: 10 } })
    k.schedule({ id: "o", job: "o", schedule: Schedule.once(10), window: 5 }, 0)
    expect(k.takeDue(37)).toBeUndefined()
    // Accepting a task drops the final ones past their age: "o" ended at 37, 9 ms before.
    k.schedule({ job: "x", schedule: Schedule.once(100) }, 46)
    expect(k.status("o")).toBe("failed")
    k.schedule({ job: "y", schedule: Schedule.once(100) }, 47)
    expect(k.status("o")).toBe("unknown")
  })

  it("a task ended done or cancelled drops its job; a failed one keeps it for a retry by hand", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "d", job: "d", schedule: Schedule.once(0) }, 0)
    k.schedule({ id: "c", job: "c", schedule: Schedule.once(50) }, 0)
    k.complete(k.takeDue(0) as Kernel.Run<string>, Task.succeeded, 1, false)
    k.cancel("c", 1)
    expect([k.status("d"), k.jobOf("d")]).toEqual(["done", undefined])
    expect([k.status("c"), k.jobOf("c")]).toEqual(["cancelled", undefined])
  })

  it("a late coalescing grid starts at its latest passed slot, the others merged into its run", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule(
      { id: "c", job: "c", schedule: Schedule.fixedRate(10), window: 100, missedRuns: "coalesce" },
      0,
    )
    const run = k.takeDue(35) as Kernel.Run<string>
    expect([run.slot, run.scheduledFor, run.startedAt]).toEqual([30, 30, 35])
    expect(run.merged).toEqual({ first: 0, last: 20, count: 3, exact: true })
    expect(k.drainOccurrences()).toEqual([])
    k.checkInvariants()
  })
})

describe("many runs due at once", () => {
  it("a backlog taken in one sorted batch comes out in SPEC §4 order, recurring runs interleaved", () => {
    const k = new Kernel.Kernel<number>({ random: Random.seeded(7) })
    const rng = Random.seeded(11)
    const n = 20_000
    const expected: Array<{ slot: number; rank: number; seq: number; job: number }> = []
    const cancelled = new Set<number>()
    for (let j = 0; j < n; j++) {
      const slot = Math.floor(rng.next() * 5_000)
      const rank = Math.floor(rng.next() * 3)
      const t = id(
        k.schedule(
          {
            job: j,
            schedule: Schedule.once(slot),
            priority: Task.priorities[rank] as Task.Priority,
          },
          0,
        ),
      )
      if (j % 7 === 3) {
        k.cancel(t, 0)
        cancelled.add(j)
      } else {
        expected.push({ slot, rank, seq: j, job: j })
      }
    }
    // A recurring task pushes its next slot after each run: those pushes land among the batch.
    k.schedule({ job: -1, schedule: Schedule.fixedRate(1_000, { delay: 500 }) }, 0)
    expected.sort((a, b) => a.slot - b.slot || a.rank - b.rank || a.seq - b.seq)
    const taken: Array<number> = []
    const recurring: Array<number> = []
    let batched = false
    for (;;) {
      const run = k.takeDue(0, 5_000)
      if (run === undefined) break
      batched ||= (k as unknown as { rows: { heap: { sorted: number } } }).rows.heap.sorted > 0
      if (run.job === -1) recurring.push(run.scheduledFor)
      else taken.push(run.job)
      k.complete(run, Task.succeeded, run.startedAt, false)
    }
    expect(batched).toBe(true)
    expect(taken).toEqual(expected.map((e) => e.job))
    expect(recurring).toEqual([500, 1_500, 2_500, 3_500, 4_500])
    k.checkInvariants()
  })
})

describe("issue 24: breaker and pause steps decided by core's plans", () => {
  const failed: Task.Outcome = { kind: "failed", error: "boom" }

  it("ties for the probe go to the smaller id, not to the order tasks joined", () => {
    const k = new Kernel.Kernel<string>({ breakers: { b: { failures: 1, coolDown: 10 } } })
    k.schedule({ id: "f", job: "f", schedule: Schedule.once(0), breaker: "b" }, 0)
    // "z" joins first; both are due at 50 with the same priority.
    k.schedule({ id: "z", job: "z", schedule: Schedule.once(50), breaker: "b" }, 0)
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(50), breaker: "b" }, 0)
    const run = k.takeDue(0) as Kernel.Run<string>
    k.complete(run, failed, 0, false)
    expect(k.breaker("b")?.held).toEqual(["z", "a"])
    expect(k.takeDue(10)).toBeUndefined()
    expect(k.breaker("b")).toMatchObject({ state: "half-open", probe: "a", held: ["z"] })
    k.checkInvariants()
  })

  it("a probe paused by hand is replaced by the held task due first", () => {
    const k = new Kernel.Kernel<string>({ breakers: { b: { failures: 1, coolDown: 10 } } })
    k.schedule({ id: "f", job: "f", schedule: Schedule.once(0), breaker: "b" }, 0)
    k.schedule({ id: "p", job: "p", schedule: Schedule.once(20), breaker: "b" }, 0)
    k.schedule({ id: "q", job: "q", schedule: Schedule.once(40), breaker: "b" }, 0)
    k.schedule({ id: "r", job: "r", schedule: Schedule.once(30), breaker: "b" }, 0)
    k.complete(k.takeDue(0) as Kernel.Run<string>, failed, 0, false)
    k.takeDue(10)
    expect(k.breaker("b")?.probe).toBe("p")
    expect(k.pause("p", 12)).toBe(true)
    expect(k.breaker("b")).toMatchObject({ probe: "r", held: ["q"] })
    expect(k.info("p")?.pausedReason).toBe("manual")
    k.checkInvariants()
  })
})
