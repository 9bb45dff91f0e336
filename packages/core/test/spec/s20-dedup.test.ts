/**
 * SPEC §20.3: deduplication keys. The kernel applies `Rules.decideDedup` to each schedule under
 * a key; time is the manual clock's, so every window edge is hit exactly.
 */

import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { Clock, Driver, Errors, Kernel, Rules, Schedule, Task } from "../../src/index.ts"

type K = Kernel.Kernel<string>

const setup = () => ({ k: new Kernel.Kernel<string>(), clock: new Clock.ManualClock(0) })
const take = (k: K, now: number) => {
  const out: Array<Kernel.Run<string>> = []
  for (let r = k.takeDue(now); r !== undefined; r = k.takeDue(now)) out.push(r)
  return out
}
const dedupOccurrences = (k: K) =>
  k.drainOccurrences().filter((o): o is Task.Deduplicated => o.kind === "deduplicated")

describe("SPEC §20.3 singleton", () => {
  it("while the holder is scheduled, running or paused a request creates nothing and returns its id", () => {
    const { k, clock } = setup()
    const dedup = { key: "report:7" }
    const first = k.scheduleDeduplicated({ job: "a", schedule: Schedule.once(10), dedup }, 0)
    expect(first).toEqual({ id: "#0.1", outcome: "created" })
    const again = k.scheduleDeduplicated({ job: "b", schedule: Schedule.once(1), dedup }, 0)
    expect(again).toEqual({ id: "#0.1", outcome: "deduplicated" })
    // Nothing was created, and the holder keeps its own job and slot.
    expect(k.stats().accepted).toBe(1)
    expect(k.info("#0.1")?.scheduledFor).toBe(10)
    expect(k.jobOf("#0.1")).toBe("a")
    expect(dedupOccurrences(k)).toEqual([
      {
        kind: "deduplicated",
        id: "#0.1",
        generation: 1,
        key: "report:7",
        mode: "singleton",
        result: "deduplicated",
        at: 0,
      },
    ])
    clock.set(10)
    const [run] = take(k, clock.now())
    // Running still holds the key; `schedule` returns the holder's id too.
    expect(k.schedule({ job: "c", schedule: Schedule.once(0), dedup }, clock.now())).toBe("#0.1")
    k.complete(run as Kernel.Run<string>, Task.succeeded, 12, false)
    // The holder is done: the key is free and the next request creates a task.
    expect(k.scheduleDeduplicated({ job: "d", schedule: Schedule.once(0), dedup }, 12)).toEqual({
      id: "#1.1",
      outcome: "created",
    })
    k.pause("#1.1", 12)
    expect(k.schedule({ job: "e", schedule: Schedule.once(0), dedup }, 13)).toBe("#1.1")
    expect(k.stats().dedup).toEqual({ keys: 1, tracked: 1, deduplicated: 3, replaced: 0 })
    k.checkInvariants()
  })

  it("a cancelled or failed holder releases the key", () => {
    const { k } = setup()
    const dedup = { key: "k" }
    k.schedule({ id: "one", job: "a", schedule: Schedule.once(5), dedup }, 0)
    k.cancel("one", 1)
    expect(
      k.scheduleDeduplicated({ id: "two", job: "b", schedule: Schedule.once(5), dedup }, 1),
    ).toEqual({ id: "two", outcome: "created" })
    const [run] = take(k, 6)
    k.complete(run as Kernel.Run<string>, Task.failed("boom"), 7, false)
    expect(k.status("two")).toBe("failed")
    expect(k.schedule({ id: "three", job: "c", schedule: Schedule.once(0), dedup }, 8)).toBe(
      "three",
    )
    expect(k.stats().dedup.keys).toBe(1)
  })

  it("the key is the task's, shown in its info; an id in a deduplicated request is not taken", () => {
    const { k } = setup()
    k.schedule({ id: "x", job: "a", schedule: Schedule.once(5), dedup: { key: "k" } }, 0)
    expect(k.info("x")?.dedup).toEqual({ key: "k", mode: "singleton" })
    expect(
      k.schedule({ id: "y", job: "b", schedule: Schedule.once(5), dedup: { key: "k" } }, 0),
    ).toBe("x")
    expect(k.status("y")).toBe("unknown")
    // Another key is another holder.
    expect(
      k.schedule({ id: "z", job: "c", schedule: Schedule.once(5), dedup: { key: "j" } }, 0),
    ).toBe("z")
  })
})

