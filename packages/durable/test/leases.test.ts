/**
 * Leases on their own (`src/internal/leases.ts`): the guard that interrupts a run whose lease
 * this process has not renewed for a whole lease and reports finished runs whose commit is
 * late, and the renewer, over a real table of held runs, under `TestClock` with a monotonic
 * clock the test sets (SPEC §5.5).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Logger, Metric } from "effect"
import { TestClock } from "effect/testing"
import { counters, type Env } from "../src/internal/env.ts"
import * as Held from "../src/internal/held.ts"
import * as Leases from "../src/internal/leases.ts"
import type { TaskRow } from "../src/internal/model.ts"

const LEASE = 300

/** Only the fields leases read. */
const row = (id: string): TaskRow => ({ id, fence: 1, slot: 1_000 }) as unknown as TaskRow

/** A process whose held runs are watched, its monotonic clock at `clock.mono`. */
const setup = (renew: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>, string>) =>
  Effect.gen(function* () {
    const c = counters()
    const held = yield* Held.make(c)
    const clock = { mono: 0 }
    const interrupted: Array<string> = []
    const renewals: Array<{ ids: ReadonlyArray<string>; now: number; lease: number }> = []
    const outage: Array<string> = []
    let wakes = 0
    const env = {
      held,
      counters: c,
      owner: "p1",
      now: () => 50_000,
      mono: () => clock.mono,
      options: { leaseMs: LEASE },
      pool: {
        interrupt: (which: (h: Held.Held) => boolean) =>
          Effect.sync(() => {
            for (const h of held.values()) if (which(h)) interrupted.push(h.row.id)
          }),
      },
      wakeup: { wake: () => wakes++ },
      store: {
        renew: (
          owner: string,
          list: ReadonlyArray<{ id: string; fence: number }>,
          now: number,
          lease: number,
        ) => {
          expect(owner).toBe("p1")
          renewals.push({ ids: list.map((h) => h.id), now, lease })
          return renew(list.map((h) => h.id))
        },
      },
      outage: {
        worked: Effect.sync(() => outage.push("worked")),
        failed: (e: unknown) => Effect.sync(() => outage.push(`failed: ${String(e)}`)),
      },
    } as unknown as Env
    return {
      env,
      held,
      c,
      clock,
      interrupted,
      renewals,
      outage,
      wakes: () => wakes,
    }
  })

/** A logger keeping each warning's text. */
const capture = () => {
  const warnings: Array<string> = []
  const logger = Logger.make((o) => {
    if (o.logLevel !== "Warn") return
    const parts = Array.isArray(o.message) ? o.message : [o.message]
    warnings.push(parts.map((p) => String(p)).join(" "))
  })
  return { warnings, layer: Logger.layer([logger]) }
}

/** Lets the forked watcher run up to its wait (it parks on the `TestClock`). */
const turns = Effect.gen(function* () {
  for (let k = 0; k < 20; k++) yield* Effect.yieldNow
})

/** A running run of `id`, claimed at monotonic `at`. */
const running = (held: Held.HeldRuns, id: string, at: number) => {
  const h = held.add(row(id), 1, at)
  h.started = true
  return h
}

describe("the lease guard's check", () => {
  it.effect("interrupts a run not renewed for a whole lease, and only it", () => {
    const log = capture()
    return Effect.gen(function* () {
      const s = yield* setup(() => Effect.succeed(new Set()))
      yield* Leases.dropLapsed(s.env)
      expect(s.interrupted).toEqual([])
      const old = running(s.held, "old", 0)
      const fresh = running(s.held, "fresh", 1)
      const done = running(s.held, "done", 0)
      s.held.finish(done, 10)
      const lost = running(s.held, "lost", 0)
      lost.lost = true
      s.clock.mono = LEASE
      yield* Leases.dropLapsed(s.env)
      expect(s.interrupted).toEqual(["old"])
      expect([old.lost, old.releasing, fresh.lost, fresh.releasing]).toEqual([
        true,
        true,
        false,
        false,
      ])
      expect(s.c.leasesLost).toBe(1)
      expect(log.warnings).toEqual([
        "tickwork durable: the lease of task old (slot 1000) was not renewed for 300 ms, more than the lease of 300 ms (this process stalled or the store did not answer); another process may run it now: interrupting its run",
      ])
      // Once lost, it is not interrupted again.
      s.clock.mono = 2 * LEASE
      yield* Leases.dropLapsed(s.env)
      expect(s.interrupted).toEqual(["old", "fresh"])
      expect(s.c.leasesLost).toBe(2)
    }).pipe(Effect.provide(log.layer))
  })
})

