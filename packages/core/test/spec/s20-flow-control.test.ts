/**
 * SPEC §20: flow control. Concurrency is counted from the runs the kernel hands out and the
 * completions reported to it (a driver completes in any order); rate limits on the manual clock.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Clock, Driver, Errors, Kernel, Rules, Schedule, Task } from "../../src/index.ts"

type K = Kernel.Kernel<string>
const once = (at: number) => Schedule.once(at)

const kernel = (limits: Rules.Limits) => new Kernel.Kernel<string>({ limits })
const take = (k: K, now: number) => {
  const out: Array<Kernel.Run<string>> = []
  for (let r = k.takeDue(now); r !== undefined; r = k.takeDue(now)) out.push(r)
  return out
}

describe("SPEC §20.1 concurrency limits", () => {
  it("a group at its limit holds its due runs; each end lets the next one go, in §4 order", () => {
    const k = kernel({ groups: { email: { concurrency: 2 } } })
    for (const [job, priority] of [
      ["a", "low"],
      ["b", "normal"],
      ["c", "low"],
      ["d", "high"],
      ["e", "normal"],
    ] as const) {
      k.schedule({ id: job, job, schedule: once(10), group: "email", priority }, 0)
    }
    const first = take(k, 10)
    // Equal due times: high, then normal, then low (SPEC §4).
    expect(first.map((r) => r.job)).toEqual(["d", "b"])
    expect(k.status("e")).toBe("scheduled")
    expect(k.info("e")?.waiting).toEqual({
      cause: "concurrency",
      scope: "group:email",
      since: 10,
      until: undefined,
    })
    expect(k.stats().waiting).toEqual({ concurrency: 3, "rate-limited": 0 })
    k.checkInvariants()
    k.complete(first[0] as Kernel.Run<string>, Task.succeeded, 20, false)
    const next = take(k, 20)
    expect(next.map((r) => [r.job, r.startedAt])).toEqual([["e", 20]])
    k.complete(first[1] as Kernel.Run<string>, Task.succeeded, 25, false)
    k.complete(next[0] as Kernel.Run<string>, Task.succeeded, 25, false)
    expect(take(k, 25).map((r) => r.job)).toEqual(["a", "c"])
    expect(k.stats().waiting).toEqual({ concurrency: 0, "rate-limited": 0 })
    k.checkInvariants()
  })

  it("a waiter does not block the runs of other scopes, or of no scope (no head-of-line blocking)", () => {
    const k = kernel({ groups: { slow: { concurrency: 1 }, fast: {} } })
    k.schedule({ id: "s1", job: "s1", schedule: once(1), group: "slow" }, 0)
    k.schedule({ id: "s2", job: "s2", schedule: once(2), group: "slow" }, 0)
    k.schedule({ id: "f", job: "f", schedule: once(3), group: "fast" }, 0)
    k.schedule({ id: "n", job: "n", schedule: once(4) }, 0)
    expect(take(k, 10).map((r) => r.job)).toEqual(["s1", "f", "n"])
    expect(k.info("s2")?.waiting?.cause).toBe("concurrency")
    expect(k.nextSlot()).toBeUndefined()
  })

  it("keys: a limit of 1 per key runs each key's tasks in series, keys side by side", () => {
    const k = kernel({ keys: { concurrency: 1 } })
    for (const [id, key] of [
      ["a1", "a"],
      ["a2", "a"],
      ["b1", "b"],
      ["b2", "b"],
    ] as const) {
      k.schedule({ id, job: id, schedule: once(5), key }, 0)
    }
    const first = take(k, 5)
    expect(first.map((r) => r.job)).toEqual(["a1", "b1"])
    expect(k.info("a2")).toMatchObject({ key: "a", waiting: { scope: "key:a" } })
    k.complete(first[1] as Kernel.Run<string>, Task.succeeded, 6, false)
    expect(take(k, 6).map((r) => r.job)).toEqual(["b2"])
  })

  it("a run waiting on its key while its group has room does not keep the group's other waiters back", () => {
    const k = kernel({ groups: { g: { concurrency: 1 } }, keys: { concurrency: 1 } })
    k.schedule({ id: "busy", job: "busy", schedule: once(0), key: "k" }, 0)
    const busy = take(k, 0)
    k.schedule({ id: "g1", job: "g1", schedule: once(1), group: "g" }, 0)
    k.schedule({ id: "gk", job: "gk", schedule: once(2), group: "g", key: "k" }, 0)
    k.schedule({ id: "g2", job: "g2", schedule: once(3), group: "g" }, 0)
    const g1 = take(k, 3)
    expect(g1.map((r) => r.job)).toEqual(["g1"])
    // g1 ends: gk goes first (§4) but its key is busy; g2 takes the group's place.
    k.complete(g1[0] as Kernel.Run<string>, Task.succeeded, 4, false)
    expect(take(k, 4).map((r) => r.job)).toEqual(["g2"])
    // Both its scopes are full now: its wait is `Rules.admit`'s, on the first full one (SPEC §20.2),
    // though it stays in key:k's queue until that lets it go.
    expect(k.info("gk")?.waiting?.scope).toBe("group:g")
    k.complete(busy[0] as Kernel.Run<string>, Task.succeeded, 5, false)
    k.checkInvariants()
  })

  it("a cancelled or paused waiter leaves the queue; the place goes to the next", () => {
    const k = kernel({ groups: { g: { concurrency: 1 } } })
    for (const id of ["a", "b", "c", "d"])
      k.schedule({ id, job: id, schedule: once(1), group: "g" }, 0)
    const a = take(k, 1)
    expect(k.cancel("b", 2)).toBe(true)
    expect(k.pause("c", 2)).toBe(true)
    expect(k.info("c")?.waiting).toBeUndefined()
    expect(k.stats().waiting.concurrency).toBe(1)
    k.checkInvariants()
    k.complete(a[0] as Kernel.Run<string>, Task.succeeded, 3, false)
    expect(take(k, 3).map((r) => r.job)).toEqual(["d"])
    k.checkInvariants()
    // Resumed, it waits again behind d's run.
    k.resume("c", 4)
    expect(take(k, 4)).toEqual([])
    expect(k.info("c")?.waiting?.cause).toBe("concurrency")
  })

  it("a waiter let go into the heap and then cancelled hands the place on", () => {
    const k = kernel({ groups: { g: { concurrency: 1 } } })
    for (const id of ["a", "b", "c"]) k.schedule({ id, job: id, schedule: once(1), group: "g" }, 0)
    const a = take(k, 1)
    k.complete(a[0] as Kernel.Run<string>, Task.succeeded, 2, false)
    // b was let go but not taken yet.
    k.cancel("b", 2)
    expect(take(k, 2).map((r) => r.job)).toEqual(["c"])
  })

  it("property: a limit is never exceeded, nothing is lost, no run starts before it is due", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            due: fc.integer({ min: 0, max: 50 }),
            group: fc.constantFrom("a", "b", undefined),
            key: fc.constantFrom("x", "y", "z", undefined),
            priority: fc.constantFrom("high", "normal", "low" as const),
            length: fc.integer({ min: 0, max: 20 }),
          }),
          { maxLength: 40 },
        ),
        fc.integer({ min: 1, max: 3 }),
        (tasks, limitA) => {
          const k = kernel({
            groups: { a: { concurrency: limitA }, b: { concurrency: 2 } },
            keys: { concurrency: 1 },
          })
          tasks.forEach((t, n) => {
            const id = k.schedule(
              {
                id: `t${n}`,
                job: `t${n}`,
                schedule: once(t.due),
                group: t.group,
                key: t.key,
                priority: t.priority,
              },
              0,
            )
            expect(id).toBe(`t${n}`)
          })
          const running = new Map<string, number>()
          const scopesOf = (n: number) => {
            const t = tasks[n] as (typeof tasks)[number]
            return [t.group && `g:${t.group}`, t.key && `k:${t.key}`].filter(
              (s): s is string => typeof s === "string",
            )
          }
          const limitOf = (s: string) => (s === "g:a" ? limitA : s === "g:b" ? 2 : 1)
          const inFlight: Array<{ run: Kernel.Run<string>; ends: number }> = []
          let started = 0
          for (let now = 0; now < 2_000 && started < tasks.length; now++) {
            for (let j = inFlight.length - 1; j >= 0; j--) {
              const f = inFlight[j] as (typeof inFlight)[number]
              if (f.ends > now) continue
              inFlight.splice(j, 1)
              for (const s of scopesOf(Number(f.run.job.slice(1))))
                running.set(s, (running.get(s) ?? 0) - 1)
              k.complete(f.run, Task.succeeded, now, false)
            }
            for (const run of take(k, now)) {
              const n = Number(run.job.slice(1))
              const t = tasks[n] as (typeof tasks)[number]
              expect(run.startedAt).toBeGreaterThanOrEqual(t.due)
              for (const s of scopesOf(n)) {
                running.set(s, (running.get(s) ?? 0) + 1)
                expect(running.get(s)).toBeLessThanOrEqual(limitOf(s))
              }
              started++
              inFlight.push({ run, ends: now + t.length })
            }
            k.checkInvariants()
          }
          expect(started).toBe(tasks.length)
        },
      ),
      { numRuns: 150 },
    )
  })
})

describe("SPEC §20.2 rate limits", () => {
  it("a sliding window: at most max starts in any `per` ms; the next waits for the oldest to leave it", () => {
    const clock = new Clock.ManualClock(0)
    const starts: Array<[string, number]> = []
    const d = new Driver.Driver({
      clock,
      limits: { groups: { api: { rate: { max: 2, per: 1000 } } } },
    })
    for (const [id, at] of [
      ["a", 0],
      ["b", 400],
      ["c", 500],
      ["d", 600],
    ] as const) {
      d.scheduleUnsafe({
        id,
        schedule: once(at),
        group: "api",
        job: (r) => void starts.push([r.id, clock.now()]),
      })
    }
    d.runUntil(450)
    expect(d.info("c")).toBeDefined()
    d.runUntil(999)
    expect(starts).toEqual([
      ["a", 0],
      ["b", 400],
    ])
    expect(d.info("c")?.waiting).toEqual({
      cause: "rate-limited",
      scope: "group:api",
      since: 500,
      until: 1000,
    })
    expect(d.stats().waiting["rate-limited"]).toBeGreaterThanOrEqual(1)
    // The kernel's next wake is the instant the window opens.
    expect(d.nextSlot()).toBe(1000)
    d.runUntil(3000)
    // c at 1000 (a's start left the window), d at 1400 (b's did).
    expect(starts).toEqual([
      ["a", 0],
      ["b", 400],
      ["c", 1000],
      ["d", 1400],
    ])
  })

  it("the window's boundary: a start exactly `per` after the oldest is allowed, one ms before is not", () => {
    const limit = { concurrency: Number.POSITIVE_INFINITY, rateMax: 1, ratePerMs: 100 }
    expect(Rules.rateOpensAt(limit, [50], 149)).toBe(150)
    expect(Rules.rateOpensAt(limit, [50], 150)).toBe(150)
    expect(Rules.admit([{ limit, running: 0, starts: [50] }], 149)).toEqual({
      _tag: "Wait",
      cause: "rate-limited",
      scope: 0,
      until: 150,
    })
    expect(Rules.admit([{ limit, running: 0, starts: [50] }], 150)._tag).toBe("Start")
  })

  it("a concurrency wait is decided before a rate wait: a rate waiter whose other scope fills since shows that scope's concurrency wait", () => {
    const k = kernel({ groups: { g1: { concurrency: 1 } }, keys: { rate: { max: 1, per: 1000 } } })
    k.schedule({ id: "a", job: "a", schedule: once(0), key: "k2" }, 0)
    k.schedule({ id: "t", job: "t", schedule: once(100), group: "g1", key: "k2" }, 0)
    k.schedule({ id: "u", job: "u", schedule: once(200), group: "g1" }, 0)
    const [a] = take(k, 0)
    k.complete(a as Kernel.Run<string>, Task.succeeded, 10, false)
    // At 100 g1 has room: t waits for key:k2's window only.
    expect(take(k, 100)).toEqual([])
    expect(k.info("t")?.waiting).toEqual({
      cause: "rate-limited",
      scope: "key:k2",
      since: 100,
      until: 1000,
    })
    // u takes g1's only place: t could not start now even with the window open.
    expect(take(k, 200).map((r) => r.job)).toEqual(["u"])
    const waiting = { cause: "concurrency", scope: "group:g1", since: 100, until: undefined }
    expect(k.info("t")?.waiting).toEqual(waiting)
    expect(k.explain("t", 200)?.waiting).toMatchObject(waiting)
    expect(k.stats().waiting).toEqual({ concurrency: 1, "rate-limited": 0 })
    k.checkInvariants()
  })

  it("a concurrency waiter whose scope has room again inside the rate window shows the rate wait", () => {
    const k = kernel({ groups: { g: { concurrency: 1, rate: { max: 1, per: 100 } } } })
    k.schedule({ id: "a", job: "a", schedule: once(0), group: "g" }, 0)
    k.schedule({ id: "b", job: "b", schedule: once(10), group: "g" }, 0)
    k.schedule({ id: "c", job: "c", schedule: once(20), group: "g" }, 0)
    const [a] = take(k, 0)
    // a runs: b and c wait for g's only place.
    expect(take(k, 20)).toEqual([])
    expect(k.info("b")?.waiting?.cause).toBe("concurrency")
    // a ends at 30, inside its start's window: g has room, but neither may start before 100.
    k.complete(a as Kernel.Run<string>, Task.succeeded, 30, false)
    expect(take(k, 30)).toEqual([])
    for (const id of ["b", "c"]) {
      expect(k.info(id)?.waiting).toEqual({
        cause: "rate-limited",
        scope: "group:g",
        since: 20,
        until: 100,
      })
    }
    expect(k.explain("b", 30)?.waiting).toMatchObject({ cause: "rate-limited", until: 100 })
    expect(k.stats().waiting).toEqual({ concurrency: 0, "rate-limited": 2 })
    // The window opens: b goes first (SPEC §4), and c waits for its place again.
    expect(take(k, 100).map((r) => r.job)).toEqual(["b"])
    expect(k.info("c")?.waiting?.cause).toBe("concurrency")
    k.checkInvariants()
  })

  it("a rate wait shows the scope whose window opens last, the first of those opening together", () => {
    const k = kernel({
      groups: { g: { rate: { max: 1, per: 30 } } },
      keys: { rate: { max: 2, per: 70 } },
    })
    k.schedule({ id: "a", job: "a", schedule: once(0), key: "k" }, 0)
    k.schedule({ id: "b", job: "b", schedule: once(0), group: "g", key: "k" }, 0)
    k.schedule({ id: "c", job: "c", schedule: once(0), group: "g", key: "k" }, 0)
    // a and b start at 0: key:k's window (2 per 70) is full until 70, g's (1 per 30) until 30.
    expect(take(k, 0).map((r) => r.job)).toEqual(["a", "b"])
    expect(k.info("c")?.waiting).toMatchObject({ cause: "rate-limited", scope: "key:k", until: 70 })
    // At 40 c's key still holds it; d starts in g at 40, so both windows open at 70 for c.
    k.schedule({ id: "d", job: "d", schedule: once(40), group: "g" }, 0)
    expect(take(k, 40).map((r) => r.job)).toEqual(["d"])
    // Rules.admit names the first scope of those opening last (its group before its key), as a
    // store deciding again at each claim records it; c stays queued on key:k meanwhile.
    expect(k.info("c")?.waiting).toMatchObject({
      cause: "rate-limited",
      scope: "group:g",
      until: 70,
    })
    expect(k.explain("c", 40)?.waiting).toMatchObject({ scope: "group:g" })
    k.checkInvariants()
  })

  it("a rate-limited group does not hold back other runs due before its window opens", () => {
    const clock = new Clock.ManualClock(0)
    const starts: Array<[string, number]> = []
    const d = new Driver.Driver({
      clock,
      limits: { groups: { api: { rate: { max: 1, per: 100 } } } },
    })
    const job = (r: Task.RunInfo) => void starts.push([r.id, clock.now()])
    d.scheduleUnsafe({ id: "a", schedule: once(0), group: "api", job })
    d.scheduleUnsafe({ id: "b", schedule: once(10), group: "api", job })
    d.scheduleUnsafe({ id: "x", schedule: once(20), job })
    d.scheduleUnsafe({ id: "y", schedule: once(150), job })
    d.runUntil(200)
    expect(starts).toEqual([
      ["a", 0],
      ["x", 20],
      ["b", 100],
      ["y", 150],
    ])
  })
})

describe("SPEC §20.2 a rate window opening at a take lets its waiter compete in §4 order", () => {
  it("a rate waiter whose window opens as another scope's run ends goes before a later-due run let go then", () => {
    const k = kernel({ groups: { g: { concurrency: 1 } }, keys: { rate: { max: 1, per: 100 } } })
    k.schedule({ id: "first", job: "first", schedule: once(0), key: "k" }, 0)
    k.schedule({ id: "busy", job: "busy", schedule: once(0), group: "g" }, 0)
    // Due at 50, rate-limited until 100; due at 60, held by group g's concurrency.
    k.schedule({ id: "rated", job: "rated", schedule: once(50), key: "k" }, 0)
    k.schedule({ id: "held", job: "held", schedule: once(60), group: "g" }, 0)
    const started = take(k, 0)
    expect(started.map((r) => r.job)).toEqual(["first", "busy"])
    expect(take(k, 60)).toEqual([])
    expect(k.info("rated")?.waiting?.until).toBe(100)
    expect(k.nextSlot()).toBe(100)
    // At 100 the window opens and busy ends: both may start at 100; rated is due earlier (SPEC §4).
    k.complete(started[1] as Kernel.Run<string>, Task.succeeded, 100, false)
    expect(take(k, 100).map((r) => [r.job, r.startedAt])).toEqual([
      ["rated", 100],
      ["held", 100],
    ])
    k.checkInvariants()
  })

  it("a stepping driver still starts a run due before the window opens first", () => {
    const k = kernel({ keys: { rate: { max: 1, per: 100 } } })
    k.schedule({ id: "first", job: "first", schedule: once(0), key: "k" }, 0)
    k.schedule({ id: "rated", job: "rated", schedule: once(50), key: "k" }, 0)
    k.schedule({ id: "plain", job: "plain", schedule: once(60) }, 0)
    expect(take(k, 0).map((r) => r.job)).toEqual(["first"])
    // Stepping from 0 to 200: plain starts at 60, before rated's window opens at 100.
    const out: Array<[string, number]> = []
    for (let r = k.takeDue(0, 200); r !== undefined; r = k.takeDue(r.startedAt, 200))
      out.push([r.job, r.startedAt])
    expect(out).toEqual([
      ["plain", 60],
      ["rated", 100],
    ])
  })
})

describe("SPEC §20.2 a stepping driver never starts a run before its window opens", () => {
  it("a waiter let go at a window opening ahead of the clock starts at the opening", () => {
    const k = kernel({ keys: { rate: { max: 1, per: 100 } } })
    k.schedule({ id: "first", job: "first", schedule: once(0), key: "k" }, 0)
    k.schedule({ id: "rated", job: "rated", schedule: once(50), key: "k" }, 0)
    expect(take(k, 50).map((r) => r.job)).toEqual(["first"])
    // The clock reads 50, the driver takes runs due by 200: the window opens at 150.
    const run = k.takeDue(50, 200)
    expect([run?.job, run?.startedAt]).toEqual(["rated", 150])
    expect(k.info("rated")?.waiting).toBeUndefined()
  })
})

describe("SPEC §20.1 a scope lets go exactly as many waiters as it has room for", () => {
  it("several ends before one take let each free place go once", () => {
    const k = kernel({ groups: { g: { concurrency: 3 } } })
    for (let n = 0; n < 13; n++)
      k.schedule({ id: `t${n}`, job: `t${n}`, schedule: once(1), group: "g" }, 0)
    const first = take(k, 1)
    expect(first).toHaveLength(3)
    expect(k.stats().heapEntries).toBe(0)
    for (const run of first) k.complete(run, Task.succeeded, 5, false)
    // Three places, three waiters back in the heap (not 1 + 2 + 3 that are queued again when taken).
    expect(k.stats().heapEntries).toBe(3)
    expect(k.stats().waiting.concurrency).toBe(7)
    // A waiter leaving does not free a place that is already promised.
    k.cancel("t12", 5)
    expect(k.stats().heapEntries).toBe(3)
    expect(take(k, 5).map((r) => r.job)).toEqual(["t3", "t4", "t5"])
    k.checkInvariants()
  })

  it("a waiter let go and then cancelled in the heap gives its place back", () => {
    const k = kernel({ groups: { g: { concurrency: 1 } } })
    for (const id of ["a", "b", "c", "d"])
      k.schedule({ id, job: id, schedule: once(1), group: "g" }, 0)
    const a = take(k, 1)
    k.complete(a[0] as Kernel.Run<string>, Task.succeeded, 2, false)
    expect(k.stats().heapEntries).toBe(1)
    k.cancel("b", 2)
    // b's place goes to c at once; d still waits.
    expect(take(k, 2).map((r) => r.job)).toEqual(["c"])
    expect(k.info("d")?.waiting?.cause).toBe("concurrency")
  })

  it("a waiter let go, paused and resumed no longer counts as let go: taken, it frees no other's place", () => {
    const k = kernel({ groups: { g: { concurrency: 2 } } })
    for (const id of ["r1", "r2", "p"])
      k.schedule({ id, job: id, schedule: once(0), group: "g" }, 0)
    for (const id of ["x", "y"]) k.schedule({ id, job: id, schedule: once(1), group: "g" }, 0)
    const [r1, r2] = take(k, 1)
    k.complete(r1 as Kernel.Run<string>, Task.succeeded, 2, false) // lets p go
    k.pause("p", 3) // p's place goes to x
    expect(k.resume("p", 4)).toBe(true)
    // p is due first and takes the free place; x is still let go and holds the last one.
    expect(k.takeDue(4)?.job).toBe("p")
    k.complete(r2 as Kernel.Run<string>, Task.succeeded, 5, false)
    expect(k.stats().heapEntries).toBe(1)
    expect(take(k, 5).map((r) => r.job)).toEqual(["x"])
    expect(k.info("y")?.waiting).toMatchObject({ cause: "concurrency", since: 1 })
    k.checkInvariants()
  })

  it("a let-go waiter taken before another still counts that other as let go", () => {
    const k = kernel({ groups: { g: { concurrency: 3 } } })
    for (let n = 0; n < 8; n++)
      k.schedule({ id: `t${n}`, job: `t${n}`, schedule: once(1), group: "g" }, 0)
    const [t0, t1] = take(k, 1)
    k.complete(t0 as Kernel.Run<string>, Task.succeeded, 5, false)
    k.complete(t1 as Kernel.Run<string>, Task.succeeded, 5, false)
    expect(k.takeDue(5)?.job).toBe("t3")
    // A waiter leaving asks the scope again: t4 still holds the one free place.
    k.cancel("t7", 5)
    expect(k.stats().heapEntries).toBe(1)
    expect(take(k, 5).map((r) => r.job)).toEqual(["t4"])
    expect(k.info("t5")?.waiting).toMatchObject({ cause: "concurrency", since: 1 })
    k.checkInvariants()
  })

  it("property: the heap never holds more let-go waiters of a scope than its free places", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.constantFrom("end", "take", "cancel"), { maxLength: 60 }),
        (limit, steps) => {
          const k = kernel({ groups: { g: { concurrency: limit } } })
          for (let n = 0; n < 20; n++)
            k.schedule({ id: `t${n}`, job: `t${n}`, schedule: once(0), group: "g" }, 0)
          const running: Array<Kernel.Run<string>> = take(k, 0)
          let now = 0
          let next = 19
          for (const step of steps) {
            now++
            if (step === "end" && running.length > 0) {
              k.complete(running.shift() as Kernel.Run<string>, Task.succeeded, now, false)
            } else if (step === "take") {
              running.push(...take(k, now))
            } else if (step === "cancel" && next >= 0) {
              k.cancel(`t${next--}`, now)
            }
            const s = k.stats()
            // Live heap entries are the waiters let go (no other task is scheduled out of a queue).
            expect(s.heapEntries - s.deadEntries).toBeLessThanOrEqual(limit - running.length)
            expect(running.length).toBeLessThanOrEqual(limit)
            k.checkInvariants()
          }
        },
      ),
      { numRuns: 200 },
    )
  })
})

describe("SPEC §20.5 flow-control state is bounded", () => {
  it("100,000 one-off keys under a rate limit: at most a window's keys are kept, none once it passed", () => {
    const k = kernel({ keys: { rate: { max: 1, per: 100 } } })
    const n = 100_000
    // 100 keys due each ms for 1,000 ms; each runs at once and ends 1 ms later.
    for (let c = 0; c < n; c++)
      k.schedule({ job: `c${c}`, schedule: once(Math.floor(c / 100)), key: `customer-${c}` }, 0)
    let most = 0
    let ran = 0
    let running: Array<Kernel.Run<string>> = []
    for (let now = 0; now <= 1_001; now++) {
      for (const run of running) k.complete(run, Task.succeeded, now, false)
      running = take(k, now)
      ran += running.length
      most = Math.max(most, k.stats().scopes)
    }
    expect(ran).toBe(n)
    // The keys that started in the last window (100 ms × 100 a ms), and those running.
    expect(most).toBeLessThanOrEqual(101 * 100)
    expect(k.stats().scopes).toBeGreaterThan(0)
    // Virtual time passes the last window; the next step drops what is left.
    expect(k.takeDue(1_200)).toBeUndefined()
    expect(k.stats().scopes).toBe(0)
    k.checkInvariants()
  })

  it("a waiter cancelled drops the key it held; a declared group's state stays", () => {
    const k = kernel({ groups: { g: { concurrency: 1 } }, keys: { concurrency: 1 } })
    k.schedule({ id: "busy", job: "busy", schedule: once(0), group: "g" }, 0)
    const busy = take(k, 0)
    k.schedule({ id: "w", job: "w", schedule: once(1), group: "g", key: "k" }, 0)
    expect(take(k, 1)).toEqual([])
    expect(k.stats().scopes).toBe(2)
    k.cancel("w", 2)
    expect(k.stats().scopes).toBe(1)
    k.complete(busy[0] as Kernel.Run<string>, Task.succeeded, 3, false)
    expect(k.stats().scopes).toBe(1)
  })

  it("a key whose only waiter was let go and then cancelled is dropped at once", () => {
    const k = kernel({ keys: { concurrency: 1 } })
    for (const id of ["a", "b"]) k.schedule({ id, job: id, schedule: once(0), key: "k" }, 0)
    const [a] = take(k, 0)
    k.complete(a as Kernel.Run<string>, Task.succeeded, 1, false) // lets b go
    expect(k.stats().scopes).toBe(1)
    k.cancel("b", 2)
    expect(k.stats().scopes).toBe(0)
    k.checkInvariants()
  })

  it("a key started again inside its window is kept until its newest start leaves it", () => {
    const k = kernel({ keys: { rate: { max: 2, per: 100 } } })
    k.schedule({ id: "a", job: "a", schedule: once(0), key: "x" }, 0)
    k.complete(take(k, 0)[0] as Kernel.Run<string>, Task.succeeded, 1, false)
    k.schedule({ id: "b", job: "b", schedule: once(49), key: "x" }, 1)
    k.complete(take(k, 50)[0] as Kernel.Run<string>, Task.succeeded, 51, false)
    // a's start leaves the window at 100, b's at 150.
    k.takeDue(120)
    expect(k.stats().scopes).toBe(1)
    k.takeDue(150)
    expect(k.stats().scopes).toBe(0)
  })
})

describe("SPEC §20.5 a key's state is kept exactly as long as it can matter", () => {
  it("property: kept while a run of the key runs or one of its starts is inside the window", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            due: fc.integer({ min: 0, max: 200 }),
            key: fc.constantFrom("a", "b", "c", "d", "e"),
            length: fc.integer({ min: 0, max: 60 }),
          }),
          { maxLength: 30 },
        ),
        fc.constantFrom(30, 100),
        (tasks, per) => {
          // A rate nothing reaches: every run starts when due, and each start is counted.
          const k = kernel({ keys: { rate: { max: 1000, per } } })
          tasks.forEach((t, n) => {
            k.schedule({ id: `t${n}`, job: `t${n}`, schedule: once(t.due), key: t.key }, 0)
          })
          const ends = new Map<number, Array<Kernel.Run<string>>>()
          const last = new Map<string, number>()
          const running = new Map<string, number>()
          const keyOf = (run: Kernel.Run<string>) =>
            (tasks[Number(run.job.slice(1))] as { key: string }).key
          const endAt = (now: number) => {
            for (const run of ends.get(now) ?? []) {
              k.complete(run, Task.succeeded, now, false)
              running.set(keyOf(run), (running.get(keyOf(run)) ?? 0) - 1)
            }
            ends.delete(now)
          }
          for (let now = 0; now <= 300; now++) {
            endAt(now)
            for (const run of take(k, now)) {
              const key = keyOf(run)
              last.set(key, now)
              running.set(key, (running.get(key) ?? 0) + 1)
              const at = now + (tasks[Number(run.job.slice(1))] as { length: number }).length
              ends.set(at, [...(ends.get(at) ?? []), run])
            }
            endAt(now)
            const kept = [...last].filter(
              ([key, start]) => (running.get(key) ?? 0) > 0 || start + per > now,
            )
            expect(k.stats().scopes).toBe(kept.length)
          }
          k.checkInvariants()
        },
      ),
    )
  })
})

describe("SPEC §20.4 explain says why a run waits and what for", () => {
  it("a concurrency wait: cause, scope, since, the scope's figures and its place in the queue", () => {
    const k = kernel({ groups: { email: { concurrency: 2 } } })
    for (const id of ["a", "b", "c", "d"])
      k.schedule({ id, job: id, schedule: once(10), group: "email" }, 0)
    take(k, 10)
    const d = k.explain("d", 12)
    expect(d?.waiting).toEqual({
      cause: "concurrency",
      scope: "group:email",
      since: 10,
      until: undefined,
      for: "a run of group:email to end (2 of 2 running; 1 waiting before it)",
    })
    expect(d?.notes).toContain(
      "waiting (concurrency) on group:email since 10: it waits for a run of group:email to end (2 of 2 running; 1 waiting before it)",
    )
    expect(k.explain("c", 12)?.waiting?.for).toContain("it is next")
    // Running, or not waiting: no wait to explain.
    expect(k.explain("a", 12)?.waiting).toBeUndefined()
    k.cancel("c", 13)
    expect(k.explain("d", 13)?.waiting?.for).toContain("it is next")
    k.pause("d", 13)
    expect(k.explain("d", 13)?.waiting).toBeUndefined()
  })

  it("a rate wait says until when, and the window's figures", () => {
    const k = kernel({ keys: { rate: { max: 1, per: 100 } } })
    k.schedule({ id: "a", job: "a", schedule: once(0), key: "cust" }, 0)
    k.schedule({ id: "b", job: "b", schedule: once(5), key: "cust" }, 0)
    take(k, 10)
    expect(k.explain("b", 10)?.waiting).toEqual({
      cause: "rate-limited",
      scope: "key:cust",
      since: 10,
      until: 110,
      for: "key:cust's rate window to open at 110 (at most 1 per 100 ms; it is next)",
    })
    expect(new Kernel.Kernel<string>().explain("x", 0)).toBeUndefined()
  })
})

describe("SPEC §20 typed errors", () => {
  it("bad limits name the field and the value; the kernel is not built", () => {
    const bad = (limits: unknown) => {
      try {
        new Kernel.Kernel({ limits: limits as Rules.Limits })
        return undefined
      } catch (error) {
        expect(error).toBeInstanceOf(Errors.InvalidOption)
        return [(error as Errors.InvalidOption).field, (error as Errors.InvalidOption).value]
      }
    }
    expect(bad({ groups: { email: { concurrency: 0 } } })).toEqual([
      "limits.groups.email.concurrency",
      0,
    ])
    expect(bad({ keys: { concurrency: 1.5 } })).toEqual(["limits.keys.concurrency", 1.5])
    expect(bad({ keys: { rate: { max: 0, per: 10 } } })).toEqual(["limits.keys.rate.max", 0])
    expect(bad({ keys: { rate: { max: 1, per: 0 } } })).toEqual(["limits.keys.rate.per", 0])
    expect(bad({ keys: { rate: { max: 1 } } })).toEqual(["limits.keys.rate.per", undefined])
    expect(bad({ groups: { g: { concurency: 1 } } })).toEqual(["limits.groups.g.concurency", 1])
    expect(bad({ queues: {} })).toEqual(["limits.queues", {}])
    expect(bad("x")).toEqual(["limits", "x"])
  })

  it("a task's unknown group, bad key, or key with no per-key limit is refused and changes nothing", () => {
    const k = kernel({ groups: { email: { concurrency: 1 } } })
    const g = k.schedule({ job: "a", schedule: once(1), group: "emial" }, 0)
    expect(g).toBeInstanceOf(Errors.InvalidOption)
    expect((g as Errors.InvalidOption).field).toBe("group")
    expect((g as Errors.InvalidOption).value).toBe("emial")
    const key = k.schedule({ job: "a", schedule: once(1), key: "c1" }, 0)
    expect((key as Errors.InvalidOption).field).toBe("key")
    const k2 = kernel({ keys: { concurrency: 1 } })
    const empty = k2.schedule({ job: "a", schedule: once(1), key: "" }, 0)
    expect([(empty as Errors.InvalidOption).field, (empty as Errors.InvalidOption).value]).toEqual([
      "key",
      "",
    ])
    expect(k.stats().accepted + k2.stats().accepted).toBe(0)
  })

  it("group and key are fixed once scheduled: update refuses them", () => {
    const k = kernel({ groups: { email: {} } })
    const id = k.schedule({ job: "a", schedule: once(1), group: "email" }, 0) as string
    const r = k.update(id, { group: "email" } as never, 0)
    expect((r as Errors.InvalidOption).field).toBe("group")
  })
})

describe("SPEC §20.1, §20.2 the rules (Rules.resolveLimits, scopesOf, limitOf, rateOpensAt, admit)", () => {
  const refusal = (r: unknown) => {
    expect(r).toBeInstanceOf(Errors.InvalidOption)
    const e = r as Errors.InvalidOption
    return [e.field, e.value, e.message]
  }
  const limits = (l: Rules.Limits) => Rules.resolveLimits(l) as Rules.ResolvedLimits

  it("bad limits: each refusal names its field, the value and the rule", () => {
    expect(refusal(Rules.resolveLimits(null))).toEqual([
      "limits",
      null,
      "limits must be an object { groups?, keys? }, got null",
    ])
    expect(refusal(Rules.resolveLimits("x", "limits", { handlers: true }))).toEqual([
      "limits",
      "x",
      'limits must be an object { handlers?, groups?, keys? }, got "x"',
    ])
    expect(refusal(Rules.resolveLimits({ groups: 5 }))).toEqual([
      "limits.groups",
      5,
      "limits.groups must be an object of limits by name, got 5",
    ])
    for (const g of [5, null, []]) {
      expect(refusal(Rules.resolveLimits({ groups: { g } }))).toEqual([
        "limits.groups.g",
        g,
        `limits.groups.g must be an object { concurrency?, rate? }, got ${Errors.show(g)}`,
      ])
    }
    for (const rate of [5, null, []]) {
      expect(refusal(Rules.resolveLimits({ keys: { rate } }))).toEqual([
        "limits.keys.rate",
        rate,
        `limits.keys.rate must be an object { max, per }, got ${Errors.show(rate)}`,
      ])
    }
    expect(refusal(Rules.resolveLimits({ keys: { rate: { per: 10 } } }))).toEqual([
      "limits.keys.rate.max",
      undefined,
      "limits.keys.rate.max is required, got undefined",
    ])
    expect(refusal(Rules.resolveLimits({ keys: { rate: { max: 1 } } }))).toEqual([
      "limits.keys.rate.per",
      undefined,
      "limits.keys.rate.per is required, got undefined",
    ])
    expect(refusal(Rules.resolveLimits({ keys: { rate: { max: 1, per: 5, burst: 2 } } }))).toEqual([
      "limits.keys.rate.burst",
      2,
      "limits.keys.rate.burst is not a known option (known: max, per)",
    ])
  })

  it("limits resolved: absent figures are no limit; no handlers key unless a handler has a limit", () => {
    expect(Rules.resolveLimits(undefined)).toStrictEqual({ groups: new Map(), keys: undefined })
    expect(Rules.resolveLimits({ groups: {} }, "limits", { handlers: true })).toStrictEqual({
      groups: new Map(),
      keys: undefined,
    })
    expect(
      Rules.resolveLimits({ keys: { concurrency: 2, rate: { max: 3, per: "1 second" } } }),
    ).toStrictEqual({
      groups: new Map(),
      keys: { concurrency: 2, rateMax: 3, ratePerMs: 1000 },
    })
    const h = Rules.resolveLimits({ handlers: { mail: {} } }, "limits", { handlers: true })
    expect((h as Rules.ResolvedLimits).handlers).toEqual(
      new Map([["mail", { concurrency: Infinity, rateMax: Infinity, ratePerMs: 0 }]]),
    )
  })

  it("a task's scopes: refusals name group or key, the value, and what is declared", () => {
    const none = limits({})
    const declared = limits({ groups: { email: {}, sms: {} }, keys: {} })
    expect(refusal(Rules.scopesOf("g", undefined, none))).toEqual([
      "group",
      "g",
      'group must name a group declared in limits.groups (none declared), got "g"',
    ])
    expect(refusal(Rules.scopesOf("g", undefined, declared))).toEqual([
      "group",
      "g",
      'group must name a group declared in limits.groups ("email", "sms"), got "g"',
    ])
    expect(refusal(Rules.scopesOf(undefined, "", declared))).toEqual([
      "key",
      "",
      'key must be a string of 1 to 256 characters, got ""',
    ])
    expect(refusal(Rules.scopesOf(undefined, 7, declared))).toEqual([
      "key",
      7,
      "key must be a string of 1 to 256 characters, got 7",
    ])
    expect(refusal(Rules.scopesOf(undefined, "k", none))).toEqual([
      "key",
      "k",
      'key limits nothing: declare limits.keys first, got "k"',
    ])
    const longest = "x".repeat(256)
    expect(Rules.scopesOf(undefined, longest, declared)).toEqual([`key:${longest}`])
    expect(refusal(Rules.scopesOf(undefined, `${longest}x`, declared))[0]).toBe("key")
    // A store's handler is no scope when its limits declare no handlers at all.
    expect(Rules.scopesOf("sms", undefined, declared, "mail")).toEqual(["group:sms"])
    expect(Rules.limitOf(declared, "handler:mail")).toBeUndefined()
  })

  it("rateOpensAt: now when there is no rate limit or fewer than max starts in the window", () => {
    const noRate = { concurrency: 1, rateMax: Infinity, ratePerMs: 0 }
    const rate = { concurrency: Infinity, rateMax: 2, ratePerMs: 1000 }
    expect(Rules.rateOpensAt(noRate, [], 5)).toBe(5)
    expect(Rules.rateOpensAt(noRate, [1, 2, 3], 5)).toBe(5)
    expect(Rules.rateOpensAt(rate, [0], 500)).toBe(500)
    expect(Rules.rateOpensAt(rate, [0, 400], 500)).toBe(1000)
    expect(Rules.rateOpensAt(rate, [0, 400, 450], 500)).toBe(1400)
    expect(Rules.rateOpensAt(rate, [0, 400], 1200)).toBe(1200)
  })

  it("admit: the first full scope is a concurrency wait; else the window opening last", () => {
    const scope = (running: number, starts: Array<number>) => ({
      limit: { concurrency: 2, rateMax: 2, ratePerMs: 100 },
      running,
      starts,
    })
    expect(Rules.admit([scope(0, []), scope(1, [50])], 60)).toEqual({ _tag: "Start" })
    expect(Rules.admit([scope(0, []), scope(2, []), scope(2, [])], 60)).toEqual({
      _tag: "Wait",
      cause: "concurrency",
      scope: 1,
    })
    expect(Rules.admit([scope(0, [0, 10]), scope(0, [20, 30]), scope(1, [])], 60)).toEqual({
      _tag: "Wait",
      cause: "rate-limited",
      scope: 1,
      until: 120,
    })
  })
})

describe("SPEC §20.1, §20.2 flow control's bookkeeping, seen from outside", () => {
  it("a rate window counts the last max starts however many came before (start times trimmed)", () => {
    const k = kernel({ groups: { g: { rate: { max: 2, per: 100 } } } })
    for (let n = 0; n < 8; n++) k.schedule({ job: `r${n}`, schedule: once(0), group: "g" }, 0)
    expect(take(k, 0).map((r) => r.job)).toEqual(["r0", "r1"])
    expect(take(k, 100).map((r) => r.job)).toEqual(["r2", "r3"])
    // Four starts kept are trimmed to the last two: the window is still full until 200.
    expect(take(k, 150)).toEqual([])
    expect(k.nextSlot()).toBe(200)
    expect(take(k, 200).map((r) => r.job)).toEqual(["r4", "r5"])
    k.checkInvariants()
  })

  it("a waiter cancelled in its queue surfaces dead when the scope has room, and is dropped", () => {
    const k = kernel({ groups: { g: { concurrency: 1 } } })
    for (let n = 0; n < 12; n++) {
      k.schedule({ id: `w${n}`, job: `w${n}`, schedule: once(1), group: "g" }, 0)
    }
    const [first] = take(k, 1)
    expect(k.cancel("w1", 2)).toBe(true)
    expect(k.stats().deadEntries).toBe(1)
    k.checkInvariants()
    k.complete(first as Kernel.Run<string>, Task.succeeded, 3, false)
    expect(take(k, 3).map((r) => r.job)).toEqual(["w2"])
    expect(k.stats().deadEntries).toBe(0)
    expect(k.stats().waiting.concurrency).toBe(9)
    k.checkInvariants()
  })

  it("a dead heap entry on top when a rate window opens is dropped, not taken for the next run", () => {
    const k = kernel({ groups: { g: { rate: { max: 1, per: 100 } } } })
    k.schedule({ id: "a", job: "a", schedule: once(0), group: "g" }, 0)
    k.schedule({ id: "b", job: "b", schedule: once(0), group: "g" }, 0)
    for (let n = 0; n < 6; n++) k.schedule({ id: `x${n}`, job: "x", schedule: once(50 + n) }, 0)
    expect(take(k, 0).map((r) => r.job)).toEqual(["a"])
    expect(k.info("b")?.waiting?.until).toBe(100)
    k.cancel("x0", 10)
    expect(k.stats().deadEntries).toBe(1)
    expect(take(k, 49)).toEqual([])
    expect(take(k, 100).map((r) => r.job)).toEqual(["b", "x", "x", "x", "x", "x"])
    expect(k.stats().deadEntries).toBe(0)
    k.checkInvariants()
  })

  it("nextSlot is the earliest of the rate windows its waiters wait on", () => {
    const k = kernel({
      groups: { soon: { rate: { max: 1, per: 50 } }, late: { rate: { max: 1, per: 100 } } },
    })
    for (const g of ["soon", "late"]) {
      for (const n of [1, 2]) k.schedule({ id: `${g}${n}`, job: g, schedule: once(0), group: g }, 0)
    }
    expect(take(k, 0)).toHaveLength(2)
    expect(k.nextSlot()).toBe(50)
  })

  it("a completion drops the key cells whose window passed, before any take", () => {
    const k = kernel({ keys: { rate: { max: 5, per: 100 } } })
    k.schedule({ id: "a", job: "a", schedule: once(0), key: "ka" }, 0)
    k.schedule({ id: "b", job: "b", schedule: once(50), key: "kb" }, 0)
    const [a] = take(k, 0)
    k.complete(a as Kernel.Run<string>, Task.succeeded, 0, false)
    const [b] = take(k, 50)
    expect(k.stats().scopes).toBe(2)
    // At 150 both windows have passed: ka's by its expiry, kb's as its run ends.
    k.complete(b as Kernel.Run<string>, Task.succeeded, 150, false)
    expect(k.stats().scopes).toBe(0)
  })

  it("a keyed task cancelled or paused before it was ever due leaves no state behind", () => {
    const k = kernel({ keys: { concurrency: 1 } })
    k.schedule({ id: "a", job: "a", schedule: once(100), key: "k" }, 0)
    k.schedule({ id: "b", job: "b", schedule: once(100), key: "j" }, 0)
    expect(k.cancel("a", 1)).toBe(true)
    expect(k.pause("b", 1)).toBe(true)
    expect(k.stats().scopes).toBe(0)
    k.checkInvariants()
  })

  it("explain counts the waiters before it in §4 order: an earlier slot first, then the push order", () => {
    const k = kernel({ groups: { g: { concurrency: 1 } } })
    k.schedule({ id: "run", job: "run", schedule: once(0), group: "g" }, 0)
    k.schedule({ id: "later", job: "later", schedule: once(20), group: "g" }, 0)
    k.schedule({ id: "sooner", job: "sooner", schedule: once(10), group: "g" }, 0)
    k.schedule({ id: "tie", job: "tie", schedule: once(20), group: "g" }, 0)
    expect(take(k, 20).map((r) => r.job)).toEqual(["run"])
    const waitsFor = (id: string) => k.explain(id, 20)?.waiting?.for
    expect(waitsFor("sooner")).toContain("it is next")
    expect(waitsFor("later")).toContain("1 waiting before it")
    expect(waitsFor("tie")).toContain("2 waiting before it")
  })

  it("info and explain of a task with no options at all in a kernel with limits: no wait", () => {
    const k = kernel({ groups: { g: { concurrency: 1 } } })
    const id = k.schedule({ job: "plain", schedule: once(5) }, 0) as string
    expect(k.info(id)?.waiting).toBeUndefined()
    expect(k.explain(id, 0)?.waiting).toBeUndefined()
  })

  it("a rate window lets one waiter go at a time: the others keep their wait and its since", () => {
    const k = kernel({ groups: { g: { concurrency: 5, rate: { max: 1, per: 100 } } } })
    for (const id of ["a", "b", "c", "d"])
      k.schedule({ id, job: id, schedule: once(0), group: "g" }, 0)
    const [a] = take(k, 0)
    expect(k.info("c")?.waiting).toMatchObject({ cause: "rate-limited", since: 0, until: 100 })
    // The window opens at 100: b alone goes back to the heap (SPEC §20.2, one start a window).
    expect(k.nextSlot()).toBe(100)
    // An end before the take does not let c go too: b, let go, is not started yet.
    k.complete(a as Kernel.Run<string>, Task.succeeded, 100, false)
    expect(k.stats().waiting["rate-limited"]).toBe(2)
    expect(take(k, 100).map((r) => r.job)).toEqual(["b"])
    // c and d were never let go and queued again: they have waited since 0, until 200.
    expect(k.info("c")?.waiting).toMatchObject({ cause: "rate-limited", since: 0, until: 200 })
    expect(k.info("d")?.waiting).toMatchObject({ cause: "rate-limited", since: 0, until: 200 })
    expect(k.stats().heapEntries).toBe(0)
    k.checkInvariants()
  })

  it("a rate waiter let go and then cancelled hands its start to the next waiter", () => {
    const k = kernel({ groups: { g: { concurrency: 5, rate: { max: 1, per: 100 } } } })
    for (const id of ["a", "b", "c"]) k.schedule({ id, job: id, schedule: once(0), group: "g" }, 0)
    const [a] = take(k, 0)
    k.complete(a as Kernel.Run<string>, Task.succeeded, 100, false)
    expect(k.stats().waiting["rate-limited"]).toBe(1)
    expect(k.cancel("b", 100)).toBe(true)
    expect(take(k, 100).map((r) => [r.job, r.startedAt])).toEqual([["c", 100]])
    k.checkInvariants()
  })

  it("dead waiters are compacted away once more than half of the heap's and queues' entries are dead", () => {
    const k = kernel({ groups: { g: { concurrency: 1 } } })
    k.schedule({ id: "run", job: "run", schedule: once(0), group: "g" }, 0)
    for (let n = 0; n < 10; n++)
      k.schedule({ id: `w${n}`, job: `w${n}`, schedule: once(0), group: "g" }, 0)
    const [run] = take(k, 0)
    // Ten queued, none in the heap: five dead are half, the sixth compacts.
    for (let n = 0; n < 5; n++) k.cancel(`w${n}`, 0)
    expect(k.stats().deadEntries).toBe(5)
    k.cancel("w5", 0)
    expect(k.stats().deadEntries).toBe(0)
    // w6 let go and taken leaves three queued: one dead is not half, two are more.
    k.complete(run as Kernel.Run<string>, Task.succeeded, 1, false)
    expect(take(k, 1).map((r) => r.job)).toEqual(["w6"])
    k.cancel("w7", 1)
    expect(k.stats().deadEntries).toBe(1)
    k.cancel("w8", 1)
    expect(k.stats().deadEntries).toBe(0)
    k.checkInvariants()
  })

  it("a waiter paused, then resumed when its scope has room, waits no more", () => {
    const k = kernel({ groups: { g: { concurrency: 1 } } })
    for (const id of ["a", "b"]) k.schedule({ id, job: id, schedule: once(1), group: "g" }, 0)
    const [a] = take(k, 1)
    expect(k.info("b")?.waiting?.cause).toBe("concurrency")
    k.pause("b", 2)
    k.complete(a as Kernel.Run<string>, Task.succeeded, 3, false)
    k.resume("b", 4)
    expect(k.info("b")?.waiting).toBeUndefined()
    expect(take(k, 4).map((r) => r.job)).toEqual(["b"])
  })

  it("a waiter on its group whose key's state was dropped meanwhile still shows its wait", () => {
    const k = kernel({ groups: { g: { concurrency: 1 } }, keys: { concurrency: 5 } })
    k.schedule({ id: "r", job: "r", schedule: once(0), group: "g" }, 0)
    k.schedule({ id: "k1", job: "k1", schedule: once(0), key: "k" }, 0)
    k.schedule({ id: "w", job: "w", schedule: once(1), group: "g", key: "k" }, 0)
    const runs = take(k, 1)
    expect(runs.map((r) => r.job)).toEqual(["r", "k1"])
    expect(k.info("w")?.waiting?.scope).toBe("group:g")
    k.complete(runs[1] as Kernel.Run<string>, Task.succeeded, 2, false)
    expect(k.stats().scopes).toBe(1)
    expect(k.info("w")?.waiting).toMatchObject({ cause: "concurrency", scope: "group:g" })
    // Let go by its group, not taken yet: its wait is read past the group, to the dropped key.
    k.complete(runs[0] as Kernel.Run<string>, Task.succeeded, 3, false)
    expect(k.info("w")?.waiting?.scope).toBe("group:g")
    expect(take(k, 3).map((r) => r.job)).toEqual(["w"])
    k.checkInvariants()
  })
})