describe("SPEC §20.3 debounce", () => {
  it("a request replaces the pending holder in place: its job, and its slot from the new schedule", () => {
    const { k, clock } = setup()
    const dedup = { key: "sync:42", mode: "debounce" } as const
    k.schedule({ id: "s", job: "v1", schedule: Schedule.once(100), dedup }, clock.now())
    clock.set(60)
    const r = k.scheduleDeduplicated(
      { job: "v2", schedule: Schedule.once(100), dedup, priority: "high" },
      clock.now(),
    )
    expect(r).toEqual({ id: "s", outcome: "replaced" })
    expect(k.jobOf("s")).toBe("v2")
    expect(k.info("s")?.scheduledFor).toBe(160)
    expect(k.info("s")?.priority).toBe("high")
    expect(k.stats().accepted).toBe(1)
    expect(dedupOccurrences(k).map((o) => [o.id, o.result, o.mode, o.at])).toEqual([
      ["s", "replaced", "debounce", 60],
    ])
    // The old slot no longer runs; the moved one does, with the last job.
    expect(take(k, 100)).toEqual([])
    const runs = take(k, 160)
    expect(runs.map((x) => [x.job, x.startedAt])).toEqual([["v2", 160]])
    expect(k.stats().dedup).toEqual({ keys: 1, tracked: 1, deduplicated: 0, replaced: 1 })
    k.checkInvariants()
  })

  it("a paused holder is replaced and stays paused", () => {
    const { k } = setup()
    const dedup = { key: "k", mode: "debounce" } as const
    k.schedule({ id: "p", job: "v1", schedule: Schedule.once(100), dedup }, 0)
    k.pause("p", 1)
    expect(k.schedule({ job: "v2", schedule: Schedule.once(50), dedup }, 2)).toBe("p")
    expect(k.status("p")).toBe("paused")
    expect(k.jobOf("p")).toBe("v2")
    expect(k.info("p")?.scheduledFor).toBe(52)
    k.checkInvariants()
  })

  it("while the holder runs a request creates a new pending task, the key's next holder", () => {
    const { k } = setup()
    const dedup = { key: "k", mode: "debounce" } as const
    k.schedule({ id: "r", job: "v1", schedule: Schedule.once(10), dedup }, 0)
    const [run] = take(k, 10)
    expect(
      k.scheduleDeduplicated({ id: "n", job: "v2", schedule: Schedule.once(5), dedup }, 11),
    ).toEqual({ id: "n", outcome: "created" })
    // The next request replaces the new pending holder, not the running one.
    expect(k.scheduleDeduplicated({ job: "v3", schedule: Schedule.once(5), dedup }, 12)).toEqual({
      id: "n",
      outcome: "replaced",
    })
    k.complete(run as Kernel.Run<string>, Task.succeeded, 13, false)
    expect(k.jobOf("n")).toBe("v3")
    expect(take(k, 17).map((x) => x.job)).toEqual(["v3"])
  })

  it("a bad replacement is the typed error and changes nothing", () => {
    const { k } = setup()
    const dedup = { key: "k", mode: "debounce" } as const
    k.schedule({ id: "h", job: "v1", schedule: Schedule.once(100), dedup }, 0)
    const bad = k.scheduleDeduplicated(
      { job: "v2", schedule: Schedule.once(5), dedup, breaker: "nope" },
      1,
    )
    expect(bad).toBeInstanceOf(Errors.InvalidOption)
    expect(k.jobOf("h")).toBe("v1")
    expect(k.info("h")?.scheduledFor).toBe(100)
    expect(k.stats().dedup.replaced).toBe(0)
  })
})

describe("SPEC §20.3 throttle", () => {
  it("at most one task per window, counted from the accepted schedule, whatever became of it", () => {
    const { k, clock } = setup()
    const dedup = { key: "mail:ann", mode: "throttle", window: 1000 } as const
    const a = k.scheduleDeduplicated({ job: "a", schedule: Schedule.once(0), dedup }, 0)
    expect(a).toEqual({ id: "#0.1", outcome: "created" })
    const [run] = take(k, 0)
    k.complete(run as Kernel.Run<string>, Task.succeeded, 5, false)
    // Done, yet still inside its window: deduplicated into it.
    clock.set(999)
    expect(k.scheduleDeduplicated({ job: "b", schedule: Schedule.once(0), dedup }, 999)).toEqual({
      id: "#0.1",
      outcome: "deduplicated",
    })
    // The window is [0, 1000): at 1000 a new task is accepted, and opens its own window.
    clock.set(1000)
    expect(k.scheduleDeduplicated({ job: "c", schedule: Schedule.once(0), dedup }, 1000)).toEqual({
      id: "#1.1",
      outcome: "created",
    })
    expect(k.schedule({ job: "d", schedule: Schedule.once(0), dedup }, 1999)).toBe("#1.1")
    expect(k.info("#1.1")?.dedup).toEqual({ key: "mail:ann", mode: "throttle", window: 1000 })
    expect(k.stats().dedup.deduplicated).toBe(2)
  })

  it("a window's end creates a second task even while the first is still pending", () => {
    const { k } = setup()
    const dedup = { key: "k", mode: "throttle", window: "1 second" } as const
    k.schedule({ id: "late", job: "a", schedule: Schedule.once(5000), dedup }, 0)
    expect(k.schedule({ id: "next", job: "b", schedule: Schedule.once(0), dedup }, 1000)).toBe(
      "next",
    )
    expect(k.status("late")).toBe("scheduled")
  })
})

