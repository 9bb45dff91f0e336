/**
 * `checkInvariants` (SPEC §14) is the tests' witness that the kernel's structures agree: a check
 * that silently passes a broken state would let every other test pass over a corrupted kernel.
 * Each test here builds a valid state (which the checker must accept), breaks exactly one
 * invariant by hand, and requires the checker to reject it with a message naming what broke.
 */
import { describe, expect, it } from "vitest"
import { Errors, Kernel, Lifecycle, Schedule, Task } from "../src/index.ts"
import type { Breakers } from "../src/internal/breakers.ts"
import type { Rows } from "../src/internal/rows.ts"

/** The kernel's private structures, reached only to corrupt them on purpose. */
const inside = <J>(k: Kernel.Kernel<J>) =>
  k as unknown as { readonly rows: Rows<J>; readonly circuits: Breakers<J> }

const rejects = <J>(k: Kernel.Kernel<J>, message: RegExp): void => {
  let thrown: unknown
  try {
    k.checkInvariants()
  } catch (e) {
    thrown = e
  }
  expect(thrown).toBeInstanceOf(Errors.InvariantViolation)
  expect((thrown as Errors.InvariantViolation).message).toMatch(message)
}

const row = <J>(k: Kernel.Kernel<J>, id: string): number => {
  const i = inside(k).rows.lookup(id)
  if (i < 0) throw new Error(`no row for ${id}`)
  return i
}

const failed: Task.Outcome = { kind: "failed", error: "boom" }

const take = <J>(k: Kernel.Kernel<J>, now: number): Kernel.Run<J> => {
  const run = k.takeDue(now)
  if (run === undefined) throw new Error(`nothing due at ${now}`)
  return run
}

describe("checkInvariants rejects a broken heap, table or count (SPEC §14)", () => {
  it("a heap slot that is not a whole ms", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(10) }, 0)
    k.checkInvariants()
    ;(inside(k).rows.heap as unknown as { keys: Float64Array }).keys[0] = 10.5
    rejects(k, /heap slot 10\.5 at 0 is not a safe integer/)
  })

  it("a paused task without a reason, or without its job", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10) }, 0)
    k.pause("a", 1)
    k.checkInvariants()
    const { rows } = inside(k)
    const i = row(k, "a")
    const extra = rows.t.extra(i)
    if (extra === undefined) throw new Error("a paused task has a side object")
    extra.pausedReason = undefined
    rejects(k, new RegExp(`paused task row ${i} has no reason`))
    extra.pausedReason = "manual"
    k.checkInvariants()
    rows.t.setJob(i, undefined)
    rejects(k, new RegExp(`paused task row ${i} lost its job`))
  })

  it("a pause request on a task that is not running", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10) }, 0)
    const { rows } = inside(k)
    const i = row(k, "a")
    rows.ensureExtra(i).pauseRequest = "manual"
    rejects(k, new RegExp(`task row ${i} is scheduled with a pause request`))
  })

  it("a pause request on a running task is its own (valid) state", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10) }, 0)
    take(k, 0)
    expect(k.pause("a", 1)).toBe(true)
    expect(k.info("a")).toMatchObject({ state: "running", pausedReason: "manual" })
    k.checkInvariants()
  })

  it("states that do not sum to accepted - removed", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(10) }, 0)
    inside(k).rows.accepted += 1
    rejects(k, /states sum to 1, accepted - removed = 2/)
  })

  it("a task counted in another state than its row's", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(10) }, 0)
    const { rows } = inside(k)
    rows.bump(Lifecycle.SCHEDULED, -1)
    rows.bump(Lifecycle.PAUSED, 1)
    rejects(k, /count of scheduled is 0, table has 1/)
  })

  it("two live heap entries for one task", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(10) }, 0)
    const { rows } = inside(k)
    const i = row(k, "a")
    rows.heap.push(10, rows.t.ticket(i), i)
    rejects(k, new RegExp(`task row ${i} has two live heap entries`))
  })

  it("a live entry at another slot than its row's", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(10) }, 0)
    const { rows } = inside(k)
    const i = row(k, "a")
    rows.t.setSlot(i, 99)
    rejects(k, new RegExp(`task row ${i} is due 99, its entry says 10`))
  })

  it("a scheduled task without a live entry", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(10) }, 0)
    const { rows } = inside(k)
    // Its one entry no longer carries the row's order key, so it reads as dead.
    rows.t.setTicket(row(k, "a"), 12_345)
    rejects(k, /0 live heap entries for 1 scheduled tasks/)
  })

  it("fewer runs in flight than running tasks; as many is valid", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(10) }, 0)
    take(k, 10)
    const { rows } = inside(k)
    expect(rows.inFlight).toBe(1)
    k.checkInvariants()
    rows.inFlight = 0
    rejects(k, /0 runs in flight for 1 running tasks/)
  })

  it("an id mapped to another task's row", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(10) }, 0)
    inside(k).rows.ids.set("ghost", row(k, "a"))
    rejects(k, /id ghost maps to row 0 of another task/)
  })

  it("an id mapped to an evicted row, even one whose side object still names it", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxFinished: 0 } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(10) }, 0)
    const i = row(k, "a")
    k.complete(take(k, 10), Task.succeeded, 10, false)
    expect(k.status("a")).toBe("unknown")
    k.checkInvariants()
    const { rows } = inside(k)
    expect(rows.present(i)).toBe(false)
    rows.ids.set("a", i)
    rows.t.setExtra(i, rows.ensureExtra(i))
    ;(rows.t.extra(i) as { id: string | undefined }).id = "a"
    rejects(k, new RegExp(`id a maps to row ${i} of another task`))
  })

  it("a row free for reuse that holds a task", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxFinished: 0 } })
    k.schedule({ job: "a", schedule: Schedule.once(10) }, 0)
    k.complete(take(k, 10), Task.succeeded, 10, false)
    const { rows } = inside(k)
    expect(rows.ring.free).toBe(1)
    k.checkInvariants()
    // Row 0 is evicted (its ticket is below the ring's head): make it retained again, and count
    // it, so that only the free list disagrees.
    rows.t.setTicket(0, rows.ring.head)
    rows.bump(Lifecycle.DONE, 1)
    rows.accepted += 1
    rejects(k, /row 0 is free for reuse but holds a task/)
  })
})