describe("the lease guard (SPEC §5.5)", () => {
  it.effect("interrupts a lapsed run at its next look, every tenth of a lease", () =>
    Effect.gen(function* () {
      const s = yield* setup(() => Effect.succeed(new Set()))
      const guard = yield* Effect.forkChild(Leases.guard(s.env))
      running(s.held, "a", 0)
      yield* turns
      s.clock.mono = LEASE - 1
      yield* TestClock.adjust(LEASE / 10)
      expect(s.interrupted).toEqual([])
      s.clock.mono = LEASE
      yield* TestClock.adjust(LEASE / 10)
      expect(s.interrupted).toEqual(["a"])
      yield* Fiber.interrupt(guard)
    }),
  )

  it.effect(
    "reports a finished run not committed within a lease once, waking the dispatcher",
    () => {
      const log = capture()
      return Effect.gen(function* () {
        const s = yield* setup(() => Effect.succeed(new Set()))
        const counter = Metric.counter("tickwork_durable_uncommitted_runs_total", {
          description:
            "runs that finished but were not committed within a lease (the store did not answer)",
        })
        const before = (yield* Metric.value(counter)).count
        const guard = yield* Effect.forkChild(Leases.guard(s.env))
        const a = running(s.held, "a", 0)
        s.held.finish(a, 100)
        yield* turns
        s.clock.mono = 100 + LEASE - 1
        yield* TestClock.adjust(LEASE / 10)
        expect(s.c.uncommitted).toBe(0)
        s.clock.mono = 100 + LEASE
        yield* TestClock.adjust(LEASE / 10)
        expect([s.c.uncommitted, a.overdue, s.wakes()]).toEqual([1, true, 1])
        expect((yield* Metric.value(counter)).count - before).toBe(1)
        yield* TestClock.adjust(LEASE)
        expect(s.c.uncommitted).toBe(1)
        expect(log.warnings).toEqual([
          "tickwork durable: 1 finished run(s) not committed after 300 ms (the store does not answer; retrying): a@1000",
        ])
        // A finished run is not interrupted: only its commit is late.
        expect(s.interrupted).toEqual([])
        yield* Fiber.interrupt(guard)
      }).pipe(Effect.provide(log.layer))
    },
  )

  it.effect("names at most five late runs", () => {
    const log = capture()
    return Effect.gen(function* () {
      const s = yield* setup(() => Effect.succeed(new Set()))
      const guard = yield* Effect.forkChild(Leases.guard(s.env))
      for (const id of ["a", "b", "c", "d", "e", "f"]) s.held.finish(running(s.held, id, 0), 0)
      yield* turns
      s.clock.mono = LEASE
      yield* TestClock.adjust(LEASE / 10)
      expect(log.warnings).toEqual([
        "tickwork durable: 6 finished run(s) not committed after 300 ms (the store does not answer; retrying): a@1000, b@1000, c@1000, d@1000, e@1000, …",
      ])
      yield* Fiber.interrupt(guard)
    }).pipe(Effect.provide(log.layer))
  })
})

describe("the lease renewer", () => {
  it.effect(
    "renews the runs in flight every third of a lease; a run the store did not renew is lost",
    () => {
      const log = capture()
      return Effect.gen(function* () {
        const s = yield* setup((ids) => Effect.succeed(new Set(ids.filter((id) => id !== "b"))))
        const renewer = yield* Effect.forkChild(Leases.renewer(s.env))
        const a = running(s.held, "a", 0)
        const b = running(s.held, "b", 0)
        const done = running(s.held, "done", 0)
        s.held.finish(done, 0)
        yield* turns
        s.clock.mono = 90
        yield* TestClock.adjust(LEASE / 3 - 1)
        expect(s.renewals).toEqual([])
        yield* TestClock.adjust(1)
        expect(s.renewals).toEqual([{ ids: ["a", "b"], now: 50_000, lease: LEASE }])
        expect(s.outage).toEqual(["worked"])
        expect([a.renewedAt, a.lost, b.renewedAt, b.lost]).toEqual([90, false, 0, true])
        expect(s.interrupted).toEqual(["b"])
        expect(log.warnings).toEqual([
          "tickwork durable: lost the lease of task b (slot 1000); interrupting its run",
        ])
        // Next time only the live run is sent.
        yield* TestClock.adjust(LEASE / 3)
        expect(s.renewals.map((r) => r.ids)).toEqual([["a", "b"], ["a"]])
        yield* Fiber.interrupt(renewer)
      }).pipe(Effect.provide(log.layer))
    },
  )

  it.effect("a renewal the store fails is an outage: nothing is lost", () =>
    Effect.gen(function* () {
      const s = yield* setup(() => Effect.fail("down"))
      const renewer = yield* Effect.forkChild(Leases.renewer(s.env))
      const a = running(s.held, "a", 0)
      s.clock.mono = 90
      yield* TestClock.adjust(LEASE / 3)
      expect(s.outage).toEqual(["failed: down"])
      expect([a.renewedAt, a.lost]).toEqual([0, false])
      expect(s.interrupted).toEqual([])
      yield* Fiber.interrupt(renewer)
    }),
  )

  it.effect("drops a lapsed run before renewing, and sends nothing when none is live", () =>
    Effect.gen(function* () {
      const s = yield* setup((ids) => Effect.succeed(new Set(ids)))
      const renewer = yield* Effect.forkChild(Leases.renewer(s.env))
      running(s.held, "a", 0)
      s.clock.mono = LEASE
      yield* TestClock.adjust(LEASE / 3)
      expect(s.interrupted).toEqual(["a"])
      expect(s.renewals).toEqual([])
      yield* Fiber.interrupt(renewer)
    }),
  )
})