describe("SPEC §20.3 in the deterministic driver", () => {
  it("a burst of debounced schedules runs once, after the last, with its job", () => {
    const clock = new Clock.ManualClock(0)
    const seen: Array<Task.Occurrence> = []
    const driver = Driver.make({ clock, onOccurrence: (o) => seen.push(o) })
    const ran: Array<[string, number]> = []
    const dedup = { key: "sync", mode: "debounce" } as const
    const outcomes: Array<string> = []
    for (const at of [0, 30, 60]) {
      if (at > 0) driver.runUntil(at)
      const r = driver.scheduleDeduplicated({
        job: (run) => void ran.push([`v${at}`, run.startedAt]),
        schedule: Schedule.once(100),
        dedup,
      })
      outcomes.push(Result.isSuccess(r) ? r.success.outcome : "error")
    }
    expect(outcomes).toEqual(["created", "replaced", "replaced"])
    // Each replacement is handed to onOccurrence in the step that made it.
    expect(seen.filter((o) => o.kind === "deduplicated").map((o) => o.at)).toEqual([30, 60])
    driver.runUntil(1000)
    expect(ran).toEqual([["v60", 160]])
    const bad = driver.scheduleDeduplicated({
      job: () => {},
      schedule: Schedule.once(0),
      dedup: { key: "" },
    })
    expect(Result.isFailure(bad)).toBe(true)
  })
})

describe("SPEC §20.3 bounded state", () => {
  it("a key whose holder ended (and whose window passed) is forgotten: memory follows the keys in force", () => {
    const { k } = setup()
    // 1,000 keys used once each, one at a time: never more than one in force.
    for (let n = 0; n < 1000; n++) {
      k.schedule({ job: `j${n}`, schedule: Schedule.once(0), dedup: { key: `order:${n}` } }, n)
      const [run] = take(k, n)
      k.complete(run as Kernel.Run<string>, Task.succeeded, n, false)
    }
    expect(k.stats().dedup.keys).toBe(0)
    expect(k.stats().dedup.tracked).toBeLessThanOrEqual(64)
    // Keys in force are never forgotten: 200 live holders (10 of them paused, 1 running).
    for (let n = 0; n < 200; n++) {
      const dedup = { key: `live:${n}` }
      k.schedule({ id: `live${n}`, job: "x", schedule: Schedule.once(5000), dedup }, 1000)
      if (n < 10) k.pause(`live${n}`, 1000)
    }
    k.schedule({ id: "run", job: "r", schedule: Schedule.once(0), dedup: { key: "run" } }, 1000)
    expect(take(k, 1000).map((r) => r.job)).toEqual(["r"])
    for (let n = 0; n < 500; n++) {
      k.schedule({ job: "w", schedule: Schedule.once(9000), dedup: { key: `w:${n}` } }, 1001)
    }
    for (let n = 0; n < 200; n++) {
      const dedup = { key: `live:${n}` }
      expect(k.schedule({ job: "y", schedule: Schedule.once(0), dedup }, 1001)).toBe(`live${n}`)
    }
    expect(k.schedule({ job: "y", schedule: Schedule.once(0), dedup: { key: "run" } }, 1001)).toBe(
      "run",
    )
    expect(k.stats().dedup.keys).toBe(701)
    // A throttle window outlives its holder, and is forgotten only once it has passed.
    const throttle = { key: "t", mode: "throttle", window: 10_000 } as const
    k.schedule({ id: "t1", job: "t", schedule: Schedule.once(0), dedup: throttle }, 2000)
    k.cancel("t1", 2001)
    for (let n = 0; n < 500; n++) {
      k.schedule({ job: "z", schedule: Schedule.once(0), dedup: { key: `more:${n}` } }, 2002)
    }
    expect(k.schedule({ job: "t", schedule: Schedule.once(0), dedup: throttle }, 11_999)).toBe("t1")
  })
})

