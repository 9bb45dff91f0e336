/**
 * The kernel's read-only queries, each as a caller of `Kernel` sees it: `explain` (SPEC §15) for
 * every state and note, `info`, `definition`, `taskIds`, `breaker` and `stats`. None of them
 * changes anything.
 */
import { describe, expect, it } from "vitest"
import { Kernel, Schedule, Task } from "../src/index.ts"

const take = <J>(k: Kernel.Kernel<J>, now: number, limit?: number): Kernel.Run<J> => {
  const run = limit === undefined ? k.takeDue(now) : k.takeDue(now, limit)
  if (run === undefined) throw new Error(`nothing due at ${now}`)
  return run
}

const failed: Task.Outcome = { kind: "failed", error: "boom" }

describe("SPEC §15 explain: the notes and slots of each state", () => {
  it("a final or unknown task has no explanation", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(0) }, 0)
    k.complete(take(k, 0), Task.succeeded, 0, false)
    expect(k.explain("a", 1)).toBeUndefined()
    expect(k.explain("nobody", 1)).toBeUndefined()
  })

  it("a running task lists the slots after its run; a pause request is noted", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10) }, 0)
    take(k, 0)
    const e = k.explain("a", 3, 2)
    expect(e).toMatchObject({ state: "running", pending: undefined, pausedReason: undefined })
    expect(e?.slots.map((s) => s.slot)).toEqual([10, 20])
    expect(e?.notes).toEqual([
      "running: the slot after this run is decided when it ends (its missed-run policy applies)",
    ])
    k.pause("a", 4)
    const p = k.explain("a", 4, 1)
    expect(p).toMatchObject({ state: "running", pausedReason: "manual" })
    expect(p?.notes[1]).toBe("it will be paused (manual) when its run ends")
  })

  it("a running one-shot has no slot after its run", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(0) }, 0)
    take(k, 0)
    expect(k.explain("a", 1)?.slots).toEqual([])
  })

  it("a schedule change waiting for the running slot lists no slot, and says so", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10) }, 0)
    take(k, 0)
    expect(k.update("a", { schedule: Schedule.fixedRate(7) }, 1)).toBe(true)
    const e = k.explain("a", 2)
    expect(e?.slots).toEqual([])
    expect(e?.notes).toContain("a schedule change takes effect when this slot ends")
    // The definition shows the new schedule, resolved at `now`.
    expect(k.definition("a", 2)?.definition.plan).toMatchObject({ kind: "fixed-rate" })
  })

  it("a task paused by its failure policy says so and lists the slots it would take", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule(
      {
        id: "a",
        job: "a",
        schedule: Schedule.fixedRate(10),
        pauseAfterConsecutiveFailures: 1,
      },
      0,
    )
    k.complete(take(k, 0), failed, 1, false)
    expect(k.status("a")).toBe("paused")
    const e = k.explain("a", 25, 2)
    expect(e).toMatchObject({ state: "paused", pausedReason: "failures" })
    expect(e?.notes[0]).toMatch(/^paused by its failure policy/)
    expect(e?.slots.map((s) => s.slot)).toEqual([30, 40])
  })

  it("a task held by an open breaker whose half-open time has passed resumes from now", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule(
      {
        id: "a",
        job: "a",
        schedule: Schedule.fixedRate(10),
        breaker: { failures: 1, coolDown: 15 },
      },
      0,
    )
    k.complete(take(k, 0), failed, 1, false)
    // Open until 16; nothing took the kernel past it, so it is still open at 43.
    expect(k.breaker("a")).toMatchObject({ state: "open", halfOpenAt: 16 })
    const e = k.explain("a", 43, 2)
    expect(e?.notes[0]).toMatch(/^held by breaker a \(open\) until 16;/)
    expect(e?.slots.map((s) => s.slot)).toEqual([50, 60])
  })

  it("a task held while its shared breaker is half-open resumes when the breaker closes", () => {
    const k = new Kernel.Kernel<string>({ breakers: { smtp: { failures: 1, coolDown: 100 } } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10), breaker: "smtp" }, 0)
    k.schedule(
      { id: "b", job: "b", schedule: Schedule.fixedRate(1000, { delay: 1 }), breaker: "smtp" },
      0,
    )
    k.complete(take(k, 0), failed, 0, false) // opens at 0, half-open at 100
    const probe = take(k, 100) // a's slot 100 is the probe; b stays held
    expect(probe.id).toBe("a")
    expect(k.breaker("smtp")).toMatchObject({ state: "half-open", probe: "a", held: ["b"] })
    const e = k.explain("b", 100, 1)
    expect(e?.notes[0]).toBe("held by breaker smtp (half-open); it resumes when the breaker closes")
    expect(e?.slots.map((s) => s.slot)).toEqual([1001])
  })

  it("a paused task with a held retry: the retry first, then the grid after its slot", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule(
      { id: "a", job: "a", schedule: Schedule.fixedRate(10), retry: { maxRetries: 2, base: 4 } },
      0,
    )
    k.complete(take(k, 0), failed, 1, false) // retry 1 of slot 0, due at 5
    expect(k.pause("a", 2)).toBe(true)
    const e = k.explain("a", 3, 2)
    expect(e?.notes).toEqual([
      "paused by hand: it runs again only after resume(); the slots below are those it would take if resumed now",
      "a held retry (attempt 2) runs first, due at 5",
    ])
    expect(e?.slots.map((s) => s.slot)).toEqual([10, 20])
  })

  it("a one-shot's deadline note: ahead of now, or passed", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(10), window: 5 }, 0)
    expect(k.explain("a", 15)?.notes).toEqual([
      "its deadline is 15: past it, the run expires and the task ends failed",
    ])
    expect(k.explain("a", 16)).toMatchObject({
      deadline: 15,
      window: 5,
      kind: "once",
      notes: ["past its deadline (15): it expires when taken and ends failed"],
    })
  })

  it("a cron task's slots carry their daylight-saving notes", () => {
    const k = new Kernel.Kernel<string>()
    const from = Date.parse("2026-03-07T12:00:00Z")
    k.schedule(
      {
        id: "a",
        job: "a",
        schedule: Schedule.cron("30 2 * * *", { timeZone: "America/New_York" }),
      },
      from,
    )
    const e = k.explain("a", from, 2)
    expect(e?.kind).toBe("cron")
    expect(e?.slots).toEqual([
      { slot: Date.parse("2026-03-08T07:30:00Z"), dst: { kind: "gap", shiftedBy: 3_600_000 } },
      { slot: Date.parse("2026-03-09T06:30:00Z"), dst: undefined },
    ])
  })
})

