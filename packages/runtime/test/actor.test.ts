import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { TestClock } from "effect/testing"
import { Schedule, Scheduler } from "../src/index.ts"
import { anchorOffset } from "../src/internal/actor.ts"

describe("timing actor", () => {
  it.effect("wakes for an insert earlier than the slot it sleeps toward", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const seen: Array<string> = []
      const job = (label: string) => (run: { startedAt: number }) =>
        Effect.sync(() => {
          seen.push(`${label}@${run.startedAt}`)
        })
      yield* s.schedule({ schedule: Schedule.once(10_000), job: job("late") })
      yield* TestClock.adjust(1_000)
      yield* s.schedule({ schedule: Schedule.once(500), job: job("early") })
      yield* TestClock.adjust(500)
      expect(seen).toEqual(["early@1500"])
      yield* TestClock.adjust(8_500)
      expect(seen).toEqual(["early@1500", "late@10000"])
    }),
  )

  it.effect("does not wake for an insert later than its next slot, nor busy-wait", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      yield* s.schedule({ schedule: Schedule.once(60 * 60 * 1000), job: Effect.void })
      yield* TestClock.adjust(1)
      const before = (yield* s.stats).actorWakes
      for (let k = 0; k < 100; k++) {
        yield* s.schedule({ schedule: Schedule.once(2 * 60 * 60 * 1000 + k), job: Effect.void })
      }
      yield* TestClock.adjust(59 * 60 * 1000)
      // Neither the later inserts nor the passing time woke it before its slot.
      expect((yield* s.stats).actorWakes).toBe(before)
      yield* TestClock.adjust(60 * 1000)
      expect((yield* s.stats).done).toBe(1)
      expect((yield* s.stats).actorWakes - before).toBeLessThanOrEqual(2)
    }),
  )

  it.effect("sleeps longer than 2^31-1 ms in chunks and never fires early", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      const delay = 3 * (2 ** 31 - 1) + 17
      let ranAt = -1
      yield* s.schedule({
        schedule: Schedule.once(delay),
        job: (run) => Effect.sync(() => (ranAt = run.startedAt)),
      })
      yield* TestClock.adjust(delay - 1)
      expect(ranAt).toBe(-1)
      expect((yield* s.stats).actorWakes).toBeGreaterThanOrEqual(3) // one wake per chunk
      yield* TestClock.adjust(1)
      expect(ranAt).toBe(delay)
    }),
  )
})

describe("worker pool", () => {
  it.effect("never runs more jobs at once than it has workers", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 3 })
      let current = 0
      let peak = 0
      const starts: Array<number> = []
      for (let k = 0; k < 10; k++) {
        yield* s.schedule({
          schedule: Schedule.once(0),
          job: (run) =>
            Effect.gen(function* () {
              starts.push(run.startedAt)
              peak = Math.max(peak, ++current)
              expect((yield* s.stats).inFlight).toBeLessThanOrEqual(3)
              yield* Effect.sleep(100)
              current--
            }),
        })
      }
      yield* TestClock.adjust(1_000)
      expect(peak).toBe(3)
      expect(starts).toEqual([0, 0, 0, 100, 100, 100, 200, 200, 200, 300])
      expect((yield* s.stats).done).toBe(10)
    }),
  )

  it.effect("a slow job delays others only when every worker is busy", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 2 })
      const late: Record<string, number> = {}
      const job =
        (label: string, ms: number) => (run: { startedAt: number; scheduledFor: number }) =>
          Effect.andThen(
            Effect.sync(() => {
              late[label] = run.startedAt - run.scheduledFor
            }),
            Effect.sleep(ms),
          )
      yield* s.schedule({ schedule: Schedule.once(0), job: job("slow", 1_000) })
      yield* s.schedule({ schedule: Schedule.once(10), job: job("a", 5) })
      yield* s.schedule({ schedule: Schedule.once(20), job: job("b", 5) })
      yield* TestClock.adjust(100)
      expect(late).toEqual({ slow: 0, a: 0, b: 0 })
      // Now both workers are busy until 600: the third task waits for one of them.
      yield* s.schedule({ schedule: Schedule.once(0), job: job("slow2", 500) })
      yield* s.schedule({ schedule: Schedule.once(10), job: job("c", 5) })
      yield* TestClock.adjust(1_000)
      expect(late.c).toBe(500 - 10)
    }),
  )

  it.effect("overload shows as lateness, not as more fibers", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ workers: 2 })
      for (let k = 0; k < 1_000; k++) {
        yield* s.schedule({ schedule: Schedule.once(0), job: Effect.sleep(10) })
      }
      yield* TestClock.adjust(1)
      const stats = yield* s.stats
      expect(stats.inFlight).toBe(2)
      expect(stats.running).toBe(2)
      expect(stats.scheduled).toBe(998)
      yield* TestClock.adjust(10 * 500)
      expect((yield* s.stats).done).toBe(1_000)
    }),
  )
})