describe("SPEC §20.3 bad options", () => {
  const cases: ReadonlyArray<[unknown, string]> = [
    ["k", "dedup"],
    [{}, "dedup.key"],
    [{ key: "" }, "dedup.key"],
    [{ key: "x".repeat(257) }, "dedup.key"],
    [{ key: 7 }, "dedup.key"],
    [{ key: "k", mode: "once" }, "dedup.mode"],
    [{ key: "k", mode: "throttle" }, "dedup.window"],
    [{ key: "k", mode: "throttle", window: 0 }, "dedup.window"],
    [{ key: "k", mode: "throttle", window: -5 }, "dedup.window"],
    [{ key: "k", mode: "debounce", window: 10 }, "dedup.window"],
    [{ key: "k", ttl: 10 }, "dedup.ttl"],
  ]
  it.each(cases)("%j is InvalidOption on %s, and nothing changes", (dedup, field) => {
    const { k } = setup()
    k.schedule({ id: "h", job: "a", schedule: Schedule.once(5), dedup: { key: "k" } }, 0)
    const r = k.scheduleDeduplicated(
      { job: "b", schedule: Schedule.once(5), dedup: dedup as Rules.Dedup },
      0,
    )
    expect(r).toBeInstanceOf(Errors.InvalidOption)
    expect((r as Errors.InvalidOption).field).toBe(field)
    expect(k.stats().accepted).toBe(1)
    expect(k.stats().dedup.deduplicated).toBe(0)
  })

  it("a key is fixed once scheduled: update refuses dedup", () => {
    const { k } = setup()
    k.schedule({ id: "h", job: "a", schedule: Schedule.once(5), dedup: { key: "k" } }, 0)
    const r = k.update("h", { dedup: { key: "j" } } as never, 1)
    expect(r).toBeInstanceOf(Errors.InvalidOption)
    expect(k.info("h")?.dedup?.key).toBe("k")
  })
})

describe("SPEC §20.3 the rule (Rules.decideDedup)", () => {
  const holder = (state: Task.TaskState | "unknown", acceptedAt = 0) => ({
    id: "h" as Task.TaskId,
    state,
    acceptedAt,
  })
  const single = { key: "k", mode: "singleton", windowMs: 0 } as const
  const debounce = { key: "k", mode: "debounce", windowMs: 0 } as const
  const throttle = { key: "k", mode: "throttle", windowMs: 10 } as const
  it("decides from the holder's state and acceptance alone", () => {
    const out = (r: Rules.ResolvedDedup, h: ReturnType<typeof holder> | undefined, now = 0) =>
      Rules.decideDedup(r, h, now).outcome
    expect(out(single, undefined)).toBe("created")
    for (const s of ["scheduled", "running", "paused"] as const) {
      expect(out(single, holder(s))).toBe("deduplicated")
    }
    for (const s of ["done", "failed", "cancelled", "unknown"] as const) {
      expect(out(single, holder(s))).toBe("created")
      expect(out(debounce, holder(s))).toBe("created")
    }
    expect(out(debounce, holder("scheduled"))).toBe("replaced")
    expect(out(debounce, holder("paused"))).toBe("replaced")
    expect(out(debounce, holder("running"))).toBe("created")
    expect(out(throttle, holder("done", 5), 14)).toBe("deduplicated")
    expect(out(throttle, holder("scheduled", 5), 15)).toBe("created")
  })
})