describe("the kernel's queries: info, definition, taskIds, breaker", () => {
  it("info shows a throttle's window, a task's group and key, and a one-shot's kind", () => {
    const k = new Kernel.Kernel<string>({
      limits: { groups: { mail: { concurrency: 1 } }, keys: { concurrency: 1 } },
    })
    k.schedule(
      {
        id: "a",
        job: "a",
        schedule: Schedule.once(10),
        dedup: { key: "k", mode: "throttle", window: 50 },
        group: "mail",
        key: "acct-1",
      },
      0,
    )
    expect(k.info("a")).toMatchObject({
      kind: "once",
      dedup: { key: "k", mode: "throttle", window: 50 },
      group: "mail",
      key: "acct-1",
      waiting: undefined,
    })
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(10), dedup: { key: "s" } }, 0)
    expect(k.info("b")?.dedup).toEqual({ key: "s", mode: "singleton" })
  })

  it("info of a task with no options reads the defaults", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ job: "a", schedule: Schedule.once(10) }, 0)
    const [id] = k.taskIds()
    const info = k.info(id as string)
    expect(info).toMatchObject({
      kind: "once",
      state: "scheduled",
      priority: "normal",
      consecutiveFailures: 0,
      lastFailure: undefined,
      finishedAt: undefined,
      runningSince: undefined,
      pausedReason: undefined,
      tags: [],
      window: undefined,
      breaker: undefined,
    })
    expect(info).not.toHaveProperty("group")
    expect(info).not.toHaveProperty("dedup")
  })

  it("info's finishedAt and runningSince follow the task's state", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(0) }, 0)
    const run = take(k, 3)
    expect(k.info("a")).toMatchObject({ runningSince: 3, finishedAt: undefined })
    k.complete(run, Task.succeeded, 7, false)
    expect(k.info("a")).toMatchObject({ state: "done", runningSince: undefined, finishedAt: 7 })
  })

  it("taskIds lists live and retained final tasks, generated ids included", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(0) }, 0)
    k.schedule({ job: "b", schedule: Schedule.once(5) }, 0)
    k.complete(take(k, 0), Task.succeeded, 0, false)
    const ids = k.taskIds()
    expect(ids).toHaveLength(2)
    expect(ids[0]).toBe("a")
    expect(ids[1]).toMatch(/^#1\.\d+$/)
  })

  it("breaker: a shared one by name, a task's own by the task's id; none for a task on a shared one", () => {
    const k = new Kernel.Kernel<string>({ breakers: { smtp: { failures: 2, coolDown: 100 } } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(0), breaker: "smtp" }, 0)
    k.schedule(
      { id: "b", job: "b", schedule: Schedule.once(0), breaker: { failures: 1, coolDown: 5 } },
      0,
    )
    k.schedule({ id: "c", job: "c", schedule: Schedule.once(0) }, 0)
    expect(k.breaker("smtp")).toMatchObject({ name: "smtp", shared: true, tasks: ["a"] })
    expect(k.breaker("b")).toMatchObject({ name: "b", shared: false, tasks: ["b"] })
    expect(k.breaker("a")).toBeUndefined()
    expect(k.breaker("c")).toBeUndefined()
    expect(k.breaker("nobody")).toBeUndefined()
  })

  it("definition reads the defaults of a task with no options, and a breaker by name or policy", () => {
    const k = new Kernel.Kernel<string>({ breakers: { smtp: { failures: 2, coolDown: 100 } } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(10) }, 0)
    expect(k.definition("a", 0)).toMatchObject({
      state: "scheduled",
      definition: {
        plan: undefined,
        at: 10,
        priority: "normal",
        missedRuns: "catch-up",
        pauseAfter: 0,
        tags: [],
        breaker: undefined,
        more: { job: "a" },
      },
    })
    k.schedule({ id: "s", job: "s", schedule: Schedule.fixedRate(10), breaker: "smtp" }, 0)
    k.schedule(
      { id: "o", job: "o", schedule: Schedule.once(5), breaker: { failures: 1, coolDown: 5 } },
      0,
    )
    expect(k.definition("s", 0)?.definition).toMatchObject({ at: undefined, breaker: "smtp" })
    expect(k.definition("o", 0)?.definition.breaker).toMatchObject({ failures: 1, coolDown: 5 })
  })
})