describe("the scheduler's time is anchored to the wall clock's fraction of a ms (SPEC §2)", () => {
  it("takes the precise reading when it lies in the whole ms the wall clock reads", () => {
    const offset = anchorOffset({
      mono: () => 250.25,
      wall: () => 10_000,
      preciseWall: () => 10_000.75,
    })
    // Anchored to Date.now() alone, the scheduler's time would be 0.75 ms behind the wall clock,
    // and an at task for 10,001 would start when the wall clock read 10,001.75.
    expect(offset).toBe(10_000.75 - 250.25)
  })

  it("anchors to the wall clock when the precise reading disagrees with it, or there is none", () => {
    // The wall clock stepped since the precise reading's origin was taken: it is not used.
    expect(
      anchorOffset({ mono: () => 250, wall: () => 10_000, preciseWall: () => 3_610_000.5 }),
    ).toBe(10_000 - 250)
    expect(anchorOffset({ mono: () => 250, wall: () => 10_000, preciseWall: () => 9_999.5 })).toBe(
      10_000 - 250,
    )
    // TestClock or a provided Clock: whole ms from the Clock.
    expect(anchorOffset({ mono: () => 250, wall: () => 10_000 })).toBe(10_000 - 250)
  })

  it("reads the monotonic clock last, so the scheduler's time is never ahead of the wall clock", () => {
    // Time passes between the readings: 0.1 ms each. The wall clock is 5,000.4 + monotonic.
    let t = 0
    /** The true monotonic time at each reading. */
    const tick = (): number => {
      t += 0.1
      return t
    }
    const offset = anchorOffset({
      mono: tick,
      wall: () => Math.floor(5_000.4 + tick()),
      preciseWall: () => 5_000.4 + tick(),
    })
    expect(offset).toBeGreaterThan(5_000.2)
    expect(offset).toBeLessThanOrEqual(5_000.4)
  })

  it.effect("applies runs that end in the same turn in the order they ended", () =>
    Effect.gen(function* () {
      const completed: Array<string> = []
      const s = yield* Scheduler.make({
        workers: 3,
        listener: { completed: (record) => completed.push(record.id) },
      })
      const a = yield* Deferred.make<void>()
      const b = yield* Deferred.make<void>()
      yield* s.schedule({ id: "A", schedule: Schedule.once(0), job: Deferred.await(a) })
      yield* s.schedule({ id: "B", schedule: Schedule.once(0), job: Deferred.await(b) })
      // C, started by the actor at 10, releases B and then A and ends, all synchronously: the
      // three runs end inside one actor turn (B, A, C), before it applies any of them.
      yield* s.schedule({
        id: "C",
        schedule: Schedule.once(10),
        job: Effect.sync(() => {
          Deferred.doneUnsafe(b, Effect.void)
          Deferred.doneUnsafe(a, Effect.void)
        }),
      })
      yield* TestClock.adjust(0)
      expect((yield* s.stats).running).toBe(2)
      yield* TestClock.adjust(10)
      expect(completed).toEqual(["B", "A", "C"])
    }),
  )
})

describe("timing actor: reads and turns", () => {
  it.effect("the ledger of an id it never had is empty", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make()
      expect(yield* s.ledger("never-scheduled")).toEqual([])
      expect(yield* s.ledger("never-scheduled", { generation: 1 })).toEqual([])
    }),
  )
})
