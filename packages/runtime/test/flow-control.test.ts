/**
 * SPEC §20 through the runtime Scheduler on TestClock: concurrency and rate limits are the
 * kernel's decisions; here the jobs' own start/end log shows them held with real fibers, a
 * waiting run holds no worker, and the waits are visible in `info`, `stats` and the metrics.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Metric, Option } from "effect"
import { TestClock } from "effect/testing"
import { Errors, Metrics, Schedule, Scheduler } from "../src/index.ts"

describe("concurrency limits (SPEC §20.1)", () => {
  it.effect("a group never runs more than its limit at once, by the jobs' own log", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({
        name: "flow-concurrency",
        workers: 8,
        limits: { groups: { email: { concurrency: 2 } }, keys: { concurrency: 1 } },
      })
      let running = 0
      let most = 0
      const log: Array<[string, number]> = []
      const job = (id: string, ms: number) =>
        Effect.gen(function* () {
          const email = id.startsWith("e")
          if (email) running++
          most = Math.max(most, running)
          log.push([id, yield* Clock.currentTimeMillis])
          yield* Effect.sleep(ms)
          if (email) running--
        })
      for (let n = 0; n < 6; n++) {
        yield* s.schedule({
          id: `e${n}`,
          group: "email",
          schedule: Schedule.once(0),
          job: job(`e${n}`, 10 + n),
        })
      }
      // Not in the group: starts at once although six email runs are due before it.
      yield* s.schedule({ id: "other", schedule: Schedule.once(1), job: job("other", 1) })
      yield* TestClock.adjust(2)
      expect(log.map(([id]) => id)).toEqual(["e0", "e1", "other"])
      const info = Option.getOrThrow(yield* s.info("e2"))
      expect(info.waiting?.cause).toBe("concurrency")
      expect((yield* s.stats).waiting.concurrency).toBe(4)
      const gauge = yield* Metric.value(
        Metrics.forScheduler("flow-concurrency").waiting("concurrency"),
      )
      expect(gauge.value).toBe(4)
      yield* TestClock.adjust(200)
      expect(most).toBe(2)
      expect(log.length).toBe(7)
      // e0 ends at 10, e1 at 11: e2 and e3 start then.
      expect(log.slice(3, 5)).toEqual([
        ["e2", 10],
        ["e3", 11],
      ])
      expect((yield* s.stats).waiting.concurrency).toBe(0)
    }),
  )

  it.effect("bad limits and an undeclared group are typed errors naming the field", () =>
    Effect.gen(function* () {
      const bad = yield* Effect.flip(
        Scheduler.make({ limits: { groups: { email: { concurrency: -1 } } } }),
      )
      expect(bad).toBeInstanceOf(Errors.InvalidOption)
      expect(bad.field).toBe("limits.groups.email.concurrency")
      const s = yield* Scheduler.make({ limits: { groups: { email: { concurrency: 1 } } } })
      const e = yield* Effect.flip(
        s.schedule({ group: "sms", schedule: Schedule.once(0), job: Effect.void }),
      )
      expect(e._tag).toBe("InvalidOption")
      expect((e as Errors.InvalidOption).field).toBe("group")
    }),
  )
})

describe("rate limits (SPEC §20.2)", () => {
  it.effect("at most max starts in any window; the scheduler wakes when the window opens", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({
        limits: { groups: { api: { rate: { max: 2, per: "1 second" } } } },
      })
      const starts: Array<number> = []
      for (let n = 0; n < 5; n++) {
        yield* s.schedule({
          group: "api",
          schedule: Schedule.once(0),
          job: Effect.map(Clock.currentTimeMillis, (now) => void starts.push(now)),
        })
      }
      yield* TestClock.adjust(1)
      expect(starts).toEqual([0, 0])
      expect((yield* s.stats).waiting["rate-limited"]).toBe(3)
      expect(Option.getOrThrow(yield* s.nextSlot)).toBe(1000)
      yield* TestClock.adjust(5_000)
      expect(starts).toEqual([0, 0, 1000, 1000, 2000])
    }),
  )
})