describe("SPEC §7 the kernel's breaker glue: holds, probes and timers", () => {
  it("a breaker that closes while a member runs withdraws its pause request", () => {
    const k = new Kernel.Kernel<string>({ breakers: { smtp: { failures: 1, coolDown: 10 } } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(100), breaker: "smtp" }, 0)
    k.schedule({ id: "b", job: "b", schedule: Schedule.fixedRate(100), breaker: "smtp" }, 0)
    const a = take(k, 0)
    const b = take(k, 0)
    expect([a.id, b.id]).toEqual(["a", "b"])
    k.complete(b, failed, 1, false) // opens: b is held, a is asked to pause after its run
    expect(k.info("a")).toMatchObject({ state: "running", pausedReason: "breaker" })
    // Half-open at 11: b is the probe, at its next slot (100).
    const probe = take(k, 100)
    expect(probe.id).toBe("b")
    expect(k.info("a")).toMatchObject({ state: "running", pausedReason: "breaker" })
    k.complete(probe, Task.succeeded, 101, false) // closes: a's pause request is withdrawn
    expect(k.breaker("smtp")).toMatchObject({ state: "closed", held: [] })
    expect(k.info("a")?.pausedReason).toBeUndefined()
    k.complete(a, Task.succeeded, 102, false)
    expect(k.status("a")).toBe("scheduled")
    k.checkInvariants()
  })

  it("a task's own open breaker leaves with it: its half-open time is no longer a slot", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule(
      {
        id: "a",
        job: "a",
        schedule: Schedule.fixedRate(100),
        breaker: { failures: 1, coolDown: 15 },
      },
      0,
    )
    k.complete(take(k, 0), failed, 1, false)
    expect(k.nextSlot()).toBe(16)
    expect(k.cancel("a", 2)).toBe(true)
    expect(k.nextSlot()).toBeUndefined()
    expect(k.breakers()).toEqual([])
  })

  it("a held task with a manual run waiting is the probe by that run's due time (SPEC §19.1)", () => {
    const k = new Kernel.Kernel<string>({ breakers: { smtp: { failures: 1, coolDown: 100 } } })
    k.schedule(
      { id: "f", job: "f", schedule: Schedule.once(0), priority: "high", breaker: "smtp" },
      0,
    )
    k.schedule(
      { id: "x", job: "x", schedule: Schedule.fixedRate(1000, { delay: 50 }), breaker: "smtp" },
      0,
    )
    k.schedule(
      { id: "y", job: "y", schedule: Schedule.fixedRate(1000, { delay: 30 }), breaker: "smtp" },
      0,
    )
    expect(k.trigger("x", 0)).toBe(true) // a manual run of x, due at 0
    const f = take(k, 0)
    expect(f.id).toBe("f")
    k.complete(f, failed, 1, false) // opens: x (its manual run kept) and y are held
    expect(k.breaker("smtp")).toMatchObject({ state: "open", held: ["x", "y"] })
    // At half-open, x's waiting manual run (due 0) comes before y's next slot (1030).
    const probe = take(k, 101)
    expect(k.breaker("smtp")?.probe).toBe("x")
    expect(probe).toMatchObject({ id: "x", manual: true })
  })
})

describe("SPEC §7 the kernel's breaker glue: each breaker half-opens at its own time", () => {
  it("a breaker whose cool-down has not ended stays open while another one half-opens", () => {
    const k = new Kernel.Kernel<string>()
    const own = (coolDown: number) => ({ failures: 1, coolDown })
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(100), breaker: own(10) }, 0)
    k.schedule({ id: "b", job: "b", schedule: Schedule.fixedRate(100), breaker: own(200) }, 0)
    const a = take(k, 0)
    const b = take(k, 0)
    k.complete(a, failed, 1, false) // a's breaker: half-open at 11
    k.complete(b, failed, 2, false) // b's breaker: half-open at 202
    expect(k.nextSlot()).toBe(11)
    expect(k.takeDue(11)).toBeUndefined() // a's probe waits for its slot (100)
    expect(k.breaker("a")).toMatchObject({ state: "half-open", probe: "a" })
    expect(k.breaker("b")).toMatchObject({ state: "open", halfOpenAt: 202, held: ["b"] })
    expect(take(k, 100).id).toBe("a") // only a's probe: b is still held
    expect(k.breaker("b")?.state).toBe("open")
  })
})
