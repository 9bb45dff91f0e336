/**
 * SPEC §20: flow control's edges, seen from outside: the counts that decide compaction after a
 * dead waiter leaves its queue, and the wait shown by a waiter let go but not taken yet.
 */
import { describe, expect, it } from "vitest"
import { Kernel, type Rules, Schedule, Task } from "../../src/index.ts"

type K = Kernel.Kernel<string>
const once = (at: number) => Schedule.once(at)
const kernel = (limits: Rules.Limits) => new Kernel.Kernel<string>({ limits })
const take = (k: K, now: number) => {
  const out: Array<Kernel.Run<string>> = []
  for (let r = k.takeDue(now); r !== undefined; r = k.takeDue(now)) out.push(r)
  return out
}

describe("SPEC §20.1 a dead waiter dropped at its queue's head leaves the entry counts exact", () => {
  it("compaction still comes once more than half of what is left is dead", () => {
    const k = kernel({ groups: { g: { concurrency: 1 } } })
    k.schedule({ id: "run", job: "run", schedule: once(0), group: "g" }, 0)
    for (let n = 0; n < 10; n++)
      k.schedule({ id: `w${n}`, job: `w${n}`, schedule: once(0), group: "g" }, 0)
    const [run] = take(k, 0)
    // w0 dies at the head of the queue; the end drops it there and lets w1 go.
    expect(k.cancel("w0", 0)).toBe(true)
    expect(k.stats().deadEntries).toBe(1)
    k.complete(run as Kernel.Run<string>, Task.succeeded, 1, false)
    expect(k.stats().deadEntries).toBe(0)
    expect(take(k, 1).map((r) => r.job)).toEqual(["w1"])
    // Eight entries are left (w2..w9, queued): four dead are half, the fifth compacts.
    for (const id of ["w2", "w3", "w4", "w5"]) k.cancel(id, 1)
    expect(k.stats().deadEntries).toBe(4)
    k.cancel("w6", 1)
    expect(k.stats().deadEntries).toBe(0)
    k.checkInvariants()
  })
})

describe("SPEC §20.4 a waiter let go and not taken yet shows the wait it was queued with", () => {
  it("a concurrency waiter let go after its window passed shows no rate wait for a past instant", () => {
    const k = kernel({ groups: { g: { concurrency: 1, rate: { max: 1, per: 10 } } } })
    for (const id of ["a", "b"]) k.schedule({ id, job: id, schedule: once(0), group: "g" }, 0)
    const [a] = take(k, 0)
    const queued = { cause: "concurrency", scope: "group:g", since: 0, until: undefined }
    expect(k.info("b")?.waiting).toEqual(queued)
    // At 50 the window (one start in 10 ms) has long passed: the end lets b go at once.
    k.complete(a as Kernel.Run<string>, Task.succeeded, 50, false)
    expect(k.info("b")?.waiting).toEqual(queued)
    expect(take(k, 50).map((r) => [r.job, r.startedAt])).toEqual([["b", 50]])
    expect(k.info("b")?.waiting).toBeUndefined()
  })
})

describe("SPEC §20.1 places handed back together are let go together", () => {
  it("two let-go waiters moved by an update free both places at the next release", () => {
    const k = kernel({ groups: { g: { concurrency: 2 } } })
    for (const id of ["r1", "r2", "w1", "w2", "w3", "w4", "w5"])
      k.schedule({ id, job: id, schedule: once(0), group: "g" }, 0)
    const runs = take(k, 0)
    expect(runs.map((r) => r.job)).toEqual(["r1", "r2"])
    for (const run of runs) k.complete(run, Task.succeeded, 1, false)
    // w1 and w2 are let go; moved to a later slot they no longer hold the places (stale).
    expect(k.stats().waiting.concurrency).toBe(3)
    for (const id of ["w1", "w2"]) k.update(id, { schedule: once(50) }, 1)
    // w3 cancelled at the head asks the group again: both places go, to w4 and w5 at once.
    k.cancel("w3", 1)
    expect(k.stats().waiting.concurrency).toBe(0)
    expect(take(k, 1).map((r) => r.job)).toEqual(["w4", "w5"])
    k.checkInvariants()
  })
})

describe("SPEC §20.2 a rate waiter whose key's state was dropped still shows its rate wait", () => {
  it("the dropped key is passed over; the group's window decides", () => {
    const k = kernel({ groups: { g: { rate: { max: 1, per: 100 } } }, keys: { concurrency: 5 } })
    k.schedule({ id: "r", job: "r", schedule: once(0), group: "g" }, 0)
    k.schedule({ id: "k1", job: "k1", schedule: once(0), key: "k" }, 0)
    k.schedule({ id: "w", job: "w", schedule: once(0), group: "g", key: "k" }, 0)
    const runs = take(k, 0)
    expect(runs.map((r) => r.job)).toEqual(["r", "k1"])
    const wait = { cause: "rate-limited", scope: "group:g", since: 0, until: 100 }
    expect(k.info("w")?.waiting).toEqual(wait)
    // k1's end drops the key's state (no run, no waiter, no rate window): only g's is left.
    k.complete(runs[1] as Kernel.Run<string>, Task.succeeded, 2, false)
    expect(k.stats().scopes).toBe(1)
    expect(k.info("w")?.waiting).toEqual(wait)
    expect(k.explain("w", 2)?.waiting?.for).toContain("group:g's rate window to open at 100")
    expect(take(k, 100).map((r) => [r.job, r.startedAt])).toEqual([["w", 100]])
    k.checkInvariants()
  })
})

describe("SPEC §20.1 let-go places after the queue empties", () => {
  it("one live waiter and two free places: it alone is let go, and the queue is left empty", () => {
    const k = kernel({ groups: { g: { concurrency: 2 } } })
    for (const id of ["r1", "r2", "w1", "w2", "w3", "w4"])
      k.schedule({ id, job: id, schedule: once(0), group: "g" }, 0)
    const runs = take(k, 0)
    for (const run of runs) k.complete(run, Task.succeeded, 1, false)
    // w1 and w2, let go, are moved away; w3 cancelled at the head: two places, one waiter (w4).
    for (const id of ["w1", "w2"]) k.update(id, { schedule: once(50) }, 1)
    k.cancel("w3", 1)
    expect(k.stats().waiting.concurrency).toBe(0)
    expect(take(k, 1).map((r) => r.job)).toEqual(["w4"])
    k.checkInvariants()
  })

  it("a let-go waiter cancelled when nothing else waits still frees its place at the next release", () => {
    const k = kernel({ groups: { g: { concurrency: 2 } } })
    for (const id of ["r1", "r2", "w1"])
      k.schedule({ id, job: id, schedule: once(0), group: "g" }, 0)
    const [r1, r2] = take(k, 0)
    k.complete(r1 as Kernel.Run<string>, Task.succeeded, 1, false)
    // w1 was let go by r1's end; cancelled, its place is pruned at r2's end, not lost.
    expect(k.cancel("w1", 1)).toBe(true)
    for (const id of ["w2", "w3"]) k.schedule({ id, job: id, schedule: once(1), group: "g" }, 1)
    expect(take(k, 2).map((r) => r.job)).toEqual(["w2"])
    expect(k.info("w3")?.waiting?.cause).toBe("concurrency")
    k.complete(r2 as Kernel.Run<string>, Task.succeeded, 3, false)
    expect(take(k, 3).map((r) => r.job)).toEqual(["w3"])
    k.checkInvariants()
  })
})