describe("leases, in full", () => {
  it.effect("the warning says how long the lease went unrenewed since its last renewal", () => {
    const log = capture()
    return Effect.gen(function* () {
      const s = yield* setup(() => Effect.succeed(new Set()))
      running(s.held, "a", 40)
      s.clock.mono = 40 + LEASE + 5
      yield* Leases.dropLapsed(s.env)
      expect(log.warnings[0]).toContain("was not renewed for 305 ms")
    }).pipe(Effect.provide(log.layer))
  })

  it.effect("the guard looks every tenth of a lease, not sooner", () =>
    Effect.gen(function* () {
      const s = yield* setup(() => Effect.succeed(new Set()))
      const guard = yield* Effect.forkChild(Leases.guard(s.env))
      running(s.held, "a", 0)
      yield* turns
      s.clock.mono = LEASE
      yield* TestClock.adjust(LEASE / 10 - 1)
      expect(s.interrupted).toEqual([])
      yield* TestClock.adjust(1)
      expect(s.interrupted).toEqual(["a"])
      yield* Fiber.interrupt(guard)
    }),
  )

  it.effect("a run still going is not a late commit; five late runs are all named", () => {
    const log = capture()
    return Effect.gen(function* () {
      const s = yield* setup(() => Effect.succeed(new Set()))
      const guard = yield* Effect.forkChild(Leases.guard(s.env))
      // Renewed just now: going, its lease good.
      running(s.held, "going", 10 * LEASE - 1)
      for (const id of ["a", "b", "c", "d", "e"]) s.held.finish(running(s.held, id, 0), 0)
      yield* turns
      s.clock.mono = 10 * LEASE
      yield* TestClock.adjust(LEASE / 10)
      expect(s.c.uncommitted).toBe(5)
      expect(log.warnings).toEqual([
        "tickwork durable: 5 finished run(s) not committed after 300 ms (the store does not answer; retrying): a@1000, b@1000, c@1000, d@1000, e@1000",
      ])
      yield* Fiber.interrupt(guard)
    }).pipe(Effect.provide(log.layer))
  })

  it.effect("the renewer goes on after a failed renewal", () =>
    Effect.gen(function* () {
      let fail = true
      const s = yield* setup((ids) => (fail ? Effect.fail("down") : Effect.succeed(new Set(ids))))
      const renewer = yield* Effect.forkChild(Leases.renewer(s.env))
      const a = running(s.held, "a", 0)
      yield* turns
      s.clock.mono = 90
      yield* TestClock.adjust(LEASE / 3)
      expect(s.outage).toEqual(["failed: down"])
      fail = false
      s.clock.mono = 190
      yield* TestClock.adjust(LEASE / 3)
      expect(s.outage).toEqual(["failed: down", "worked"])
      expect(a.renewedAt).toBe(190)
      yield* Fiber.interrupt(renewer)
    }),
  )

  it.effect(
    "a run that ended, or was found lost, while its renewal was sent is not lost again",
    () => {
      const log = capture()
      return Effect.gen(function* () {
        const ended: Array<Held.Held> = []
        const s = yield* setup(() =>
          Effect.sync(() => {
            const [a, b] = ended
            if (a !== undefined) s.held.finish(a, 95)
            if (b !== undefined) b.lost = true
            return new Set<string>()
          }),
        )
        const renewer = yield* Effect.forkChild(Leases.renewer(s.env))
        ended.push(running(s.held, "a", 0), running(s.held, "b", 0))
        yield* turns
        s.clock.mono = 90
        yield* TestClock.adjust(LEASE / 3)
        expect(s.renewals).toHaveLength(1)
        expect(ended.map((h) => h.lost)).toEqual([false, true])
        expect(s.interrupted).toEqual([])
        expect(log.warnings).toEqual([])
        yield* Fiber.interrupt(renewer)
      }).pipe(Effect.provide(log.layer))
    },
  )
})
