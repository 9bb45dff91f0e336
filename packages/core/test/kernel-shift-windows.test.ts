/**
 * `Kernel.shift` (SPEC §2.6) and the windows that count elapsed time: a rate limit's recent
 * starts and its waiters (SPEC §20.2), a breaker's cool-down (SPEC §7) and a throttle window
 * (SPEC §20.3) move with a step of the wall clock, as the slots do, so none opens or closes early
 * or late because of it.
 */
import { describe, expect, it } from "vitest"
import { Kernel, Schedule, Task } from "../src/index.ts"

const HOUR = 3_600_000
const T = 10 * HOUR

const rated = () =>
  new Kernel.Kernel<string>({ limits: { groups: { api: { rate: { max: 1, per: 1000 } } } } })

const runOnce = (k: Kernel.Kernel<string>, id: string, at: number) => {
  k.schedule({ id, job: id, schedule: Schedule.once(0), group: "api" }, at)
  const run = k.takeDue(at) as Kernel.Run<string>
  expect(run).toMatchObject({ id })
  k.complete(run, Task.succeeded, at, false)
}

describe("shift: rate windows (SPEC §2.6, §20.2)", () => {
  it("after a step back, the window closes a `per` after the last start, not a step later", () => {
    const k = rated()
    runOnce(k, "a", T)
    k.shift(-HOUR)
    const now = T - HOUR // a's start, in the stepped frame
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(0), group: "api" }, now + 1)
    expect(k.takeDue(now + 999)).toBeUndefined()
    expect(k.nextSlot()).toBe(now + 1000)
    expect(k.takeDue(now + 1000)).toMatchObject({ id: "b", startedAt: now + 1000 })
  })

  it("after a step ahead, a waiter still waits out the window: no burst over the limit", () => {
    const k = rated()
    runOnce(k, "a", 0)
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(0), group: "api" }, 1)
    expect(k.takeDue(1)).toBeUndefined()
    expect(k.info("b")?.waiting).toEqual({
      cause: "rate-limited",
      scope: "group:api",
      since: 1,
      until: 1000,
    })
    k.shift(5000)
    expect(k.info("b")?.waiting).toEqual({
      cause: "rate-limited",
      scope: "group:api",
      since: 5001,
      until: 6000,
    })
    expect(k.takeDue(5999)).toBeUndefined()
    expect(k.takeDue(6000)).toMatchObject({ id: "b", startedAt: 6000 })
  })

  it("a waiter queued before a step back goes back to the heap at its moved slot", () => {
    const k = new Kernel.Kernel<string>({ limits: { groups: { db: { concurrency: 1 } } } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(0), group: "db" }, T)
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(10), group: "db" }, T)
    const a = k.takeDue(T + 10) as Kernel.Run<string>
    expect(k.takeDue(T + 10)).toBeUndefined() // b waits on the group
    k.shift(-HOUR)
    const now = T - HOUR + 20
    k.complete(a, Task.succeeded, now, false)
    expect(k.takeDue(now)).toMatchObject({ id: "b", slot: T - HOUR + 10 })
  })

  it("a waiter let go before a step back and not yet taken starts at the clock, not a step ahead", () => {
    const k = new Kernel.Kernel<string>({ limits: { groups: { db: { concurrency: 1 } } } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(0), group: "db" }, T)
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(10), group: "db" }, T)
    const a = k.takeDue(T) as Kernel.Run<string>
    expect(k.takeDue(T + 10)).toBeUndefined()
    k.complete(a, Task.succeeded, T + 20, false) // b is let go at 20: it starts no earlier
    k.shift(-HOUR)
    expect(k.takeDue(T - HOUR + 20)).toMatchObject({ id: "b", startedAt: T - HOUR + 20 })
  })

  it("so does one set aside by a manual run that ends after the step (SPEC §19.1)", () => {
    const k = new Kernel.Kernel<string>({ limits: { groups: { db: { concurrency: 1 } } } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(0), group: "db" }, T)
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(10), group: "db" }, T)
    const a = k.takeDue(T) as Kernel.Run<string>
    expect(k.takeDue(T + 10)).toBeUndefined()
    k.complete(a, Task.succeeded, T + 20, false)
    expect(k.trigger("b", T + 20)).toBe(true)
    const manual = k.takeDue(T + 20) as Kernel.Run<string>
    expect(manual).toMatchObject({ id: "b", manual: true })
    k.shift(-HOUR)
    const now = T - HOUR + 30
    k.complete(manual, Task.succeeded, now, false)
    expect(k.info("b")).toMatchObject({ state: "scheduled", scheduledFor: T - HOUR + 10 })
    expect(k.takeDue(now)).toMatchObject({ id: "b", startedAt: now })
  })

  it("a key's cell is forgotten once its newest start has left the window in the new frame", () => {
    const k = new Kernel.Kernel<string>({ limits: { keys: { rate: { max: 1, per: 1000 } } } })
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(0), key: "u1" }, T)
    k.complete(k.takeDue(T) as Kernel.Run<string>, Task.succeeded, T, false)
    expect(k.stats().scopes).toBe(1)
    k.shift(-HOUR)
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(5000) }, T - HOUR)
    k.complete(
      k.takeDue(T - HOUR + 5000) as Kernel.Run<string>,
      Task.succeeded,
      T - HOUR + 5000,
      false,
    )
    expect(k.stats().scopes).toBe(0)
  })
})