describe("checkInvariants rejects a broken breaker (SPEC §14, §7)", () => {
  const policy = { b: { failures: 1, coolDown: 10 } }

  /** Breaker b open at 0 (half-open at 10), `f` failed, `h` held (paused by the breaker). */
  const opened = () => {
    const k = new Kernel.Kernel<string>({ breakers: policy })
    k.schedule({ id: "f", job: "f", schedule: Schedule.once(0), breaker: "b" }, 0)
    k.schedule({ id: "h", job: "h", schedule: Schedule.fixedRate(50), breaker: "b" }, 0)
    k.complete(take(k, 0), failed, 0, false)
    expect(k.breaker("b")).toMatchObject({ state: "open", held: ["h"] })
    k.checkInvariants()
    const cell = inside(k).circuits.named.get("b")
    if (cell === undefined) throw new Error("no cell b")
    return { k, cell }
  }

  it("a closed breaker with a half-open time", () => {
    const k = new Kernel.Kernel<string>({ breakers: policy })
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10), breaker: "b" }, 0)
    k.checkInvariants()
    const cell = inside(k).circuits.named.get("b")
    if (cell === undefined) throw new Error("no cell b")
    cell.halfOpenAt = 50
    rejects(k, /breaker b is closed with a half-open time/)
  })

  it("a breaker timer that disagrees with its open breaker", () => {
    const { k } = opened()
    expect(inside(k).circuits.at).toBe(10)
    inside(k).circuits.at = 11
    rejects(k, /breaker timer says 11, open breakers say 10/)
  })

  it("the timer follows the earliest of two open breakers", () => {
    const k = new Kernel.Kernel<string>({
      breakers: { b: { failures: 1, coolDown: 10 }, c: { failures: 1, coolDown: 30 } },
    })
    k.schedule({ id: "f", job: "f", schedule: Schedule.once(0), breaker: "c" }, 0)
    k.schedule({ id: "g", job: "g", schedule: Schedule.once(5), breaker: "b" }, 0)
    k.schedule({ id: "h", job: "h", schedule: Schedule.fixedRate(50), breaker: "b" }, 0)
    k.schedule({ id: "i", job: "i", schedule: Schedule.fixedRate(50), breaker: "c" }, 0)
    k.complete(take(k, 0), failed, 0, false) // c open until 30
    k.complete(take(k, 5), failed, 5, false) // b open until 15
    expect(inside(k).circuits.at).toBe(15)
    k.checkInvariants()
  })

  it("a member row that is not a live task of the breaker", () => {
    const { k, cell } = opened()
    k.schedule({ id: "x", job: "x", schedule: Schedule.fixedRate(50) }, 0)
    k.checkInvariants()
    const x = row(k, "x")
    cell.members.add(x)
    rejects(k, new RegExp(`breaker b lists row ${x}, which is not its live task`))
  })

  it("a member row whose task is done", () => {
    const { k, cell } = opened()
    const f = row(k, "f")
    expect(k.status("f")).toBe("failed")
    cell.members.add(f)
    rejects(k, new RegExp(`breaker b lists row ${f}, which is not its live task`))
  })

  it("a member row whose task succeeded (done, the first final state)", () => {
    const k = new Kernel.Kernel<string>({ breakers: policy })
    k.schedule({ id: "s", job: "s", schedule: Schedule.once(0), breaker: "b" }, 0)
    k.schedule({ id: "h", job: "h", schedule: Schedule.fixedRate(50), breaker: "b" }, 0)
    k.complete(take(k, 0), Task.succeeded, 0, false)
    expect(k.status("s")).toBe("done")
    k.checkInvariants()
    const cell = inside(k).circuits.named.get("b")
    if (cell === undefined) throw new Error("no cell b")
    const s = row(k, "s")
    cell.members.add(s)
    rejects(k, new RegExp(`breaker b lists row ${s}, which is not its live task`))
  })

  it("a half-open breaker's probe still held", () => {
    const k = new Kernel.Kernel<string>({ breakers: policy })
    k.schedule({ id: "f", job: "f", schedule: Schedule.once(0), breaker: "b" }, 0)
    k.schedule({ id: "p", job: "p", schedule: Schedule.once(20), breaker: "b" }, 0)
    k.schedule({ id: "q", job: "q", schedule: Schedule.once(40), breaker: "b" }, 0)
    k.complete(take(k, 0), failed, 0, false)
    expect(k.takeDue(10)).toBeUndefined()
    expect(k.breaker("b")).toMatchObject({ state: "half-open", probe: "p", held: ["q"] })
    k.checkInvariants()
    const { rows, circuits } = inside(k)
    const cell = circuits.named.get("b")
    if (cell === undefined) throw new Error("no cell b")
    const q = row(k, "q")
    cell.probe = q
    cell.probeGen = rows.t.gen(q)
    rejects(k, new RegExp(`breaker b's probe row ${q} is still held`))
  })

  it("a probe while closed, even on row 0", () => {
    const k = new Kernel.Kernel<string>({ breakers: policy })
    k.schedule({ id: "a", job: "a", schedule: Schedule.fixedRate(10), breaker: "b" }, 0)
    const cell = inside(k).circuits.named.get("b")
    if (cell === undefined) throw new Error("no cell b")
    expect(row(k, "a")).toBe(0)
    cell.probe = 0
    rejects(k, /breaker b has a probe while closed/)
  })
})