describe("SPEC §20.3 Rules.resolveDedup: each refusal names its field, the value and the rule", () => {
  const refusal = (dedup: unknown) => {
    const r = Rules.resolveDedup(dedup)
    expect(r).toBeInstanceOf(Errors.InvalidOption)
    const e = r as Errors.InvalidOption
    return [e.field, e.value, e.message]
  }
  it("not an object (null included), a key out of range, an unknown mode, a misplaced window", () => {
    expect(refusal(null)).toEqual([
      "dedup",
      null,
      "dedup must be an object { key, mode?, window? }, got null",
    ])
    expect(refusal([])).toEqual([
      "dedup",
      [],
      "dedup must be an object { key, mode?, window? }, got []",
    ])
    expect(refusal({ key: "" })).toEqual([
      "dedup.key",
      "",
      'dedup.key must be a string of 1 to 256 characters, got ""',
    ])
    expect(refusal({ key: "k", mode: "once" })).toEqual([
      "dedup.mode",
      "once",
      'dedup.mode must be one of "singleton", "debounce", "throttle", got "once"',
    ])
    expect(refusal({ key: "k", mode: "debounce", window: 10 })).toEqual([
      "dedup.window",
      10,
      'dedup.window is only for mode "throttle", not "debounce", got 10',
    ])
    expect(refusal({ key: "k", mode: "throttle" })).toEqual([
      "dedup.window",
      undefined,
      'dedup.window is required for mode "throttle", got undefined',
    ])
  })

  it("a key of exactly 256 characters is accepted; 257 is not", () => {
    const key = "x".repeat(256)
    expect(Rules.resolveDedup({ key })).toEqual({ key, mode: "singleton", windowMs: 0 })
    expect(refusal({ key: `${key}x` })[0]).toBe("dedup.key")
    expect(Rules.resolveDedup({ key: "k", mode: "throttle", window: "2 seconds" })).toEqual({
      key: "k",
      mode: "throttle",
      windowMs: 2000,
    })
  })
})

describe("SPEC §20.3 the kernel's keys: holders gone, bad replacements, sweeps", () => {
  const end = (k: K, key: string, now: number, mode: Rules.DedupMode = "singleton") => {
    const dedup = mode === "throttle" ? { key, mode, window: 10 } : { key, mode }
    k.schedule({ job: key, schedule: Schedule.once(0), dedup }, now)
    const [run] = take(k, now)
    k.complete(run as Kernel.Run<string>, Task.succeeded, now, false)
  }
  const pending = (k: K, key: string, now: number) =>
    k.schedule({ job: key, schedule: Schedule.once(1_000_000), dedup: { key } }, now)

  it("a holder dropped by retention is unknown, even when its row holds another task now", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxFinished: 0 } })
    end(k, "s", 0)
    // The holder's row is free: the next task takes it, at a new generation.
    const other = k.schedule({ job: "other", schedule: Schedule.once(100) }, 1) as string
    expect(k.status(other)).toBe("scheduled")
    const r = k.scheduleDeduplicated(
      { job: "c", schedule: Schedule.once(100), dedup: { key: "s" } },
      2,
    )
    expect(r).not.toBeInstanceOf(Errors.InvalidOption)
    expect((r as { outcome: string }).outcome).toBe("created")
    expect((r as { id: string }).id).not.toBe(other)
    expect(k.stats().dedup.deduplicated).toBe(0)
  })

  it("a debounce whose changes the holder refuses is that typed error: no new task, holder kept", () => {
    const k = new Kernel.Kernel<string>()
    const dedup = { key: "k", mode: "debounce" } as const
    k.schedule({ id: "h", job: "v1", schedule: Schedule.fixedRate(100), window: 10, dedup }, 0)
    // A fixed-delay schedule is valid alone, but not with the holder's window (SPEC §15).
    const r = k.scheduleDeduplicated({ job: "v2", schedule: Schedule.fixedDelay(50), dedup }, 1)
    expect(r).toBeInstanceOf(Errors.InvalidOption)
    expect((r as Errors.InvalidOption).field).toBe("window")
    expect(k.jobOf("h")).toBe("v1")
    expect(k.stats()).toMatchObject({ accepted: 1, scheduled: 1 })
    expect(k.stats().dedup).toMatchObject({ replaced: 0, deduplicated: 0, tracked: 1 })
  })

  it("a sweep runs when tracked reaches twice what the last one kept, at least 64", () => {
    const k = new Kernel.Kernel<string>()
    for (let n = 0; n < 62; n++) end(k, `a${n}`, 0)
    end(k, "throttled", 0, "throttle")
    // 63 ended holders: below 64, no sweep yet.
    expect(k.stats().dedup.tracked).toBe(63)
    // The 64th key sweeps at 10, exactly when the throttle window (10 from 0) has passed.
    pending(k, "p", 10)
    expect(k.stats().dedup.tracked).toBe(1)
    for (let n = 0; n < 40; n++) pending(k, `b${n}`, 10)
    for (let n = 0; n < 23; n++) end(k, `c${n}`, 10)
    // The 64th again sweeps: 41 pending and the one created then (still pending at that point).
    expect(k.stats().dedup.tracked).toBe(42)
    // Next sweep at 84: 22 more ended keys reach 64 and are all still tracked.
    for (let n = 0; n < 22; n++) end(k, `d${n}`, 10)
    expect(k.stats().dedup.tracked).toBe(64)
    expect(k.stats().dedup.keys).toBe(41)
  })
})
