/**
 * Kept results in memory (SPEC §19.3): the ledger keeps a run's value only for a task scheduled
 * with `keepResult: true`, within `maxResultBytes` of JSON; past it, or for a value JSON cannot
 * write, the run still succeeds and its record carries the typed error. Without `keepResult`
 * the ledger keeps no value, while the occurrence stream still carries it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Errors, Results } from "@tickwork/core"
import { Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import { type Ledger, Schedule, Scheduler } from "../src/index.ts"

const ranOf = (ledger: ReadonlyArray<Ledger.Occurrence>) =>
  ledger.filter((o): o is Ledger.Ran => o.kind === "ran")

describe("kept results in memory (SPEC §19.3)", () => {
  it.effect("kept with keepResult, bounded, and refused with typed errors", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({ maxResultBytes: 100 })
      const once = Schedule.once(5)
      const cyclic: Record<string, unknown> = {}
      cyclic.self = cyclic
      yield* s.schedule({
        id: "kept",
        schedule: once,
        job: Effect.succeed({ total: 3 }),
        keepResult: true,
      })
      // 98 characters: 100 bytes of JSON, exactly the bound; 99: one past it.
      yield* s.schedule({
        id: "fits",
        schedule: once,
        job: Effect.succeed("x".repeat(98)),
        keepResult: true,
      })
      yield* s.schedule({
        id: "over",
        schedule: once,
        job: Effect.succeed("x".repeat(99)),
        keepResult: true,
      })
      yield* s.schedule({
        id: "cycle",
        schedule: once,
        job: Effect.succeed(cyclic),
        keepResult: true,
      })
      yield* s.schedule({ id: "off", schedule: once, job: Effect.succeed({ total: 4 }) })
      // The stream still carries the value of a task that does not keep it.
      const seen = yield* Stream.runCollect(
        Stream.take(
          Stream.filter(s.occurrences, (o) => o.kind === "ran" && o.id === "off"),
          1,
        ),
      ).pipe(Effect.forkChild)
      yield* Effect.yieldNow
      yield* TestClock.adjust(5)

      expect(ranOf(yield* s.ledger("kept"))[0]?.outcome).toEqual({
        kind: "succeeded",
        value: { total: 3 },
      })
      expect(ranOf(yield* s.ledger("fits"))[0]?.outcome).toEqual({
        kind: "succeeded",
        value: "x".repeat(98),
      })

      const [over] = ranOf(yield* s.ledger("over"))
      expect(over?.outcome).toEqual({ kind: "succeeded" })
      expect(over?.state).toBe("done")
      expect(over?.resultError).toBeInstanceOf(Results.ResultTooLarge)
      expect(over?.resultError).toMatchObject({ taskId: "over", bytes: 101, limit: 100 })

      const [cycle] = ranOf(yield* s.ledger("cycle"))
      expect(cycle?.outcome).toEqual({ kind: "succeeded" })
      expect(cycle?.resultError).toBeInstanceOf(Results.ResultEncodeError)

      const [off] = ranOf(yield* s.ledger("off"))
      expect(off?.outcome).toEqual({ kind: "succeeded" })
      expect(off?.resultError).toBeUndefined()
      const streamed = [...(yield* Fiber.join(seen))]
      expect((streamed[0] as Ledger.Ran).outcome).toEqual({
        kind: "succeeded",
        value: { total: 4 },
      })
      expect((yield* s.stats).done).toBe(5)
    }),
  )

  it.effect("a task with keepResult keeps it when its job is updated", () =>
    Effect.gen(function* () {
      const s = yield* Scheduler.make({})
      yield* s.schedule({
        id: "r",
        schedule: Schedule.fixedRate(10),
        job: Effect.succeed(1),
        keepResult: true,
      })
      yield* TestClock.adjust(0)
      expect(yield* s.update("r", { job: Effect.succeed(2) })).toBe(true)
      yield* TestClock.adjust(10)
      expect(ranOf(yield* s.ledger("r")).map((r) => r.outcome)).toEqual([
        { kind: "succeeded", value: 1 },
        { kind: "succeeded", value: 2 },
      ])
    }),
  )

  it.effect(
    "keepResult and maxResultBytes are checked: typed errors naming them, nothing scheduled",
    () =>
      Effect.gen(function* () {
        const s = yield* Scheduler.make({})
        const e = yield* Effect.flip(
          s.schedule({
            id: "k",
            schedule: Schedule.once(1),
            job: Effect.void,
            keepResult: "yes" as never,
          }),
        )
        expect(e).toBeInstanceOf(Errors.InvalidOption)
        expect(e).toMatchObject({ field: "keepResult", value: "yes" })
        expect(yield* s.status("k")).toBe("unknown")
        for (const bad of [0, 8_388_609]) {
          const m = yield* Effect.flip(Scheduler.make({ maxResultBytes: bad }))
          expect(m).toMatchObject({ _tag: "InvalidOption", field: "maxResultBytes", value: bad })
        }
      }),
  )
})