describe("shift: a breaker's cool-down (SPEC §2.6, §7)", () => {
  it("after a step back, an open breaker goes half-open a cool-down after it opened", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule(
      {
        id: "r",
        job: "r",
        schedule: Schedule.fixedDelay(10),
        breaker: { failures: 1, coolDown: 1000 },
      },
      T,
    )
    const run = k.takeDue(T + 10) as Kernel.Run<string>
    k.complete(run, { kind: "failed", error: "down" }, T + 10, false)
    expect(k.breaker("r")).toMatchObject({ state: "open", openedAt: T + 10, halfOpenAt: T + 1010 })
    k.shift(-HOUR)
    const opened = T - HOUR + 10
    expect(k.breaker("r")).toMatchObject({
      state: "open",
      openedAt: opened,
      halfOpenAt: opened + 1000,
    })
    expect(k.nextSlot()).toBe(opened + 1000)
    expect(k.takeDue(opened + 999)).toBeUndefined()
    expect(k.takeDue(opened + 1000)).toMatchObject({ id: "r" })
    expect(k.breaker("r")?.state).toBe("half-open")
  })
})

describe("shift: a throttle window (SPEC §2.6, §20.3)", () => {
  it("after a step back, the window ends as long after the acceptance as it did", () => {
    const k = new Kernel.Kernel<string>()
    const dedup = { key: "mail", mode: "throttle", window: 1000 } as const
    expect(
      k.scheduleDeduplicated({ job: "a", schedule: Schedule.once(0), dedup }, T),
    ).toMatchObject({
      outcome: "created",
    })
    k.shift(-HOUR)
    const now = T - HOUR
    expect(
      k.scheduleDeduplicated({ job: "b", schedule: Schedule.once(0), dedup }, now + 999),
    ).toMatchObject({
      outcome: "deduplicated",
    })
    expect(
      k.scheduleDeduplicated({ job: "c", schedule: Schedule.once(0), dedup }, now + 1000),
    ).toMatchObject({
      outcome: "created",
    })
  })

  it("after a step ahead, the window still holds for its length", () => {
    const k = new Kernel.Kernel<string>()
    const dedup = { key: "mail", mode: "throttle", window: 1000 } as const
    k.scheduleDeduplicated({ job: "a", schedule: Schedule.once(0), dedup }, 0)
    k.shift(HOUR)
    expect(
      k.scheduleDeduplicated({ job: "b", schedule: Schedule.once(0), dedup }, HOUR + 999),
    ).toMatchObject({
      outcome: "deduplicated",
    })
  })
})

describe("shift: what a step leaves as it was (SPEC §2.6)", () => {
  it("a waiter queued on a rate window before a step back is let go when the window opens in the new frame", () => {
    const k = rated()
    runOnce(k, "a", T)
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(1), group: "api" }, T)
    expect(k.takeDue(T + 1)).toBeUndefined() // b waits for the window, open at T + 1000
    k.shift(-HOUR)
    const now = T - HOUR
    expect(k.nextSlot()).toBe(now + 1000)
    expect(k.takeDue(now + 999)).toBeUndefined()
    expect(k.takeDue(now + 1000)).toMatchObject({ id: "b", startedAt: now + 1000 })
  })

  it("a breaker that never opened has no opening time; a concurrency wait has no end", () => {
    const k = new Kernel.Kernel<string>({
      limits: { groups: { db: { concurrency: 1 } } },
      breakers: { smtp: { failures: 3, coolDown: 1000 } },
    })
    k.schedule({ id: "a", job: "a", schedule: Schedule.once(0), group: "db" }, 0)
    k.schedule({ id: "b", job: "b", schedule: Schedule.once(0), group: "db" }, 0)
    for (let n = 0; n < 4; n++) k.takeDue(0)
    expect(k.status("a")).toBe("running")
    expect(k.info("b")?.waiting?.cause).toBe("concurrency")
    k.shift(-500)
    expect(k.breaker("smtp")).toMatchObject({ state: "closed", openedAt: undefined })
    expect(k.breaker("smtp")?.halfOpenAt).toBeUndefined()
    expect(k.info("b")?.waiting).toEqual({ cause: "concurrency", scope: "group:db", since: -500 })
  })

  it("a zero or unsafe step changes nothing", () => {
    const k = new Kernel.Kernel<string>()
    k.schedule({ id: "d", job: "d", schedule: Schedule.once(100) }, 0)
    for (const delta of [0, 0.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      k.shift(delta)
      expect(k.info("d")?.scheduledFor).toBe(100)
      expect(k.nextSlot()).toBe(100)
    }
  })
})
