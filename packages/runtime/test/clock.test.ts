/**
 * SPEC §2: delays on the monotonic clock, `at` and cron on the wall clock. A wall-clock step
 * (NTP, a suspended VM) neither fires a delay early or late nor shifts an absolute time. The
 * scheduler is given a clock pair over TestClock whose wall clock can be stepped by hand.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { type Ledger, Schedule, Scheduler } from "../src/index.ts"

/** A Clock whose monotonic time is TestClock's and whose wall clock is TestClock's + `step`. */
const steppingClock = Effect.gen(function* () {
  const test = yield* Clock.Clock
  let step = 0
  const clock: Clock.Clock = Object.create(test, {
    currentTimeMillisUnsafe: { value: () => test.currentTimeMillisUnsafe() + step },
    currentTimeMillis: { value: Effect.sync(() => test.currentTimeMillisUnsafe() + step) },
  })
  return { clock, stepBy: (ms: number) => (step += ms) }
})

const starts = (ledger: ReadonlyArray<Ledger.Occurrence>) =>
  ledger.flatMap((o) => (o.kind === "ran" ? [o.startedAt] : []))

const HOUR = 3_600_000

describe("the wall clock steps (SPEC §2)", () => {
  it.effect("+1 h: delays keep their distance, an at instant keeps its calendar time", () =>
    Effect.gen(function* () {
      const { clock, stepBy } = yield* steppingClock
      const s = yield* Scheduler.make({ logFailures: false }).pipe(
        Effect.provideService(Clock.Clock, clock),
      )
      yield* s.schedule({ id: "delay", schedule: Schedule.once(10_000), job: Effect.void })
      yield* s.schedule({ id: "rate", schedule: Schedule.fixedRate(5_000), job: Effect.void })
      yield* s.schedule({ id: "at", schedule: Schedule.at(30_000), job: Effect.void })
      yield* s.schedule({ id: "far", schedule: Schedule.at(2 * HOUR), job: Effect.void })
      yield* TestClock.adjust(1_000)
      stepBy(HOUR) // the wall clock jumps an hour ahead at monotonic 1 s
      yield* TestClock.adjust(4_000) // monotonic 5 s: "rate" wakes the actor, which re-anchors
      // "at" (30 s on the calendar) has passed: it runs now, late; delays did not fire early.
      expect(starts(yield* s.ledger("at"))).toEqual([HOUR + 5_000])
      expect(yield* s.status("delay")).toBe("scheduled")
      expect(starts(yield* s.ledger("rate"))).toEqual([0, HOUR + 5_000])
      yield* TestClock.adjust(4_999)
      expect(yield* s.status("delay")).toBe("scheduled") // never early
      yield* TestClock.adjust(1)
      // Monotonic 10 s after it was scheduled, as asked: not an hour early, not an hour late.
      expect(starts(yield* s.ledger("delay"))).toEqual([HOUR + 10_000])
      expect(starts(yield* s.ledger("rate"))).toEqual([0, HOUR + 5_000, HOUR + 10_000])
      // "far" keeps its calendar time: 2 h on the wall clock, 1 h of monotonic time from now.
      expect(Option.getOrThrow(yield* s.info("far")).scheduledFor).toBe(2 * HOUR)
      expect((yield* s.stats).clockSteps).toBe(1)
    }),
  )

  it.effect("-1 h: an at instant scheduled after the step is due at its calendar time", () =>
    Effect.gen(function* () {
      const { clock, stepBy } = yield* steppingClock
      yield* TestClock.setTime(5 * HOUR)
      const s = yield* Scheduler.make({ logFailures: false }).pipe(
        Effect.provideService(Clock.Clock, clock),
      )
      yield* s.schedule({ id: "delay", schedule: Schedule.once(60_000), job: Effect.void })
      yield* s.schedule({ id: "at", schedule: Schedule.at(5 * HOUR + 30_000), job: Effect.void })
      stepBy(-HOUR) // the wall clock goes back an hour
      // A wake (this insert, due now) re-anchors: now is 4 h on the calendar.
      yield* s.schedule({ id: "now", schedule: Schedule.once(0), job: Effect.void })
      yield* TestClock.adjust(0)
      expect(starts(yield* s.ledger("now"))).toEqual([4 * HOUR])
      const soon = yield* s.schedule({
        id: "soon",
        schedule: Schedule.at(4 * HOUR + 1_000),
        job: Effect.void,
      })
      yield* TestClock.adjust(1_000)
      expect(starts(yield* s.ledger(soon))).toEqual([4 * HOUR + 1_000])
      // The delay still fires a monotonic minute after it was scheduled, not an hour late.
      yield* TestClock.adjust(59_000)
      expect(starts(yield* s.ledger("delay"))).toEqual([4 * HOUR + 60_000])
      // "at" waits for its calendar time: an hour and half a minute from here.
      expect(yield* s.status("at")).toBe("scheduled")
      yield* TestClock.adjust(HOUR - 30_000)
      expect(starts(yield* s.ledger("at"))).toEqual([5 * HOUR + 30_000])
    }),
  )
})

describe("the wall clock steps under flow control (SPEC §2.6, §20.2)", () => {
  it.effect("-1 h: a rate-limited group keeps its pace, not held for the hour", () =>
    Effect.gen(function* () {
      const { clock, stepBy } = yield* steppingClock
      yield* TestClock.setTime(5 * HOUR)
      const s = yield* Scheduler.make({
        logFailures: false,
        limits: { groups: { api: { rate: { max: 1, per: 1_000 } } } },
      }).pipe(Effect.provideService(Clock.Clock, clock))
      yield* s.schedule({ id: "a", schedule: Schedule.once(0), group: "api", job: Effect.void })
      yield* TestClock.adjust(0)
      expect(starts(yield* s.ledger("a"))).toEqual([5 * HOUR])
      stepBy(-HOUR)
      // This insert wakes the actor, which re-anchors: a started at 4 h in the new frame.
      yield* s.schedule({ id: "b", schedule: Schedule.once(0), group: "api", job: Effect.void })
      yield* TestClock.adjust(999)
      expect(yield* s.status("b")).toBe("scheduled") // the window is still closed
      yield* TestClock.adjust(1)
      expect(starts(yield* s.ledger("b"))).toEqual([4 * HOUR + 1_000])
    }),
  )
})