describe("checkInvariants on rows without a side object", () => {
  it("a paused task whose side object is gone is reported, not a TypeError", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ job: "a", schedule: Schedule.fixedRate(10) }, 0)
    k.pause("#0.1", 1)
    inside(k).rows.t.setExtra(0, undefined)
    rejects(k, /paused task row 0 has no reason/)
  })

  it("an id mapped to a plain row, or a breaker listing one, is reported", () => {
    const k = new Kernel.Kernel<string>({ breakers: { b: { failures: 1, coolDown: 10 } } })
    // A one-shot with a generated id and no options has no side object.
    k.schedule({ job: "plain", schedule: Schedule.once(10) }, 0)
    k.schedule({ id: "m", job: "m", schedule: Schedule.fixedRate(10), breaker: "b" }, 0)
    k.checkInvariants()
    const { rows, circuits } = inside(k)
    expect(rows.t.extra(0)).toBeUndefined()
    rows.ids.set("ghost", 0)
    rejects(k, /id ghost maps to row 0 of another task/)
    rows.ids.delete("ghost")
    circuits.named.get("b")?.members.add(0)
    rejects(k, /breaker b lists row 0, which is not its live task/)
  })

  it("the sum message names accepted - removed", () => {
    const k = new Kernel.Kernel<string>({ retention: { maxFinished: 0 } })
    k.schedule({ job: "a", schedule: Schedule.once(0) }, 0)
    k.complete(take(k, 0), Task.succeeded, 0, false)
    k.schedule({ job: "b", schedule: Schedule.once(5) }, 0)
    k.schedule({ job: "c", schedule: Schedule.once(5) }, 0)
    expect(k.stats()).toMatchObject({ accepted: 3, removed: 1, scheduled: 2 })
    inside(k).rows.accepted += 1
    rejects(k, /states sum to 2, accepted - removed = 3/)
  })

  it("a held task in the probe's row but of another generation is not the probe", () => {
    const k = new Kernel.Kernel<string>({ breakers: { b: { failures: 1, coolDown: 10 } } })
    k.schedule({ id: "f", job: "f", schedule: Schedule.once(0), breaker: "b" }, 0)
    k.schedule({ id: "p", job: "p", schedule: Schedule.once(20), breaker: "b" }, 0)
    k.schedule({ id: "q", job: "q", schedule: Schedule.once(40), breaker: "b" }, 0)
    k.complete(take(k, 0), failed, 0, false)
    expect(k.takeDue(10)).toBeUndefined()
    const { rows, circuits } = inside(k)
    const cell = circuits.named.get("b")
    if (cell === undefined) throw new Error("no cell b")
    const q = row(k, "q")
    cell.probe = q
    cell.probeGen = rows.t.gen(q) + 1
    k.checkInvariants()
  })
})
