/**
 * SPEC §20.3 through the runtime Scheduler on TestClock: deduplication keys are the kernel's
 * decisions; here the jobs' own log shows what ran, `scheduleDeduplicated` says what happened,
 * and the ledger, `info`, `stats` and the counter show it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Exit, Metric, Option } from "effect"
import { TestClock } from "effect/testing"
import { Errors, Metrics, Schedule, Scheduler } from "../src/index.ts"

describe("deduplication keys (SPEC §20.3)", () => {
  it.effect("singleton: one run while the holder lives; the key is free once it is done", () =>
    Effect.gen(function* () {
      const heard: Array<string> = []
      const s = yield* Scheduler.make({
        name: "dedup-singleton",
        workers: 4,
        // A listener hears of created tasks only: a deduplicated request created nothing.
        listener: { accepted: (id) => heard.push(id) },
      })
      const log: Array<[string, number]> = []
      const job = (name: string) =>
        Effect.gen(function* () {
          log.push([name, yield* Clock.currentTimeMillis])
          yield* Effect.sleep(5)
        })
      const dedup = { key: "report:7" }
      const first = yield* s.scheduleDeduplicated({
        schedule: Schedule.once(10),
        job: job("a"),
        dedup,
      })
      expect(first.outcome).toBe("created")
      const second = yield* s.scheduleDeduplicated({
        schedule: Schedule.once(0),
        job: job("b"),
        dedup,
      })
      expect(second).toEqual({ id: first.id, outcome: "deduplicated" })
      // `schedule` returns the holder's id too, and creates nothing.
      expect(yield* s.schedule({ schedule: Schedule.once(0), job: job("c"), dedup })).toBe(first.id)
      // Without a key, every schedule creates its task.
      const plain = yield* s.scheduleDeduplicated({ schedule: Schedule.once(10), job: Effect.void })
      expect(plain.outcome).toBe("created")
      expect(plain.id).not.toBe(first.id)
      expect(Option.getOrThrow(yield* s.info(first.id)).dedup).toEqual({
        key: "report:7",
        mode: "singleton",
      })
      yield* TestClock.adjust(20)
      expect(log).toEqual([["a", 10]])
      expect(heard).toEqual([first.id, plain.id])
      const stats = yield* s.stats
      expect(stats.accepted).toBe(2)
      expect(stats.dedup).toEqual({ keys: 0, tracked: 1, deduplicated: 2, replaced: 0 })
      const ledger = yield* s.ledger(first.id)
      expect(ledger.filter((o) => o.kind === "deduplicated").map((o) => o.at)).toEqual([0, 0])
      const counter = yield* Metric.value(
        Metrics.forScheduler("dedup-singleton").deduplicated("deduplicated"),
      )
      expect(counter.count).toBe(2)
      // Done: the next request under the key creates a task, which runs.
      const third = yield* s.scheduleDeduplicated({
        schedule: Schedule.once(0),
        job: job("d"),
        dedup,
      })
      expect(third.outcome).toBe("created")
      expect(third.id).not.toBe(first.id)
      // Past its run's end too: the scheduler's scope then closes with nothing in flight.
      yield* TestClock.adjust(10)
      expect(log.map(([name]) => name)).toEqual(["a", "d"])
    }),
  )

  it.effect("debounce: each request moves the pending run; it runs once, with the last job", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ name: "dedup-debounce", workers: 4 })
      const log: Array<[string, number]> = []
      const job = (name: string) =>
        Effect.gen(function* () {
          log.push([name, yield* Clock.currentTimeMillis])
        })
      const dedup = { key: "sync:42", mode: "debounce" } as const
      const outcomes: Array<string> = []
      for (let n = 1; n <= 5; n++) {
        const r = yield* s.scheduleDeduplicated({
          id: "sync",
          schedule: Schedule.once(100),
          job: job(`v${n}`),
          dedup,
        })
        outcomes.push(`${r.id} ${r.outcome}`)
        yield* TestClock.adjust(60)
      }
      expect(outcomes).toEqual([
        "sync created",
        "sync replaced",
        "sync replaced",
        "sync replaced",
        "sync replaced",
      ])
      // The last request came at 240: its slot is 340, and nothing ran before it.
      expect(log).toEqual([])
      yield* TestClock.adjust(100)
      expect(log).toEqual([["v5", 340]])
      expect((yield* s.stats).dedup.replaced).toBe(4)
      const counter = yield* Metric.value(
        Metrics.forScheduler("dedup-debounce").deduplicated("replaced"),
      )
      expect(counter.count).toBe(4)
    }),
  )

  it.effect("debounce while the holder runs: a new pending task, which runs after it", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ name: "dedup-running", workers: 4 })
      const log: Array<string> = []
      const job = (name: string) =>
        Effect.gen(function* () {
          log.push(`${name}@${yield* Clock.currentTimeMillis}`)
          yield* Effect.sleep(50)
        })
      const dedup = { key: "k", mode: "debounce" } as const
      yield* s.schedule({ id: "r", schedule: Schedule.once(0), job: job("r"), dedup })
      yield* TestClock.adjust(10)
      expect(yield* s.status("r")).toBe("running")
      const next = yield* s.scheduleDeduplicated({
        id: "n",
        schedule: Schedule.once(5),
        job: job("n"),
        dedup,
      })
      expect(next).toEqual({ id: "n", outcome: "created" })
      yield* TestClock.adjust(100)
      expect(log).toEqual(["r@0", "n@15"])
    }),
  )

  it.effect("throttle: one task per window; a bad key is InvalidOption and nothing changes", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ name: "dedup-throttle", workers: 4 })
      let runs = 0
      const dedup = { key: "mail:ann", mode: "throttle", window: "1 second" } as const
      const ids: Array<string> = []
      for (let n = 0; n < 5; n++) {
        ids.push(
          yield* s.schedule({
            schedule: Schedule.once(0),
            job: Effect.sync(() => {
              runs++
            }),
            dedup,
          }),
        )
        yield* TestClock.adjust(400)
      }
      // Requests at 0, 400, 800 share the first window; 1200 opens the next, 1600 is in it.
      expect(new Set(ids).size).toBe(2)
      expect(ids[0]).toBe(ids[2])
      expect(ids[3]).toBe(ids[4])
      expect(runs).toBe(2)
      const bad = yield* Effect.exit(
        s.schedule({ schedule: Schedule.once(0), job: Effect.void, dedup: { key: "" } }),
      )
      expect(Exit.isFailure(bad)).toBe(true)
      const error = yield* Effect.flip(
        s.schedule({
          schedule: Schedule.once(0),
          job: Effect.void,
          dedup: { key: "k", mode: "throttle" },
        }),
      )
      expect(error).toBeInstanceOf(Errors.InvalidOption)
      expect((error as Errors.InvalidOption).field).toBe("dedup.window")
      expect((yield* s.stats).accepted).toBe(2)
      // ensure's ids already deduplicate: a key there is refused, and nothing is created.
      const declared = yield* Effect.flip(
        s.ensure([{ id: "d", schedule: Schedule.once(0), job: Effect.void, dedup: { key: "k" } }]),
      )
      expect(declared).toMatchObject({ _tag: "InvalidOption", field: "dedup" })
      expect(yield* s.status("d")).toBe("unknown")
    }),
  )
})
